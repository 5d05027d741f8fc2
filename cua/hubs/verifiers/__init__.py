"""cua tasks as a verifiers environment (Prime Intellect's `verifiers` 0.4, its `v1` stack).

`environment` holds the taskset and the multi-turn `Env` and imports verifiers, which lives in
a venv of its own (scripts/setup.sh, scripts/requirements-verifiers.txt); verifiers finds them
through the plugin module `cua_verifiers` (integrations/verifiers). `replies` parses a model's
reply into a cua action and imports without verifiers. Nothing else in cua imports either."""
