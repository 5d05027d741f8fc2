"""The templates a command line names: what `cua eval` and `cua tasks` select alike.

A command takes suite names, suite folders or task files anywhere on disk, and template ids
(none: every template), narrowed to a split and run on another sandbox kind when asked. Both
commands read the names the same way and refuse the same bad names, so this sits below them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cua.tasks.kinds import with_kind
from cua.tasks.loader import TaskFormatError
from cua.tasks.registry import is_suite_path, list_templates, resolve_suite, select_templates, suites

if TYPE_CHECKING:
    from cua.task import TaskTemplate

__all__ = ["SelectionError", "selected_templates", "suites_with_problems"]


class SelectionError(ValueError):
    """Task names on the command line that select no valid templates: an unknown name, a
    suite file that does not parse, or a --kind a template cannot run on."""


def selected_templates(names: list[str], *, split: str = "all", kind: str | None = None) -> list[TaskTemplate]:
    """The templates a command line names (suite names, suite paths, template ids; every
    template when none), of `split` ("all": any), each on sandbox `kind` when given."""
    chosen = None if split == "all" else split
    try:
        templates: list[TaskTemplate] = select_templates(names, split=chosen) if names else list_templates(split=chosen)
    except KeyError as exc:
        raise SelectionError(exc.args[0]) from None
    except TaskFormatError as exc:
        raise SelectionError(str(exc)) from None
    if kind:
        try:
            templates = [with_kind(t, kind) for t in templates]
        except TaskFormatError as exc:
            raise SelectionError(str(exc)) from None
    return templates


def suites_with_problems(names: list[str] | None) -> set[str]:
    """The names of the suites `names` select (every suite when None) whose files had problems
    that did not stop them loading (e.g. OSWorld tasks using what the adapter lacks)."""
    if not names:
        return {name for name, suite in suites().items() if suite.problems}
    out = set()
    for name in names:
        suite = resolve_suite(name) if is_suite_path(name) else suites().get(name.split(".", 1)[0])
        if suite is not None and suite.problems:
            out.add(suite.name)
    return out
