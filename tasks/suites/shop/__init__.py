"""The shop suite: templates over the bundled shop app (tasks/apps/shop)."""
