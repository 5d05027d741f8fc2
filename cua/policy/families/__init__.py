"""Model families by name: each builds its prompt and parses its model's output.

The registry maps the public family names to their classes; `get_family` builds one
with its options (e.g. ``min_pixels``/``max_pixels`` for Qwen-style families).
"""

from __future__ import annotations

from typing import Any

from cua.policy.families.androidworld import AndroidWorld
from cua.policy.families.anthropic import Anthropic
from cua.policy.families.base import Family, FamilyParseError, ParseContext, Parsed, PreparedImage, Turn
from cua.policy.families.openai_cua import OpenAICUA
from cua.policy.families.osworld import OSWorld
from cua.policy.families.qwen3vl import Qwen3VL
from cua.policy.families.qwen25vl import Qwen25VL
from cua.policy.families.qwen_mobile import Qwen3VLMobile, Qwen25VLMobile
from cua.policy.families.uitars import UITars15
from cua.policy.families.uitars_mobile import UITars15Mobile

__all__ = [
    "FAMILIES",
    "Family",
    "FamilyParseError",
    "ParseContext",
    "Parsed",
    "PreparedImage",
    "Turn",
    "get_family",
]

FAMILIES: dict[str, type[Family]] = {
    cls.name: cls for cls in (Qwen25VL, Qwen3VL, UITars15, OpenAICUA, Anthropic, OSWorld, Qwen25VLMobile, Qwen3VLMobile,
                             UITars15Mobile, AndroidWorld)
}


def get_family(name: str, **options: Any) -> Family:
    """The family called `name`; raises ValueError naming the known ones otherwise."""
    try:
        cls = FAMILIES[name]
    except KeyError:
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None
    return cls(**options)
