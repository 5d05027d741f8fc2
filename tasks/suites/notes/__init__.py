"""The notes suite: templates over the bundled notes app (tasks/apps/notes)."""
