"""The travel suite: templates over the bundled flight-booking app (tasks/apps/travel)."""
