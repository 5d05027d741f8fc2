"""The judge specification: what a task file's `judge:` section may say, as plain data.

A judge spec names *getters* (which state to read, as `cua.state` queries, or the
agent's final answer), *comparators* (how an observed value must relate to the
expected one) and *combinators* (all / any / not / weighted) over named checks, plus
the changes the task is allowed to make (everything else is a side-effect violation).

These models are the contract the task format publishes in its JSON Schema; the
executable judge (`cua.judges.judge.StateJudge`) is built from them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from cua.judges.paths import PathError, parse_path

__all__ = [
    "AllNode",
    "AnyNode",
    "CheckNode",
    "ComparatorSpec",
    "GetterSpec",
    "JudgeSpec",
    "NodeSpec",
    "NotNode",
    "WeightedItem",
    "WeightedNode",
]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# ---------------------------------------------------------------- getters

def _valid_path(value: str | None) -> str | None:
    if value is not None:
        try:
            parse_path(value)
        except PathError as exc:
            raise ValueError(str(exc)) from None
    return value


class _QueryGetter(_Spec):
    #: A JSON path applied to the query's value (see `cua.judges.paths`), e.g. `todos[id=4].done`.
    path: str | None = None
    #: Read the state as it was right after reset instead of at the end.
    at: Literal["final", "initial"] = "final"

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return _valid_path(value)


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
    """The page URL, or one part of it; `param` reads one query-string parameter."""

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


class FileGetter(_QueryGetter):
    """A file in a desktop or VM sandbox (`mode`: text, bytes, exists, sha256, list)."""

    kind: Literal["file"]
    file: str = Field(min_length=1)
    mode: Literal["text", "bytes", "exists", "sha256", "list"] = "text"


class CommandGetter(_QueryGetter):
    """A command's result {returncode, stdout, stderr} (use `path: stdout`)."""

    kind: Literal["command"]
    argv: list[str] = Field(min_length=1)
    timeout: float = Field(10.0, gt=0, le=60)


class WindowsGetter(_QueryGetter):
    """{"windows": [{id, title, class, ...}], "focused": id}."""

    kind: Literal["windows"]


class ClipboardGetter(_QueryGetter):
    kind: Literal["clipboard"]


class AnswerGetter(_Spec):
    """The agent's final answer: `done(answer=...)`, None when it gave none."""

    kind: Literal["answer"]


class DoneStatusGetter(_Spec):
    """How the agent ended: "success", "failure", "infeasible", or None (no `done`)."""

    kind: Literal["done_status"]


