"""The calendar suite: templates over the bundled calendar app (tasks/apps/calendar)."""
