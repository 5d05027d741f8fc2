"""What a template's oracle may do to be admitted: act through the UI alone.

Judge QA proves a judge against the oracle's end state; an oracle that writes that state
some other way (a python oracle, a `javascript:` or `data:` page posting a forged request)
proves nothing about the task a user does in the page, so such a template is refused
before QA runs. Applies to every candidate, generated or proposed by a model.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["UI_STEPS", "ui_problems"]

#: The oracle steps a proposal may use: what a user does in the page.
UI_STEPS = frozenset({"click", "fill", "select", "wait_for", "press", "type_text", "scroll_to", "done", "goto"})


#: a path on the app's own origin, or on a bundled app of a workflow sandbox (app:NAME/path): never another
#: scheme or host
_OWN_PAGE = re.compile(r"^(app:[a-z][a-z0-9_]*)?/(?!/)")


def ui_problems(template: dict[str, Any]) -> list[str]:
    """Why a template's oracle or near miss does not act through the UI alone (empty: it does)."""
    out: list[str] = []
    for part in ("oracle", "near_miss"):
        steps = template.get(part)
        if steps is None:
            continue
        if not isinstance(steps, list):
            out.append(f"{part}: a list of UI steps is required (no python oracle)")
            continue
        for k, step in enumerate(steps):
            keys = set(step) if isinstance(step, dict) else {str(step)}
            if not keys <= UI_STEPS:
                out.append(f"{part}[{k}]: {sorted(keys - UI_STEPS)} is not a UI step")
            target = step.get("goto") if isinstance(step, dict) else None
            if target is not None and not (isinstance(target, str) and _OWN_PAGE.match(target)):
                out.append(f"{part}[{k}]: goto {target!r} leaves the app's own pages (only a path like /lists/1, "
                           "or app:NAME/path in a workflow)")
    if template.get("setup") or template.get("generator"):
        out.append("setup and generator are not proposed: a proposal is data, not code")
    return out
