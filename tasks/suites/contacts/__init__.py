"""The contacts suite: templates over the bundled CRM app (tasks/apps/contacts)."""
