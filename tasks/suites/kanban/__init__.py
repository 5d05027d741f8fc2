"""The kanban suite: templates over the bundled kanban app (tasks/apps/kanban); oracles.py drags precisely."""
