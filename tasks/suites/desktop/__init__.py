"""The desktop suite: files, terminal, text editor, settings in config files, and tasks
across apps, in the desktop container sandbox (or a VM running the same guest agent)."""
