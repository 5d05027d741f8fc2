"""The task registry: every suite, and every template by id.

Suites come from the YAML files under `tasks/suites/<suite>/*.yaml` (shipped as package
data of `cua.tasks.suites`) and from other packages through the entry-point group
`cua.suites`: an entry point loads a `Suite`, a path (a suite folder or one YAML file),
or a zero-argument callable returning either.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from cua.tasks.loader import FormatProblem, TaskFormatError, load_file

__all__ = [
    "ENTRY_POINT_GROUP",
    "SUITES_DIR",
    "Suite",
    "get_template",
    "list_templates",
    "load_suite_dir",
    "reload",
    "select_templates",
    "suites",
]

ENTRY_POINT_GROUP = "cua.suites"
SUITES_DIR = Path(__file__).parent / "suites"


@dataclass
class Suite:
    name: str
    templates: dict[str, Any] = field(default_factory=dict)  # id -> a TaskTemplate
    #: Where it came from: a folder, a file, or an entry point.
    source: str = ""
    #: Problems of files that failed to load (when loaded leniently): their templates are missing.
    problems: list[FormatProblem] = field(default_factory=list)

    def add(self, template: Any) -> None:
        if template.id in self.templates:
            raise TaskFormatError([FormatProblem(self.source, "id",
                                                 f"duplicate template id {template.id!r} in suite {self.name!r}")])
        self.templates[template.id] = template

    def __len__(self) -> int:
        return len(self.templates)


def load_suite_dir(path: str | Path, name: str | None = None, *, strict: bool = True) -> Suite:
    """A suite from a folder of YAML files (sorted by name). Strict: raise one
    TaskFormatError listing the problems of every bad file; else keep the good files'
    templates and record the problems in `Suite.problems`."""
    path = Path(path)
    suite = Suite(name or path.name, source=str(path))
    problems: list[FormatProblem] = []
    for file in sorted([*path.glob("*.yaml"), *path.glob("*.yml")]):
        try:
            for template in load_file(file, suite=suite.name):
                suite.add(template)
        except TaskFormatError as exc:
            problems += exc.problems
    if problems and strict:
        raise TaskFormatError(problems)
    suite.problems = problems
    return suite


def _from_object(obj: Any, origin: str) -> Suite:
    if isinstance(obj, Suite):
        return obj
    if isinstance(obj, (str, Path)):
        p = Path(obj)
        if p.is_dir():
            return load_suite_dir(p)
        templates = load_file(p)
        suite = Suite(templates[0].suite if templates else p.stem, source=str(p))
        for t in templates:
            suite.add(t)
        return suite
    if callable(obj):
        return _from_object(obj(), origin)
    raise TypeError(f"entry point {origin} gave a {type(obj).__name__}, not a Suite, a path or a callable")


_lock = threading.Lock()
_cache: dict[str, Suite] | None = None


def _discover() -> dict[str, Suite]:
    found: dict[str, Suite] = {}
    if SUITES_DIR.is_dir():
        for folder in sorted(p for p in SUITES_DIR.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
            if any(folder.glob("*.y*ml")):
                # Lenient: one broken file must not hide every other suite; `cua tasks
                # list` and `check` report `Suite.problems`.
                found[folder.name] = load_suite_dir(folder, strict=False)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            suite = _from_object(ep.load(), f"{ep.name} = {ep.value}")
        except TaskFormatError as exc:
            found[ep.name] = Suite(ep.name, source=ep.value, problems=exc.problems)
            continue
        if suite.name in found:
            raise TaskFormatError([FormatProblem(ep.value, "", f"suite {suite.name!r} is already defined by "
                                                 f"{found[suite.name].source}")])
        found[suite.name] = suite
    return found


def suites() -> dict[str, Suite]:
    """All suites by name (loaded once per process; `reload()` to re-read the files)."""
    global _cache
    with _lock:
        if _cache is None:
            _cache = _discover()
        return _cache


def reload() -> dict[str, Suite]:
    global _cache
    with _lock:
        _cache = None
    return suites()


def get_template(template_id: str) -> Any:
    """The template with this id, e.g. `todo.mark_done@1`. A bare `suite.name` picks its
    highest version."""
    suite_name = template_id.split(".", 1)[0]
    suite = suites().get(suite_name)
    if suite is None:
        raise KeyError(f"unknown suite {suite_name!r} (in {template_id!r}); suites: {', '.join(sorted(suites()))}")
    if template_id in suite.templates:
        return suite.templates[template_id]
    if "@" not in template_id:
        versions = [t for tid, t in suite.templates.items() if tid.split("@")[0] == template_id]
        if versions:
            return max(versions, key=lambda t: int(t.id.rsplit("@", 1)[1]))
    raise KeyError(f"unknown task template {template_id!r}")


def list_templates(suite: str | None = None, split: str | None = None,
                   where: Callable[[Any], bool] | None = None) -> list[Any]:
    """Templates sorted by id, filtered by suite, split ("train"/"test") and a predicate."""
    all_suites = suites()
    if suite is not None and suite not in all_suites:
        raise KeyError(f"unknown suite {suite!r}; suites: {', '.join(sorted(all_suites))}")
    chosen = [all_suites[suite]] if suite is not None else list(all_suites.values())
    out = [t for s in chosen for t in s.templates.values()
           if (split is None or t.tags.split == split) and (where is None or where(t))]
    return sorted(out, key=lambda t: t.id)


def select_templates(names: list[str] | tuple[str, ...], split: str | None = None) -> list[Any]:
    """Templates named by suite names and/or template ids (`todo`, `todo.rename@1`,
    `todo.rename`), in the given order, without duplicates; KeyError for unknown names."""
    out: list[Any] = []
    seen: set[str] = set()
    for name in names:
        chosen = list_templates(suite=name) if "." not in name else [get_template(name)]
        for t in chosen:
            if t.id not in seen and (split is None or t.tags.split == split):
                seen.add(t.id)
                out.append(t)
    return out
