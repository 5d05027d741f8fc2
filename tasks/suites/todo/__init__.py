"""The todo suite: templates over the bundled todo app (tasks/apps/todo)."""
