"""cua: sandboxes for browser and computer-use agents."""

from typing import Any

from cua.actions import Action
from cua.observation import Observation, ObserveOptions, Size

__version__ = "0.1.0"
__all__ = ["Action", "Observation", "ObserveOptions", "Size", "connect", "__version__"]


def __getattr__(name: str) -> Any:  # the client pulls in websockets; load it only when asked for
    if name == "connect":
        from cua.client import connect

        return connect
    raise AttributeError(f"module 'cua' has no attribute {name!r}")
