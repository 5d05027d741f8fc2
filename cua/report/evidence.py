"""A verdict's evidence as sentences a person reads: what was checked, whether it held, what
was read and what was expected, with the comparators' terse details (`not text: NoneType`)
said in words.

It reads only the evidence as a trajectory stores it (`cua.task.Evidence` as JSON: check,
getter, observed, expected, passed, detail), never the judge, so it renders runs of any
version. Subgoals come from the judge as leaves named `subgoal N: ...`; a subgoal counts as
reached as the judge counts it: when it holds, or when a later one does (they are
milestones in order). Several leaves under one subgoal are ways to see the same milestone
(the kit's suites write them as `any:` alternatives): one that held reaches it, and the
others are shown as not needed rather than as failures.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

__all__ = ["evidence_lines", "value_text"]

_SUBGOAL = re.compile(r"^subgoal (\d+): (.*)$", re.S)
_NOT_KIND = re.compile(r"^(?:not|no) (text or a list|text|a list|a number|an address|length|a date|a time): (\w+)$")
_NORMALISED = re.compile(r"^normalised (.+) != (.+)$", re.S)
_TYPES = {"NoneType": "nothing (no value was there)", "str": "text", "int": "a number", "float": "a number",
          "bool": "true or false", "list": "a list", "dict": "an object"}
_MAX = 160


def _clip(text: str) -> str:
    return text if len(text) <= _MAX else text[: _MAX - 1] + "…"


def value_text(value: Any) -> str:
    """A read or expected value in words: text quoted, nothing as nothing, lists counted."""
    if value is None:
        return "nothing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return f"“{_clip(value)}”"
    if isinstance(value, list):
        if not value:
            return "an empty list"
        return _clip(f"a list of {len(value)}: " + ", ".join(value_text(v) for v in value[:5])
                     + (", …" if len(value) > 5 else ""))
    return _clip(json.dumps(value, ensure_ascii=False, default=str))


def _expected_text(expected: Any) -> str:
    """An expectation (`expected_of` a comparator spec) in words."""
    if not isinstance(expected, dict) or "op" not in expected:
        return value_text(expected)
    op = expected.get("op")
    value = expected.get("value")
    if op == "regex":
        return f"text matching /{expected.get('pattern')}/"
    if op == "text":
        return f"the text {value_text(value)}"
    if op == "contains":
        return f"something containing {value_text(value)}"
    if op == "number":
        tolerance = expected.get("abs") or expected.get("rel")
        return f"the number {value_text(value)}" + (f" (within {tolerance:g})" if tolerance else "")
    if op == "length":
        bounds = [f"at least {expected['min']}" if "min" in expected else "",
                  f"at most {expected['max']}" if "max" in expected else "",
                  f"exactly {expected['value']}" if "value" in expected else ""]
        return " and ".join(b for b in bounds if b) + " item(s)"
    rest = {k: v for k, v in expected.items() if k != "op"}
    return f"{op} {value_text(rest)}"


def _detail_text(detail: str) -> str:
    """A comparator's detail in words (it stays as written when no rule knows it)."""
    match = _NOT_KIND.match(detail)
    if match:
        kind, found = match.groups()
        return f"it was {_TYPES.get(found, found)}, where {kind} was expected"
    match = _NORMALISED.match(detail)
    if match:
        return f"once case, spaces and punctuation are set aside, {match.group(1)} still differs from {match.group(2)}"
    return detail


def _reading(e: dict[str, Any]) -> str:
    """What was read and what was expected: `read “Milk” (app_state); expected “Buy milk”`."""
    getter, observed = str(e.get("getter") or ""), e.get("observed")
    detail = str(e.get("detail") or "")
    where = f" ({getter})" if getter else ""
    match = _NOT_KIND.match(detail)
    if observed is None and (not detail or (match is not None and match.group(2) == "NoneType")):
        read, detail = f"nothing was there to read{where}", ""
    else:
        read = f"read {value_text(observed)}{where}"
    return f"{read}; expected {_expected_text(e.get('expected'))}" + (f" ({_detail_text(detail)})" if detail else "")


def _sentence(e: dict[str, Any], held: bool, *, needed: bool = True) -> str:
    check = str(e.get("check") or "check")
    getter = str(e.get("getter") or "")
    observed, expected, detail = e.get("observed"), e.get("expected"), str(e.get("detail") or "")
    if getter == "done_status":
        said = f"the agent said done with status “{observed}”" if observed else "the agent never said done"
        return f"{check}: {'yes' if held else 'no'}; {said}, and {value_text(expected)} was needed."
    if observed is None and detail and not _NOT_KIND.match(detail):  # the getter could not read it
        return f"{check}: no; it could not be read ({getter}): {detail}."
    if held:
        return f"{check}: yes; read {value_text(observed)}" + (f" ({getter})" if getter else "") + \
            f", as expected ({_expected_text(expected)})."
    if not needed:
        return f"{check}: not needed, another check of this subgoal held; {_reading(e)}."
    return f"{check}: no; {_reading(e)}."


def evidence_lines(evidence: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per piece of evidence, in the judge's order: `check` (as the judge named it),
    `subgoal` (its number, or None), `held` (shown as yes/no: for a subgoal, whether the judge
    counts it reached), `needed` (False for an alternative of a subgoal another leaf reached),
    `sentence`, and the raw `getter`, `expected`, `observed`."""
    items = [dict(e) for e in evidence]
    groups: dict[int, list[dict[str, Any]]] = {}
    for e in items:
        match = _SUBGOAL.match(str(e.get("check") or ""))
        if match:
            groups.setdefault(int(match.group(1)), []).append(e)
    own = {n: any(bool(e.get("passed")) for e in leaves) for n, leaves in groups.items()}
    reached = max((n for n, ok in own.items() if ok), default=0)
    out: list[dict[str, Any]] = []
    for e in items:
        match = _SUBGOAL.match(str(e.get("check") or ""))
        passed = bool(e.get("passed"))
        base = {"check": e.get("check"), "getter": e.get("getter"), "expected": e.get("expected"),
                "observed": e.get("observed")}
        if match is None:
            out.append({**base, "subgoal": None, "held": passed, "needed": True,
                        "sentence": _sentence(e, passed)})
            continue
        n, name = int(match.group(1)), match.group(2)
        leaf = {**e, "check": f"Subgoal {n}, {name}"}
        if passed:
            sentence, needed = _sentence(leaf, True), True
        elif own[n]:
            sentence, needed = _sentence(leaf, False, needed=False), False
        elif n <= reached:
            sentence, needed = (f"Subgoal {n}, {name}: reached, since a later subgoal ({reached}) was reached; "
                                f"the final state no longer shows it ({_reading(leaf)})."), True
        else:
            sentence, needed = _sentence(leaf, False), True
        out.append({**base, "subgoal": n, "held": n <= reached, "needed": needed, "sentence": sentence})
    return out
