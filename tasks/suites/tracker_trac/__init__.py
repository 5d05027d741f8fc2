"""Trac suite (tracker_trac.yaml): seeded parameters in gen.py."""
