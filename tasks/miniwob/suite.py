"""Parameter generator shared by the miniwob templates."""

from __future__ import annotations

import random
import sys
from typing import Any


def episode_params(app: Any, rng: random.Random) -> dict[str, Any]:
    """The service's interpreter (the sandbox runs it with this Python, which has cua and
    miniwob installed) and MiniWoB's episode seed, drawn from the variant's rng."""
    return {"python": sys.executable, "wob_seed": rng.randrange(2**31)}
