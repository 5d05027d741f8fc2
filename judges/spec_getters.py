"""The judge specification's getters: which state a check reads (as `cua.state` queries),
or the agent's final answer and how it ended. See `cua.judges.spec`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, field_validator

from cua.judges.spec_base import Spec, valid_path

__all__ = [
    "AnswerGetter",
    "AppStateGetter",
    "ClipboardGetter",
    "CommandGetter",
    "CookiesGetter",
    "DomGetter",
    "DoneStatusGetter",
    "FileGetter",
    "FilesGetter",
    "GetterSpec",
    "LocalStorageGetter",
    "NavigationGetter",
    "SqlGetter",
    "TitleGetter",
    "UrlGetter",
    "WindowsGetter",
]


class _QueryGetter(Spec):
    #: A JSON path applied to the query's value (see `cua.judges.paths`), e.g. `todos[id=4].done`.
    path: str | None = None
    #: Read the state as it was right after reset instead of at the end.
    at: Literal["final", "initial"] = "final"

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return valid_path(value)


class AppStateGetter(_QueryGetter):
    """The app's `/__cua/state` JSON (then `path` into it)."""

    kind: Literal["app_state"]
    service: str = "app"


class SqlGetter(_QueryGetter):
    """A read-only SQL query on the app's database: a list of row dicts; with `scalar`,
    the first column of the first row (None when there is no row)."""

    kind: Literal["sql"]
    service: str = "app"
    query: str = Field(min_length=1, max_length=10_000)
    params: list[Any] = Field(default_factory=list)
    scalar: bool = False


class UrlGetter(_QueryGetter):
    """The page URL, or one part of it; `param` reads one query-string parameter (a list
    when it is repeated, which no scalar comparator accepts). Judge what a page shows
    from the whole URL with `op: url`: a `param` check alone misses an added parameter."""

    kind: Literal["url"]
    part: Literal["full", "path", "query", "host", "fragment"] = "full"
    param: str | None = None


class TitleGetter(_QueryGetter):
    kind: Literal["title"]


class DomGetter(_QueryGetter):
    """Elements of the current page (`cua.state.DomQuery`)."""

    kind: Literal["dom"]
    selector: str = Field(min_length=1)
    selector_type: Literal["css", "xpath"] = "css"
    prop: Literal["text", "inner_text", "value", "html", "attr", "checked", "selected", "count", "visible"] = "text"
    attr: str | None = None
    all: bool = False
    frame: str | None = None


class LocalStorageGetter(_QueryGetter):
    kind: Literal["local_storage"]
    key: str | None = None


class CookiesGetter(_QueryGetter):
    kind: Literal["cookies"]
    name: str | None = None


class NavigationGetter(_QueryGetter):
    """The URLs the agent's page committed since reset, in order, server redirects
    included before the URL they led to (a browser sandbox records them). With
    `url_path`, only the visits of that path (as the server reads it: escapes decoded),
    so "never": `expect: {op: length, max: 0}`, "at most once": `{op: length, max: 1}`."""

    kind: Literal["navigation"]
    url_path: str | None = Field(None, min_length=1)


class FileGetter(_QueryGetter):
    """A file in a desktop or VM sandbox (`mode`: text, bytes, exists, sha256, list)."""

    kind: Literal["file"]
    file: str = Field(min_length=1)
    mode: Literal["text", "bytes", "exists", "sha256", "list"] = "text"


class FilesGetter(_QueryGetter):
    """What the episode did to the user's files under `roots` (relative to the home folder):
    {added, removed, changed: [paths], moved: [{from, to}]}, the diff of their manifests
    after reset and at the end (`cua.judges.files`), and their history from the guest's
    file event log, which sees what the end hides: `events` [{path, ops: [create|modify|
    attrib|delete|moved_from|moved_to]}] in the episode, and `ever` {created, removed,
    changed, moved: [paths]}, each path that was so at any moment (both None from a guest
    that keeps no log, so a check of them fails rather than passes unread).

    No removal at the end: `path: removed`, `expect: {op: length, value: 0}`. "Never removed
    X", though made again: `{not: {check, get: {kind: files, path: ever.removed}, expect:
    {op: contains, value: X}}}`. A path's operations: `path: events[path=X].ops`."""

    kind: Literal["files"]
    roots: list[str] = Field(default_factory=lambda: ["."], min_length=1)


class CommandGetter(_QueryGetter):
    """A command's result {returncode, stdout, stderr} (use `path: stdout`).

    The command runs in the agent's home folder, which the agent writes: it must run no
    code of the agent's. So the program is named by its absolute path (no lookup that a
    planted ~/.local/bin/tar could answer), a shell is never interactive or a login shell
    (those source ~/.bashrc and ~/.profile), and Python runs isolated (`-I`: neither the
    working folder nor the user's site-packages on its import path)."""

    kind: Literal["command"]
    argv: list[str] = Field(min_length=1)
    timeout: float = Field(10.0, gt=0, le=60)

    @field_validator("argv")
    @classmethod
    def _argv(cls, argv: list[str]) -> list[str]:
        program = argv[0]
        if not program.startswith("/"):
            raise ValueError(f"a judge's command names its program by an absolute path (/usr/bin/...), "
                             f"not {program!r}: a PATH lookup can find a program the agent planted")
        name = program.rsplit("/", 1)[-1]
        options: list[str] = []  # the interpreter's own options: up to its script or `-c`
        for arg in argv[1:]:
            if not arg.startswith("-") or arg == "-":
                break
            options.append(arg)
            if not arg.startswith("--") and "c" in arg:
                break
        if name in _SHELLS and any(a in ("--login", "--interactive", "--rcfile", "--init-file")
                                   or (not a.startswith("--") and ("i" in a or "l" in a)) for a in options):
            raise ValueError(f"a judge's command must not start an interactive or login shell ({argv[:3]}): "
                             "it would source the agent's ~/.bashrc or ~/.profile and run its code")
        if name.startswith("python") and not any(a == "-I" or (not a.startswith("--") and "I" in a)
                                                 for a in options):
            raise ValueError(f"a judge's Python runs isolated (`{program} -I ...`): without -I the home folder "
                             "and the user's site-packages are on its import path")
        return argv


#: Shells that read rc files when interactive or started as a login shell.
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish"})


class WindowsGetter(_QueryGetter):
    """{"windows": [{id, title, class, ...}], "focused": id}."""

    kind: Literal["windows"]


class ClipboardGetter(_QueryGetter):
    kind: Literal["clipboard"]


class AnswerGetter(Spec):
    """The agent's final answer: `done(answer=...)`, None when it gave none."""

    kind: Literal["answer"]


class DoneStatusGetter(Spec):
    """How the agent ended: "success", "failure", "infeasible", or None (no `done`)."""

    kind: Literal["done_status"]


GetterSpec = Annotated[
    Union[
        AppStateGetter, SqlGetter, UrlGetter, TitleGetter, DomGetter, LocalStorageGetter, CookiesGetter, NavigationGetter,
        FileGetter, FilesGetter, CommandGetter, WindowsGetter, ClipboardGetter, AnswerGetter, DoneStatusGetter,
    ],
    Field(discriminator="kind"),
]
