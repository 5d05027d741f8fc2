"""Online RL on cua sandboxes: a Gymnasium environment per task (needs the `rl` extra)."""
