"""The mail suite: templates over the bundled mail app (tasks/apps/mail)."""
