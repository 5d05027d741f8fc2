"""What the guest agent's modules share about the guest itself: optional modules probed
once, and helper programs (xdotool, xclip, wmctrl) run with a bound on their time."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

try:
    from .faults import ActionFault, UnsupportedFault
except ImportError:  # run as a script from this folder (inside a VM image)
    from faults import ActionFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]

__all__ = ["TOOL_TIMEOUT", "optional", "run_tool"]

#: Bound on the time any helper program (xdotool, xclip, wmctrl) may take.
TOOL_TIMEOUT = 10.0


def optional(name: str) -> Any:
    try:
        return __import__(name, fromlist=["_"])
    except Exception:  # any import failure (missing, broken, no DISPLAY) means "not available"
        return None



def run_tool(argv: list[str], *, env: dict[str, str] | None = None, stdin: bytes | None = None,
              timeout: float = TOOL_TIMEOUT) -> subprocess.CompletedProcess[bytes]:
    if shutil.which(argv[0]) is None:
        raise UnsupportedFault(f"{argv[0]} is not installed in the guest", reason="missing_tool")
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ActionFault(f"{argv[0]} did not finish within {timeout:g} s", reason="timeout") from exc
