"""The workflows suite: long tasks across several bundled apps, scored by ordered checkpoints."""