GetterSpec = Annotated[
    Union[
        AppStateGetter, SqlGetter, UrlGetter, TitleGetter, DomGetter, LocalStorageGetter, CookiesGetter,
        FileGetter, CommandGetter, WindowsGetter, ClipboardGetter, AnswerGetter, DoneStatusGetter,
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- comparators

class EqualsCmp(_Spec):
    """Exact equality of JSON values (1 == 1.0, True is not 1)."""

    op: Literal["equals"]
    value: Any = None


class TextCmp(_Spec):
    """String equality after normalisation: Unicode NFKC, whitespace collapsed and
    trimmed, casefolded unless `case: true`, punctuation dropped when `punctuation: false`."""

    op: Literal["text"]
    value: Any
    case: bool = False
    punctuation: bool = True


class ContainsCmp(_Spec):
    """A string contains `value` (normalised as `text` does), or a list has an element equal to it."""

    op: Literal["contains"]
    value: Any
    case: bool = False
    punctuation: bool = True


class RegexCmp(_Spec):
    """`pattern` matches the string (`re.search`; `full: true` for `re.fullmatch`)."""

    op: Literal["regex"]
    pattern: str
    ignore_case: bool = False
    full: bool = False


class NumberCmp(_Spec):
    """Numeric equality within tolerance |a-b| <= max(abs, rel*|b|). Strings such as
    "1,234.50", "$12", "-3 %" and "1.234,5" (with `decimal_comma`) are parsed."""

    op: Literal["number"]
    value: Any
    abs: float = Field(0.0, ge=0)
    rel: float = Field(0.0, ge=0)
    decimal_comma: bool = False


class SetCmp(_Spec):
    """Equality as sets (order and duplicates ignored); `text: true` normalises strings first."""

    op: Literal["set"]
    values: Any
    text: bool = False


class MultisetCmp(_Spec):
    """Equality as multisets (order ignored, counts matter)."""

    op: Literal["multiset"]
    values: Any
    text: bool = False


class JsonSubsetCmp(_Spec):
    """Every key of `value` is in the observed object with a matching value (recursively);
    lists must match element-wise unless `list_any: true` (each expected element found)."""

    op: Literal["json_subset"]
    value: Any
    list_any: bool = False


class JsonPathCmp(_Spec):
    """Apply a JSON path to the observed value, then compare with the nested comparator."""

    op: Literal["json_path"]
    path: str
    expect: "ComparatorSpec"

    @field_validator("path")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return _valid_path(value)


class DateCmp(_Spec):
    """Same date (and time, when both carry one) across formats: "2026-03-05",
    "March 5, 2026", "5 Mar 2026", "05/03/2026" (day first only with `day_first: true`),
    "2026-03-05 14:30", "2:30 PM". Times compare to the minute unless `seconds: true`."""

    op: Literal["date"]
    value: Any
    day_first: bool = False
    seconds: bool = False


ColumnNorm = Literal["exact", "text", "number", "date"]


class TableCmp(_Spec):
    """Rows (list of dicts) equal the expected rows on `columns` (default: the expected
    rows' keys), in order when `ordered`, each column normalised per `normalize`."""

    op: Literal["table"]
    rows: Any
    ordered: bool = False
    columns: list[str] | None = None
    normalize: dict[str, ColumnNorm] = Field(default_factory=dict)


class LengthCmp(_Spec):
    """The observed string or list has min <= len <= max."""

    op: Literal["length"]
    min: int = Field(0, ge=0)
    max: int | None = None


class PresentCmp(_Spec):
    """The observed value is not None (and, with `truthy`, not empty/false/0)."""

    op: Literal["present"]
    truthy: bool = False


class AbsentCmp(_Spec):
    """The observed value is None or an empty list: e.g. a deleted row's path."""

    op: Literal["absent"]


ComparatorSpec = Annotated[
    Union[
        EqualsCmp, TextCmp, ContainsCmp, RegexCmp, NumberCmp, SetCmp, MultisetCmp, JsonSubsetCmp,
        JsonPathCmp, DateCmp, TableCmp, LengthCmp, PresentCmp, AbsentCmp,
    ],
    Field(discriminator="op"),
]


# ---------------------------------------------------------------- nodes

class CheckNode(_Spec):
    """One leaf check: read a value with `get`, compare it with `expect`."""

    check: str = Field(min_length=1, description="A short human name, shown in evidence.")
    get: GetterSpec
    expect: ComparatorSpec


class AllNode(_Spec):
    all: list["NodeSpec"] = Field(min_length=1)
    name: str | None = None


class AnyNode(_Spec):
    any: list["NodeSpec"] = Field(min_length=1)
    name: str | None = None


class NotNode(_Spec):
    not_: "NodeSpec" = Field(alias="not")
    name: str | None = None
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class WeightedItem(_Spec):
    weight: float = Field(gt=0)
    node: "NodeSpec"


class WeightedNode(_Spec):
    """Partial credit: score = sum(weight * score) / sum(weight); passes at `threshold`."""

    weighted: list[WeightedItem] = Field(min_length=1)
    threshold: float = Field(1.0, ge=0, le=1)
    name: str | None = None


def _node_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        for key in ("check", "all", "any", "not", "weighted"):
            if key in value:
                return key
        return None
    for cls, key in ((CheckNode, "check"), (AllNode, "all"), (AnyNode, "any"), (NotNode, "not"),
                     (WeightedNode, "weighted")):
        if isinstance(value, cls):
            return key
    return None


NodeSpec = Annotated[
    Union[
        Annotated[CheckNode, Tag("check")],
        Annotated[AllNode, Tag("all")],
        Annotated[AnyNode, Tag("any")],
        Annotated[NotNode, Tag("not")],
        Annotated[WeightedNode, Tag("weighted")],
    ],
    Discriminator(_node_tag, custom_error_type="node_kind",
                  custom_error_message="a judge node needs one of the keys: check, all, any, not, weighted"),
]


class JudgeSpec(_Spec):
    """A task's judge: the checks that must hold at the end, and what may change."""

    #: All must pass (an implicit `all`). Progress = fraction of leaf checks met.
    checks: list[NodeSpec] = Field(default_factory=list)
    #: JSON paths into the app state that the task may change (wildcards `*`, row
    #: selectors `[id=42]`, `[title=Buy milk]`). Any other change is a violation.
    expected_changes: list[str] = Field(default_factory=list)
    #: Diff the app state from reset to the end. Default: on when the sandbox runs an app.
    side_effects: bool | None = None
    #: The service whose state is diffed.
    service: str = "app"

    @field_validator("expected_changes")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            _valid_path(pattern)
        return value


for _model in (JsonPathCmp, AllNode, AnyNode, NotNode, WeightedItem, WeightedNode, CheckNode, JudgeSpec):
    _model.model_rebuild()
