"""Getters: where a check's observed value comes from.

A getter is a state query (or none, for the agent's answer) plus an extraction from its
`StateResult`. Builders are registered per getter spec type, so desktop and VM getters
(file, command, windows, clipboard) are ordinary entries, and a new query kind needs only
a spec model and a builder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cua.judges import spec as S
from cua.judges.files import files_diff
from cua.judges.paths import PathError, get_path
from cua.judges.values.web import normalize_escapes
from cua.state import (
    AppStateQuery,
    ClipboardQuery,
    CommandQuery,
    CookiesQuery,
    DomQuery,
    FileQuery,
    FilesQuery,
    LocalStorageQuery,
    NavigationQuery,
    SqlQuery,
    StateQuery,
    TitleQuery,
    UrlQuery,
    WindowsQuery,
)
from cua.task import JudgeInput, query_key

__all__ = ["Getter", "GetterError", "build_getter", "register_getter"]


class GetterError(Exception):
    """The state a getter needs is missing or failed (reported as a failed check)."""


@dataclass
class Getter:
    #: What to read from the sandbox (None: the value comes from the agent's `done`).
    query: StateQuery | None
    describe: str
    #: Post-processing of the query's value (before `path`).
    post: Callable[[Any], Any] = field(default=lambda v: v)
    path: str | None = None
    at: str = "final"
    #: For query-less getters: the value from the judge input.
    direct: Callable[[JudgeInput], Any] | None = None
    key: str = ""
    #: The source keeps each value's type (app state as JSON, SQL rows): a value's type
    #: is part of what was stored, so a number check there needs a number (`compare`).
    stored: bool = False

    def __post_init__(self) -> None:
        if self.query is not None:
            self.key = query_key(self.query)

    def extract(self, data: JudgeInput) -> Any:
        if self.direct is not None:
            return self.direct(data)
        states = data.final if self.at == "final" else data.initial
        result = states.get(self.key)
        if result is None:
            raise GetterError(f"state not read: {self.describe} ({self.at})")
        if not result.ok:
            raise GetterError(f"{self.describe}: {result.error}: {result.message or ''}".rstrip(": "))
        try:
            return get_path(self.post(result.value), self.path, unique=True)
        except PathError as exc:
            raise GetterError(str(exc)) from None


Builder = Callable[[Any], Getter]
_BUILDERS: dict[type, Builder] = {}


def register_getter(spec_type: type) -> Callable[[Builder], Builder]:
    def wrap(fn: Builder) -> Builder:
        _BUILDERS[spec_type] = fn
        return fn

    return wrap


def build_getter(spec: Any) -> Getter:
    builder = _BUILDERS.get(type(spec))
    if builder is None:
        raise TypeError(f"no getter for {type(spec).__name__}")
    return builder(spec)


def _q(spec: Any, query: StateQuery, describe: str, post: Callable[[Any], Any] = lambda v: v,
       stored: bool = False) -> Getter:
    suffix = f" -> {spec.path}" if spec.path else ""
    return Getter(query=query, describe=describe + suffix, post=post, path=spec.path, at=spec.at, stored=stored)


@register_getter(S.AppStateGetter)
def _app_state(spec: S.AppStateGetter) -> Getter:
    return _q(spec, AppStateQuery(service=spec.service), f"app_state[{spec.service}]", stored=True)


def _scalar(rows: Any) -> Any:
    if isinstance(rows, list) and rows and isinstance(rows[0], dict) and rows[0]:
        return next(iter(rows[0].values()))
    return None


@register_getter(S.SqlGetter)
def _sql(spec: S.SqlGetter) -> Getter:
    query = SqlQuery(service=spec.service, query=spec.query, params=list(spec.params))
    return _q(spec, query, f"sql {spec.query!r} {list(spec.params)}", _scalar if spec.scalar else (lambda v: v),
              stored=True)


def _url_part(part: str, param: str | None) -> Callable[[Any], Any]:
    def post(url: Any) -> Any:
        if not isinstance(url, str):
            return None
        parts = urlsplit(url)
        if param is not None:
            # A repeated parameter is not one value: the page may show either (or both),
            # so every scalar comparator refuses the list. Extra parameters are judged by
            # comparing the whole query as a URL (`op: url`).
            values = parse_qs(parts.query, keep_blank_values=True).get(param)
            if not values:
                return None
            return values[0] if len(values) == 1 else values
        # A part as the server reads it: "/%63/shoes" is "/c/shoes", the host in any case.
        return {"full": url, "path": normalize_escapes(parts.path), "query": parts.query,
                "host": parts.netloc.lower(), "fragment": parts.fragment}[part]

    return post


@register_getter(S.UrlGetter)
def _url(spec: S.UrlGetter) -> Getter:
    what = f"url.{spec.part}" + (f"?{spec.param}" if spec.param else "")
    return _q(spec, UrlQuery(), what, _url_part(spec.part, spec.param))


@register_getter(S.TitleGetter)
def _title(spec: S.TitleGetter) -> Getter:
    return _q(spec, TitleQuery(), "title")


@register_getter(S.DomGetter)
def _dom(spec: S.DomGetter) -> Getter:
    query = DomQuery(selector=spec.selector, selector_type=spec.selector_type, prop=spec.prop, attr=spec.attr,
                     all=spec.all, frame=spec.frame)
    return _q(spec, query, f"dom {spec.selector!r}.{spec.prop}{'[*]' if spec.all else ''}")


@register_getter(S.LocalStorageGetter)
def _local_storage(spec: S.LocalStorageGetter) -> Getter:
    return _q(spec, LocalStorageQuery(key=spec.key), f"localStorage[{spec.key or '*'}]")


@register_getter(S.CookiesGetter)
def _cookies(spec: S.CookiesGetter) -> Getter:
    return _q(spec, CookiesQuery(name=spec.name), f"cookies[{spec.name or '*'}]")


def _visited(url_path: str | None) -> Callable[[Any], Any]:
    def post(value: Any) -> Any:
        if not isinstance(value, dict) or not isinstance(value.get("entries"), list):
            return None
        urls = [str(url) for e in value["entries"] for url in [*e.get("redirects", []), e.get("url")]]
        if url_path is None:
            return urls
        return [url for url in urls if normalize_escapes(urlsplit(url).path) == url_path]

    return post


@register_getter(S.NavigationGetter)
def _navigation(spec: S.NavigationGetter) -> Getter:
    what = "navigation history" + (f" visits of {spec.url_path}" if spec.url_path else "")
    return _q(spec, NavigationQuery(), what, _visited(spec.url_path))


@register_getter(S.FileGetter)
def _file(spec: S.FileGetter) -> Getter:
    return _q(spec, FileQuery(path=spec.file, mode=spec.mode), f"file {spec.file} ({spec.mode})")


@register_getter(S.FilesGetter)
def _files(spec: S.FilesGetter) -> Getter:
    query = FilesQuery(roots=list(spec.roots))
    key = query_key(query)
    describe = f"files {list(spec.roots)} diff" + (f" -> {spec.path}" if spec.path else "")

    def diff(data: JudgeInput) -> Any:
        before, after = data.initial.get(key), data.final.get(key)
        for result, when in ((before, "after reset"), (after, "at the end")):
            if result is None:
                raise GetterError(f"state not read: {describe} ({when})")
            if not result.ok:
                raise GetterError(f"{describe} ({when}): {result.error}: {result.message or ''}".rstrip(": "))
        assert before is not None and after is not None
        try:
            return get_path(files_diff(before.value, after.value), spec.path, unique=True)
        except PathError as exc:
            raise GetterError(str(exc)) from None

    return Getter(query=query, describe=describe, direct=diff)


@register_getter(S.CommandGetter)
def _command(spec: S.CommandGetter) -> Getter:
    return _q(spec, CommandQuery(argv=list(spec.argv), timeout=spec.timeout), f"command {spec.argv}")


@register_getter(S.WindowsGetter)
def _windows(spec: S.WindowsGetter) -> Getter:
    return _q(spec, WindowsQuery(), "windows")


@register_getter(S.ClipboardGetter)
def _clipboard(spec: S.ClipboardGetter) -> Getter:
    return _q(spec, ClipboardQuery(), "clipboard")


@register_getter(S.AnswerGetter)
def _answer(_: S.AnswerGetter) -> Getter:
    return Getter(query=None, describe="answer", direct=lambda d: d.done.answer if d.done is not None else None)


@register_getter(S.DoneStatusGetter)
def _done_status(_: S.DoneStatusGetter) -> Getter:
    return Getter(query=None, describe="done_status", direct=lambda d: d.done.status if d.done is not None else None)
