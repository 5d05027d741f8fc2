"""The mobile suite: templates on a phone (`kind: mobile`): the bundled apps by touch, and the phone shell's own rules."""
