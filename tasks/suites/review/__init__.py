"""The review suite: templates over the bundled code-review forge (tasks/apps/review)."""
