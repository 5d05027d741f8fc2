"""The maps suite: templates over the bundled maps-and-places app (tasks/apps/maps)."""
