"""The social suite: templates over the bundled social feed (tasks/apps/social, Murmur)."""
