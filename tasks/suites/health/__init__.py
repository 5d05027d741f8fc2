"""The health suite: templates over the bundled patient-and-insurance portal (tasks/apps/health)."""
