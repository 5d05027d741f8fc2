"""The drive suite: templates over the bundled cloud file drive (tasks/apps/drive)."""
