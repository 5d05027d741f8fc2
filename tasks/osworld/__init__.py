"""OSWorld-format tasks on cua's VMs (see template.py): `load_osworld(path)` gives
templates for `cua tasks list|check` and `cua eval`."""

from cua.tasks.osworld.template import OSWorldJudge, OSWorldTemplate, load_osworld, unsupported_names

__all__ = ["OSWorldJudge", "OSWorldTemplate", "load_osworld", "unsupported_names"]
