"""The miniwob suite: MiniWoB++ tasks imported through tasks/miniwob (generated YAML)."""
