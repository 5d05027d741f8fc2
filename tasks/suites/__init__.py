"""Bundled task suites: one folder of YAML task files per suite (see tasks/README.md).

A suite folder may also hold Python modules for its generator and oracle functions
(`cua.tasks.suites.<suite>.<module>:<function>`)."""
