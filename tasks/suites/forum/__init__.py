"""The forum suite: templates over the bundled forum app (tasks/apps/forum)."""
