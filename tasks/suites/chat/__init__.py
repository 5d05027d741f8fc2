"""The chat suite: templates over the bundled team messenger (tasks/apps/chat)."""
