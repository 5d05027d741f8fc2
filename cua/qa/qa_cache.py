"""Judge QA's verdict cache: a template's clean report is reused only while nothing that
decides it has changed, by digest.

Judge QA runs every template's oracle, near miss and probes in real sandboxes, which takes
most of CI's time; most commits change none of what a given template's verdict rests on. A
template's key is a digest of:

- the template as loaded (its definition after defaults) and the file it came from;
- its suite's folder but the task files (generators, suite-local oracles, data);
- its app: the bundled app's own folder, where the template runs one (a real product's own
  folder and the products' framework too);
- the judge code: `judges/`, the task framework (`tasks/*.py`, the app framework, MiniWoB's
  environments and oracles, the OSWorld adapter), the episode layer, `cua/task.py` and judge QA
  itself (`cua/qa/`);
- the sandbox kind the template runs on (`sandboxes/<kind>/`, and the guest agent for desktops
  and VMs): it reads the state the judge sees (page reads, navigation history, file manifests)
  and carries QA's probes out;
- what the check was asked: seeds, isolation, sandbox kind.

Only a report with no failure is stored: a failing template runs again every time, so a
flaky pass is never frozen. `CUA_QA_CACHE=off` (or `cua tasks check
--no-cache`) runs everything; the cache lives in `$CUA_QA_CACHE_DIR`, else
`$XDG_CACHE_HOME/cua/qa-verdicts`, else `~/.cache/cua/qa-verdicts`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import cua
import cua.episode
import cua.judges
import cua.qa
import cua.tasks

__all__ = ["FORMAT", "Digests", "VerdictCache", "cache_dir"]

#: Bump when what a stored entry means changes.
FORMAT = "cua.qa-verdict/1"
_SKIP_DIRS = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".mypy_cache"})
#: A suite folder's task files: each template's own definition (after defaults) is in its key,
#: so an edit to one template leaves the others of its file and suite reusable.
_TASK_FILES = frozenset({".yaml", ".yml"})


def _package_dir(module: Any) -> Path:
    return Path(module.__file__).resolve().parent


def _tree_digest(root: Path, skip_suffixes: frozenset[str] = frozenset()) -> str:
    """sha256 over every file below `root` (names and bytes, in sorted order)."""
    h = hashlib.sha256()
    if root.is_file():
        h.update(root.read_bytes())
        return h.hexdigest()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not _SKIP_DIRS.intersection(p.parts)
                       and p.suffix not in skip_suffixes):
        h.update(str(path.relative_to(root)).encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _judge_code_roots() -> list[Path]:
    tasks = _package_dir(cua.tasks)
    roots = [_package_dir(cua.judges), _package_dir(cua.episode), _package_dir(cua.qa),
             _package_dir(cua) / "task.py"]
    roots += sorted(tasks.glob("*.py"))
    roots += sorted(tasks.joinpath("apps").glob("*.py")) + [tasks / "apps" / "static"]
    roots += [tasks / name for name in ("miniwob", "osworld", "schema") if (tasks / name).exists()]
    return roots


#: The sandbox kinds whose reads go through the guest agent as well as their own package.
_GUEST_KINDS = frozenset({"desktop", "vm"})


def _sandbox_dirs(kind: str | None) -> list[Path]:
    """The code of sandbox kind `kind` (found by path: judge QA does not import the sandboxes)."""
    root = (_package_dir(cua) / "sandboxes").resolve()
    if not kind or not (root / kind).is_dir():
        return []
    return [root / kind, *([root / "guest"] if kind in _GUEST_KINDS else []), root / "_container.py"]


def _app_dirs(apps: Sequence[str]) -> list[Path]:
    """The apps' code: each one's folder under `tasks/apps/`, and for a real product (whose
    app folder only registers it) the product's own folder and the products' framework."""
    tasks = _package_dir(cua.tasks)
    folders: list[Path] = []
    for app in apps:
        folders += [f for f in (tasks / "apps" / app, tasks / "products" / app) if f.is_dir()]
        if (tasks / "products" / app).is_dir():
            folders += sorted((tasks / "products").glob("*.py"))
    return list(dict.fromkeys(folders))


class Digests:
    """The digests of one check run: each folder is read once per run (many templates share
    a suite, an app and the judge code), and a later run reads the files afresh."""

    def __init__(self) -> None:
        self._trees: dict[tuple[Path, frozenset[str]], str] = {}
        self._judge_code: str | None = None

    def tree(self, root: Path, skip_suffixes: frozenset[str] = frozenset()) -> str:
        if (root, skip_suffixes) not in self._trees:
            self._trees[root, skip_suffixes] = _tree_digest(root, skip_suffixes)
        return self._trees[root, skip_suffixes]

    def judge_code(self) -> str:
        if self._judge_code is None:
            h = hashlib.sha256()
            for root in _judge_code_roots():
                if root.exists():
                    h.update(root.name.encode())
                    h.update(self.tree(root).encode())
            self._judge_code = h.hexdigest()
        return self._judge_code

    def template_key(self, template: Any, apps: Sequence[str], *, seeds: Sequence[int], isolation: str | None,
                     kind: str | None) -> str | None:
        """The digest a template's clean report is stored under; None where the template cannot
        be pinned down (no definition or file to digest), so it always runs."""
        raw = getattr(template, "raw", None)
        file = getattr(template, "file", None)
        if raw is None or not file or not Path(file).exists():
            return None
        parts: dict[str, Any] = {
            "format": FORMAT,
            "template": template.id,
            "definition": json.dumps(raw, sort_keys=True, default=str),
            "suite": self.tree(Path(file).resolve().parent, _TASK_FILES),
            "app": [self.tree(d) for d in _app_dirs(apps)] or None,
            "judge_code": self.judge_code(),
            "sandbox": [self.tree(d) for d in _sandbox_dirs(kind)],
            "seeds": list(seeds),
            "isolation": isolation,
            "kind": kind,
        }
        return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def cache_dir() -> Path:
    explicit = os.environ.get("CUA_QA_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cua" / "qa-verdicts"


class VerdictCache:
    """Clean reports by key, one JSON file each, written atomically (a killed check leaves
    no half-written entry)."""

    def __init__(self, folder: Path | None = None, *, enabled: bool | None = None) -> None:
        self.folder = folder or cache_dir()
        self.enabled = (os.environ.get("CUA_QA_CACHE", "on").lower() not in ("off", "0", "no")
                        if enabled is None else enabled)

    def get(self, key: str | None) -> dict[str, Any] | None:
        if not self.enabled or key is None:
            return None
        path = self.folder / f"{key}.json"
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            return None
        report = entry.get("report")
        return report if isinstance(report, dict) else None

    def put(self, key: str | None, report: dict[str, Any]) -> None:
        if not self.enabled or key is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        data = json.dumps({"format": FORMAT, "key": key, "report": report}, default=str)
        fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".entry-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(data)
            os.replace(tmp, self.folder / f"{key}.json")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def keys(self) -> Iterable[str]:
        return (p.stem for p in self.folder.glob("*.json")) if self.folder.is_dir() else ()
