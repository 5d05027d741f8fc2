"""Test."""
