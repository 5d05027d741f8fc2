"""The user's files from an episode's start to its end: a manifest diff, and which of its
changes a task allows.

Two manifests (`cua.state.FilesQuery`, read after reset and at the end) give what the
episode did to the user's files: `added`, `removed`, `changed` (content, size or kind),
and `moved` (a removed path whose exact content reappears under an added one). A file
task allows changes by glob (`JudgeSpec.expected_files`): `*` and `?` stay within one
path segment, `**` spans any number of them (`out/**` also names `out` itself). Any other
change is a violation, so a task judged by its target alone still sees the file deleted
beside it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["allowed_by", "file_violations", "files_diff", "glob_problem"]


def files_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """{added, removed, changed: sorted paths, moved: [{from, to}]} between two manifests."""
    old, new = before.get("entries") or {}, after.get("entries") or {}
    added = sorted(p for p in new if p not in old)
    removed = sorted(p for p in old if p not in new)
    changed = sorted(p for p in new if p in old and new[p] != old[p])
    by_content: dict[str, list[str]] = {}
    for path in added:
        digest = new[path].get("sha256")
        if digest:
            by_content.setdefault(digest, []).append(path)
    moved = []
    for path in removed:
        targets = by_content.get(old[path].get("sha256") or "")
        if targets:
            moved.append({"from": path, "to": targets.pop(0)})
    return {"added": added, "removed": removed, "changed": changed, "moved": moved}


def glob_problem(pattern: str) -> str | None:
    """Why a glob cannot be an allowance, or None: it must name files, not every file."""
    if not pattern or pattern.startswith("/") or ".." in pattern.split("/"):
        return "must be a path relative to the home folder"
    if all(part in ("*", "**") for part in pattern.split("/")):
        return "allows every file: name the files the task may change"
    if all("*" in part or "?" in part for part in pattern.split("/")):
        return "allows files in any folder (every part a wildcard): name a folder or a file"
    return None


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out += "(?:/.*)?"
            i += 3
        elif pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
        elif pattern.startswith("**", i):
            out += ".*"
            i += 2
        elif pattern[i] == "*":
            out += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            out += "[^/]"
            i += 1
        else:
            out += re.escape(pattern[i])
            i += 1
    return re.compile(out)


def allowed_by(path: str, globs: list[str]) -> bool:
    return any(_regex(g).fullmatch(path) for g in globs)


def file_violations(before: dict[str, Any], after: dict[str, Any], globs: list[str]) -> list[str]:
    """Each change of a user file that no glob allows, said as a person would."""
    if before.get("truncated") or after.get("truncated"):
        return ["too many files in the home folder to see every change (the manifest was cut short)"]
    diff = files_diff(before, after)
    out: list[str] = []
    moved = {m["from"]: m["to"] for m in diff["moved"]}
    arrived = set(moved.values())
    for src, dst in moved.items():
        if not (allowed_by(src, globs) and allowed_by(dst, globs)):
            out.append(f"file {src} moved to {dst}")
    out += [f"file {p} removed" for p in diff["removed"] if p not in moved and not allowed_by(p, globs)]
    out += [f"file {p} created" for p in diff["added"] if p not in arrived and not allowed_by(p, globs)]
    out += [f"file {p} changed" for p in diff["changed"] if not allowed_by(p, globs)]
    return out
