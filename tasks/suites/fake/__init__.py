"""The fake suite: templates over the fake kind's form (cua.sandboxes.fake), for fast tests."""
