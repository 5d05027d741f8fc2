"""What changed between two observations of a step: the accessibility tree and the judge's state.

**Accessibility-tree diff** (`axtree_diff`), from the recorded trees of frame t and t+1.
A node is known by its role, its name and its path, and `n`, its place among the earlier
nodes of the same role, name and path (two identical rows are told apart by order only):

- `path`: the roles and names of its ancestors, `role 'name' > role 'name'`, in a nested
  tree (a desktop's AT-SPI tree); "" in a flat one (a browser's tree is a flat list in
  document order, so its nodes have no ancestors to name);
- `added`: nodes of t+1 with no node of that identity in t; `removed`: the other way;
- `changed`: nodes in both whose `value` or `states` (checked, expanded, focused, ...)
  differ, with both;
- boxes are not compared: a layout shift or a scroll moves boxes without changing what the
  page says, and the frames show it.

Each listed node is `{"role", "name", "path", "n", "value"?, "states"?}`; a changed one
also has `"before"` and `"after"` (`{"value", "states"}`). `null` where a frame has no tree.

**Judge-state diff** (`state_diff`), from the judge's queries read after each step of a
replay (`cua export --execute`): one entry per query whose answer changed,
`{"query": the query (its fields that are set), "change": ...}`, where a change is,
recursively: for two objects, `{"changed": {key: change}, "added": {key: value},
"removed": {key: value}}` (empty parts left out); for two lists, `{"added": [...],
"removed": [...]}` (items compared whole, as multisets), or `{"reordered": true}` when
only their order changed; otherwise `{"before": ..., "after": ...}`. A failed read is
`{"error": reason}`, and a read that failed on one side only is a before/after. An empty
list: the step changed nothing the judge reads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from cua.state import StateResult

__all__ = ["axtree_diff", "state_diff"]

Node = dict[str, Any]


def _label(node: Node) -> str:
    return f"{node.get('role', '')} {str(node.get('name', ''))!r}"


def _walk(tree: list[Node], path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Node]]:
    for node in tree:
        if not isinstance(node, dict):
            continue
        yield path, node
        children = node.get("children")
        if isinstance(children, list):
            yield from _walk(children, (*path, _label(node)))


def _index(tree: list[Node] | None) -> dict[tuple[str, str, str, int], Node]:
    """Each node under its identity: (role, name, path, n)."""
    seen: Counter[tuple[str, str, str]] = Counter()
    out: dict[tuple[str, str, str, int], Node] = {}
    for path, node in _walk(tree or []):
        base = (str(node.get("role", "")), str(node.get("name", "")), " > ".join(path))
        out[(*base, seen[base])] = node
        seen[base] += 1
    return out


def _facts(node: Node) -> dict[str, Any]:
    return {"value": node.get("value"), "states": sorted(node.get("states") or [])}


def _shown(key: tuple[str, str, str, int], node: Node) -> Node:
    role, name, path, n = key
    out: Node = {"role": role, "name": name, "path": path, "n": n}
    if node.get("value") not in (None, ""):
        out["value"] = node["value"]
    if node.get("states"):
        out["states"] = list(node["states"])
    return out


def axtree_diff(before: list[Node] | None, after: list[Node] | None) -> dict[str, list[Node]] | None:
    """The accessibility tree's changes from `before` to `after` (module docstring); None
    when either tree is missing."""
    if before is None or after is None:
        return None
    old, new = _index(before), _index(after)
    added = [_shown(k, n) for k, n in new.items() if k not in old]
    removed = [_shown(k, n) for k, n in old.items() if k not in new]
    changed = []
    for key, node in new.items():
        was = old.get(key)
        if was is not None and _facts(was) != _facts(node):
            changed.append({**_shown(key, node), "before": _facts(was), "after": _facts(node)})
    return {"added": added, "removed": removed, "changed": changed}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _change(before: Any, after: Any) -> dict[str, Any] | None:
    if _canonical(before) == _canonical(after):
        return None
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        changed = {k: c for k in before if k in after and (c := _change(before[k], after[k])) is not None}
        added = {k: after[k] for k in after if k not in before}
        removed = {k: before[k] for k in before if k not in after}
        return {name: part for name, part in (("changed", changed), ("added", added), ("removed", removed)) if part}
    if isinstance(before, list) and isinstance(after, list):
        old, new = Counter(map(_canonical, before)), Counter(map(_canonical, after))
        if old == new:
            return {"reordered": True}
        return {"added": [json.loads(k) for k in (new - old).elements()],
                "removed": [json.loads(k) for k in (old - new).elements()]}
    return {"before": before, "after": after}


def _value(result: StateResult | None) -> Any:
    if result is None:
        return {"error": "not read"}
    return result.value if result.ok else {"error": result.error or "failed"}


def state_diff(before: Mapping[str, StateResult], after: Mapping[str, StateResult]) -> list[dict[str, Any]]:
    """The judge's reads that changed from `before` to `after`, keyed as `cua.task.query_key`
    keys them (module docstring)."""
    out = []
    for key in sorted(set(before) | set(after)):
        old, new = before.get(key), after.get(key)
        was, now = _value(old), _value(new)
        if (old is not None and old.ok) != (new is not None and new.ok):  # a read that failed on one side only
            change = None if _canonical(was) == _canonical(now) else {"before": was, "after": now}
        else:
            change = _change(was, now)
        if change is not None:
            query = {k: v for k, v in json.loads(key).items() if v is not None}
            out.append({"query": query, "change": change})
    return out
