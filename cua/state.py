"""State queries: how judges (and recorders) read real state out of a sandbox.

A judge never talks to a sandbox. It names the state it needs as data (these queries);
the runner sends them over the protocol (`query` message); the sandbox answers each
with a `StateResult`; the judge then decides from those values alone. That keeps
judges pure, deterministic and testable on recorded state.

Each sandbox kind answers the query kinds it lists in `SandboxInfo.queries`; any other
kind gets a `StateResult` with `error="unsupported"`, never an exception.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

__all__ = [
    "A11yQuery",
    "AppStateQuery",
    "ClipboardQuery",
    "CommandQuery",
    "CookiesQuery",
    "DomQuery",
    "FileQuery",
    "FilesQuery",
    "LocalStorageQuery",
    "NavigationQuery",
    "SqlQuery",
    "StateQuery",
    "StateQueryAdapter",
    "StateResult",
    "TitleQuery",
    "UrlQuery",
    "WindowsQuery",
]


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- app (any sandbox that runs a backing app speaking the app contract) ---

class AppStateQuery(_Query):
    """The JSON the app's `GET /__cua/state` returns."""

    kind: Literal["app_state"] = "app_state"
    service: str = "app"


class SqlQuery(_Query):
    """A read-only SQL query on the app's SQLite database; value = list of row dicts."""

    kind: Literal["sql"] = "sql"
    service: str = "app"
    query: str = Field(max_length=10_000)
    params: list[Any] = Field(default_factory=list)


# --- browser ---

class UrlQuery(_Query):
    kind: Literal["url"] = "url"


class TitleQuery(_Query):
    kind: Literal["title"] = "title"


class DomQuery(_Query):
    """Read elements of the current page. CSS selectors pierce open shadow roots.

    value: for `all=False` the first match's property (None when nothing matches);
    for `all=True` a list over every match. `prop="count"` gives the match count.
    `prop="bbox"` gives {x, y, width, height} in screen pixels of the current viewport,
    without scrolling (a query never changes state): scripted oracles find where to
    click with it, and scroll with actions when needed, as an agent would.
    """

    kind: Literal["dom"] = "dom"
    selector: str = Field(min_length=1, max_length=4096)
    selector_type: Literal["css", "xpath"] = "css"
    prop: Literal["text", "inner_text", "value", "html", "attr", "checked", "selected", "count", "visible",
                  "bbox"] = "text"
    attr: str | None = None
    all: bool = False
    #: CSS selector of an iframe element to look inside.
    frame: str | None = None


class LocalStorageQuery(_Query):
    """value: the item (str or None) for `key`, else a dict of all items of the page's origin."""

    kind: Literal["local_storage"] = "local_storage"
    key: str | None = None


class CookiesQuery(_Query):
    """value: list of cookie dicts, filtered by name when given."""

    kind: Literal["cookies"] = "cookies"
    name: str | None = None


class NavigationQuery(_Query):
    """The episode's navigation history, recorded by the sandbox (never by a page): every
    URL the agent's page committed in its main frame since reset, in order.

    value: {"entries": [{"url", "how": "reset"|"goto"|"back"|"forward"|"page",
    "redirects": [the URLs that redirected to it, in order]}], "dropped": entries past
    the sandbox's limit}. A snapshot keeps it; a restore or fork puts it back."""

    kind: Literal["navigation"] = "navigation"


# --- desktop and VM ---

class FileQuery(_Query):
    """value: text (utf-8, replacement on errors) / base64 bytes / bool / sha256 hex / sorted names."""

    kind: Literal["file"] = "file"
    path: str = Field(min_length=1, max_length=4096)
    mode: Literal["text", "bytes", "exists", "sha256", "list"] = "text"
    max_bytes: int = Field(1_000_000, ge=1, le=50_000_000)


class FilesQuery(_Query):
    """A manifest of the user's files under `roots` (folders relative to the home folder).

    value: {"entries": {path: {"type": "file", "size", "mode", "sha256"} | {"type": "dir"} |
    {"type": "link", "target"}}, "truncated": bool}, paths relative to the home folder.
    Read after reset and at the end, two manifests show every file the episode created,
    removed, moved or edited (`cua.judges.files`). Hidden entries (".name") are left out
    unless `hidden` (applications keep settings and lock files there), but for the home
    folder's shell and session startup files and `.gitconfig`, which run the agent's code
    when it plants some there.

    With it, a guest that keeps the file event log gives `"events"`: {"seq": the last
    operation's number, "paths": {path: [{"op": create|modify|attrib|delete|moved_from|
    moved_to, "seq", "to"|"from"?}]}, "truncated", "cuts": [{"seq", "reason"}]} (events
    lost: a full kernel queue, too many paths, a watch refused), or {"unavailable": why}.
    It covers the paths under `roots` that the manifest lists by default, from the
    sandbox's start; a snapshot keeps it and a reset or restore puts back the one of the
    moment restored. A judge counts the operations numbered after the `seq` of its
    reading at the episode's start (`cua.judges.files`): what the end manifest hides (a
    file deleted and made again, edited and restored) is there."""

    kind: Literal["files"] = "files"
    roots: list[str] = Field(default_factory=lambda: ["."], min_length=1, max_length=32)
    hidden: bool = False
    max_entries: int = Field(20_000, ge=1, le=200_000)


class CommandQuery(_Query):
    """Run a command (argv, no shell) with a time limit; value: {returncode, stdout, stderr}."""

    kind: Literal["command"] = "command"
    argv: list[str] = Field(min_length=1, max_length=256)
    timeout: float = Field(10.0, gt=0, le=60)
    max_bytes: int = Field(100_000, ge=1, le=10_000_000)
    cwd: str | None = None


class WindowsQuery(_Query):
    """value: {"windows": [{id, title, class, x, y, width, height}], "focused": id | None}."""

    kind: Literal["windows"] = "windows"


class ClipboardQuery(_Query):
    kind: Literal["clipboard"] = "clipboard"


class A11yQuery(_Query):
    """The accessibility tree (AT-SPI on desktops, CDP on browsers), as nested dicts."""

    kind: Literal["a11y"] = "a11y"
    max_nodes: int = Field(5000, ge=1, le=100_000)


StateQuery = Annotated[
    Union[
        AppStateQuery, SqlQuery, UrlQuery, TitleQuery, DomQuery, LocalStorageQuery, CookiesQuery, NavigationQuery,
        FileQuery, FilesQuery, CommandQuery, WindowsQuery, ClipboardQuery, A11yQuery,
    ],
    Field(discriminator="kind"),
]

StateQueryAdapter: TypeAdapter[StateQuery] = TypeAdapter(StateQuery)


class StateResult(BaseModel):
    """One query's answer. `error` is a short typed reason ("unsupported", "not_found",
    "timeout", "failed") with `message`; `value` is None then."""

    model_config = ConfigDict(extra="forbid")
    ok: bool = True
    value: Any = None
    error: str | None = None
    message: str | None = None

    @classmethod
    def failure(cls, error: str, message: str) -> "StateResult":
        return cls(ok=False, error=error, message=message)
