"""The settings suite: templates over the bundled admin console (tasks/apps/settings)."""
