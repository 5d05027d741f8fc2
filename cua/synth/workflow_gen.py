"""Chains across two apps: one app's operation, then another's, in one workflow sandbox.

A workflow sandbox runs several bundled apps in one browser (tasks/suites/workflows:
`sandbox.apps`, `goto: app:NAME/path`, `judge.apps`). This generator composes two writing
operations of two apps' generators (edit, chain, move, delete, add, pin: an answer can only
end an episode, so questions are left out) into one template: the instruction says both, the
params of the second app draw from its own database (`app:`) under names of their own, its
checks read its service, its changes are allowed under `judge.apps`, and the subgoals are
ordered checkpoints (`checkpoints: true`). The near miss does the first operation and the
second one's near miss.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import Any

from cua.synth import contacts_gen, kanban_gen, notes_gen
from cua.synth.schema import AppSchema, Operation

__all__ = ["GENERATOR_VERSION", "SCHEMA", "compose"]

GENERATOR_VERSION = 1
#: the apps composed, and the path each one's operations start from
_APPS: dict[str, tuple[AppSchema, str]] = {"contacts": (contacts_gen.SCHEMA, "/contacts"),
                                          "notes": (notes_gen.SCHEMA, "/"), "kanban": (kanban_gen.SCHEMA, "/")}
#: the writing operations composed, per app (a few each: every pair of apps gets each pair of them)
_OPS: dict[str, tuple[str, ...]] = {"contacts": ("edit:title", "edit:status", "edit:email+phone", "delete"),
                                    "notes": ("edit:title", "edit:folder", "pin", "delete"),
                                    "kanban": ("edit:due", "edit:column", "add", "edit:title+due")}
_READS_STATE = ("sql", "app_state")


def _rename(body: Any, names: Sequence[str], prefix: str) -> Any:
    """The body with each param `name` referred to as `prefix + name` ({name.x}, {name})."""
    text = json.dumps(body)
    for name in names:
        text = re.sub(r"\{" + re.escape(name) + r"([.}])", "{" + prefix + name + r"\1", text)
    return json.loads(text)


def _served(items: list[dict[str, Any]], app: str) -> list[dict[str, Any]]:
    """Checks (or any-groups of them) that read an app's state, pointed at that app's service."""
    out = []
    for item in copy.deepcopy(items):
        for check in item.get("any", [item]):
            get = check.get("get", {})
            if get.get("kind") in _READS_STATE:
                get["service"] = app
        out.append(item)
    return out


def _lower(text: str) -> str:
    return text[:1].lower() + text[1:]


def compose(first: str, a_op: str, second: str, b_op: str) -> Operation:
    """`first`'s operation a_op, then `second`'s b_op, as one workflow template."""
    a_schema, a_start = _APPS[first]
    b_schema, b_start = _APPS[second]

    def op(scope: str) -> dict[str, Any] | None:
        a, b = a_schema.operations[a_op](""), b_schema.operations[b_op]("")
        if a is None or b is None:
            return None
        prefix = f"{second}_"
        b = _rename(b, list(b["params"]), prefix)
        b_params = {prefix + k: ({**v, "app": second} if v.get("type") == "rows" else v) for k, v in b["params"].items()}
        a_judge, b_judge = a["judge"], b["judge"]
        b_apps: dict[str, Any] = {"expected_changes": b_judge.get("expected_changes", [])}
        if b_judge.get("unjudged"):
            b_apps["unjudged"] = b_judge["unjudged"]
        judge: dict[str, Any] = {
            "checkpoints": True,
            "subgoals": [*a_judge.get("subgoals", []), *a_judge["checks"], *_served(b_judge["checks"], second)],
            "checks": [*a_judge["checks"], *_served(b_judge["checks"], second)],
            "expected_changes": a_judge.get("expected_changes", []),
            "apps": {second: b_apps}}
        if a_judge.get("unjudged"):
            judge["unjudged"] = a_judge["unjudged"]
        into = [{"goto": f"app:{first}{a_start}"}]
        then = [{"goto": f"app:{second}{b_start}"}]
        return {
            "phrasings": [f"{pa} Then, in {second}: {_lower(pb)}"
                          for pa, pb in zip(a["phrasings"], b["phrasings"])],
            "sandbox": {"kind": "browser", "app": first, "apps": [second]},
            "params": {**a["params"], **b_params},
            "judge": judge,
            "oracle": [*into, *a["oracle"], *then, *b["oracle"]],
            "near_miss": [*into, *a["oracle"], *then, *b["near_miss"]],
            "tags": {"apps": [first, second], "skills": sorted({*a["tags"]["skills"], *b["tags"]["skills"]}),
                     "tier": 4},
        }
    return op


OPERATIONS: dict[str, Operation] = {
    f"{x}.{a}>{y}.{b}": compose(x, a, y, b)
    for x in _APPS for y in _APPS if x != y for a in _OPS[x] for b in _OPS[y]}

SCHEMA = AppSchema("workflow", "synth_workflows", GENERATOR_VERSION, (("any", ""),), OPERATIONS,
                   frozenset(k for k in OPERATIONS if k.startswith("kanban.")), start_url="about:apps", max_steps=60,
                   phrasings=2)
