"""Placeholder substitution for task templates: `{name}`, `{name.field}`, `{name.0.field}`.

Only placeholders whose first segment is an identifier are replaced, so regexes such
as `\\d{3}` pass through untouched; `{{` and `}}` give literal braces. A string that is
exactly one placeholder keeps the value's type (an int stays an int), so a judge can
compare `value: "{todo.id}"` with an integer column. Nothing is evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["RenderError", "lookup", "render", "render_str"]

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_-]+)*)\}")


class RenderError(KeyError):
    """A placeholder names a parameter (or field) that does not exist."""

    def __str__(self) -> str:
        return str(self.args[0])


def lookup(params: Mapping[str, Any], dotted: str) -> Any:
    parts = dotted.split(".")
    if parts[0] not in params:
        raise RenderError(f"unknown parameter {parts[0]!r} in {{{dotted}}}; known: {', '.join(sorted(params)) or 'none'}")
    value: Any = params[parts[0]]
    for part in parts[1:]:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and re.fullmatch(r"-?\d+", part) and -len(value) <= int(part) < len(value):
            value = value[int(part)]
        else:
            raise RenderError(f"{{{dotted}}}: {part!r} is not in {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_text(value: Any, dotted: str) -> str:
    if isinstance(value, Mapping):
        if "value" in value:
            return str(value["value"])
        raise RenderError(f"{{{dotted}}} is a row ({_short(value)}); name a field, e.g. {{{dotted}.{next(iter(value), 'id')}}}")
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def render_str(text: str, params: Mapping[str, Any]) -> Any:
    whole = _PLACEHOLDER.fullmatch(text)
    if whole and whole.group(1):
        value = lookup(params, whole.group(1))
        if isinstance(value, Mapping) and "value" in value:
            return value["value"]
        return value

    def sub(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        return _as_text(lookup(params, match.group(1)), match.group(1))

    return _PLACEHOLDER.sub(sub, text)


def render(data: Any, params: Mapping[str, Any]) -> Any:
    """Fill every string in a JSON-like structure (dict keys too)."""
    if isinstance(data, str):
        return render_str(data, params)
    if isinstance(data, list):
        return [render(item, params) for item in data]
    if isinstance(data, dict):
        return {(str(render_str(k, params)) if isinstance(k, str) else k): render(v, params) for k, v in data.items()}
    return data
