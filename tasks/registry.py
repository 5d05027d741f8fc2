"""The task registry: every suite, and every template by id.

Suites come from the YAML files under `tasks/suites/<suite>/*.yaml` (shipped as package
data of `cua.tasks.suites`), from other packages through the entry-point group
`cua.suites` (an entry point loads a `Suite`, a path (a suite folder or one YAML file),
or a zero-argument callable returning either), and from anywhere on disk: every command
that takes a suite name also takes a folder of task files or one file (`cua tasks check
path/to/suite`, `cua eval my-tasks.yaml`), which `use_path` adds to the registry. Such
paths are also read from `$CUA_SUITE_PATHS` (`os.pathsep`-separated), and `use_path`
appends to it, so child processes (a sandbox server, Ray workers started from this
environment) resolve the same template ids.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from cua.errors import BadRequest
from cua.task import TaskInstance
from cua.tasks.loader import FormatProblem, TaskFormatError, load_file

__all__ = [
    "ENTRY_POINT_GROUP",
    "SUITES_DIR",
    "SUITE_PATHS_ENV",
    "Suite",
    "get_template",
    "is_suite_path",
    "list_templates",
    "load_suite_dir",
    "load_suite_path",
    "reload",
    "resolve_suite",
    "select_templates",
    "suites",
    "use_path",
]

ENTRY_POINT_GROUP = "cua.suites"
SUITE_PATHS_ENV = "CUA_SUITE_PATHS"
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


def load_suite_path(path: str | Path) -> Suite:
    """A suite from a folder of task files or from one file, anywhere on disk (strict: one
    TaskFormatError lists every problem). Its name is the `suite:` its files declare (or
    their ids' common prefix), not the folder's name, so one suite may live in any folder."""
    path = Path(path).expanduser()
    if not path.exists():
        raise TaskFormatError([FormatProblem(str(path), "", "no such file or folder")])
    if _is_osworld(path):
        return _osworld_suite(path)
    files = sorted([*path.glob("*.yaml"), *path.glob("*.yml")]) if path.is_dir() else [path]
    if not files:
        raise TaskFormatError([FormatProblem(str(path), "", "no task files (*.yaml, *.yml) in this folder")])
    templates: list[Any] = []
    problems: list[FormatProblem] = []
    for file in files:
        try:
            templates += load_file(file)
        except TaskFormatError as exc:
            problems += exc.problems
    names = sorted({t.suite for t in templates})
    if len(names) > 1:
        problems.append(FormatProblem(str(path), "suite", f"one suite per folder or file; found {', '.join(names)}"))
    if problems:
        raise TaskFormatError(problems)
    suite = Suite(names[0] if names else path.stem, source=str(path.resolve()))
    for template in templates:
        suite.add(template)
    return suite


def _is_osworld(path: Path) -> bool:
    """OSWorld-format task JSON: one file, or a folder holding them (and no YAML task files)."""
    if path.is_file():
        return path.suffix == ".json"
    return not any(path.glob("*.y*ml")) and any(path.rglob("*.json"))


def _osworld_suite(path: Path) -> Suite:
    """The suite `osworld` from task JSON files; tasks needing what the adapter lacks are
    kept (they say so when instantiated) and listed in `problems`."""
    from cua.tasks.osworld import load_osworld

    templates, problems = load_osworld(path)
    suite = Suite("osworld", source=str(path.resolve()), problems=problems)
    for template in templates:
        suite.add(template)
    return suite


def is_suite_path(name: str) -> bool:
    """Whether a command-line name means a path rather than a registered suite or template id."""
    if name.endswith((".yaml", ".yml", ".json")) or "/" in name or os.sep in name:
        return True
    return name not in suites() and "." not in name and Path(name).is_dir()


def _add(found: dict[str, Suite], suite: Suite) -> None:
    other = found.get(suite.name)
    if other is not None and other.source != suite.source:
        raise TaskFormatError([FormatProblem(suite.source, "suite", f"suite {suite.name!r} is already defined by "
                                             f"{other.source}")])
    found[suite.name] = suite


def use_path(path: str | Path) -> Suite:
    """Load the suite at `path` and add it to the registry (and to `$CUA_SUITE_PATHS`, for
    child processes); returns it. Loading the same path again re-reads its files."""
    suite = load_suite_path(path)
    found = suites()
    with _lock:
        _add(found, suite)
    known = [p for p in os.environ.get(SUITE_PATHS_ENV, "").split(os.pathsep) if p]
    if suite.source not in known:
        os.environ[SUITE_PATHS_ENV] = os.pathsep.join([*known, suite.source])
    return suite


def resolve_suite(name: str) -> Suite:
    """A suite by registered name, or by path (see `is_suite_path`); KeyError if unknown."""
    if is_suite_path(name):
        return use_path(name)
    found = suites()
    if name not in found:
        raise KeyError(f"unknown suite {name!r}; suites: {', '.join(sorted(found))} (or give a folder or a .yaml file)")
    return found[name]


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
    for extra in (p for p in os.environ.get(SUITE_PATHS_ENV, "").split(os.pathsep) if p):
        try:
            _add(found, load_suite_path(extra))
        except TaskFormatError as exc:
            found.setdefault(Path(extra).stem, Suite(Path(extra).stem, source=extra, problems=exc.problems))
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
    chosen = [resolve_suite(suite)] if suite is not None else list(suites().values())
    out = [t for s in chosen for t in s.templates.values()
           if (split is None or t.tags.split == split) and (where is None or where(t))]
    return sorted(out, key=lambda t: t.id)


def select_templates(names: list[str] | tuple[str, ...], split: str | None = None) -> list[Any]:
    """Templates named by suite names, suite paths and/or template ids (`todo`,
    `path/to/suite`, `tasks.yaml`, `todo.rename@1`, `todo.rename`), in the given order,
    without duplicates; KeyError for unknown names, TaskFormatError for a bad suite path."""
    out: list[Any] = []
    seen: set[str] = set()
    for name in names:
        if is_suite_path(name):
            chosen = sorted(use_path(name).templates.values(), key=lambda t: t.id)
        else:
            chosen = list_templates(suite=name) if "." not in name else [get_template(name)]
        for t in chosen:
            if t.id not in seen and (split is None or t.tags.split == split):
                seen.add(t.id)
                out.append(t)
    return out


def task_instance(template_id: str, seed: int) -> TaskInstance:
    """The template `template_id` at `seed`, for a client that named them (a hub, the
    rollout service's environments): an unknown id is the client's error, a `BadRequest`
    naming it, never a KeyError."""
    try:
        instance: TaskInstance = get_template(template_id).instantiate(seed)
    except KeyError as exc:
        raise BadRequest(str(exc.args[0]), details={"task": template_id}) from None
    return instance
