"""The hr suite: templates over the bundled HR-and-expenses portal (tasks/apps/hr)."""
