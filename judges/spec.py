"""The judge specification: what a task file's `judge:` section may say, as plain data.

A judge spec names *getters* (which state to read, as `cua.state` queries, or the
agent's final answer), *comparators* (how an observed value must relate to the
expected one) and *combinators* (all / any / not / weighted) over named checks, plus
the changes the task is allowed to make (everything else is a side-effect violation).

These models are the contract the task format publishes in its JSON Schema; the
executable judge (`cua.judges.judge.StateJudge`) is built from them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from cua.judges.files import glob_problem
from cua.judges.paths import PathError, parse_path
from cua.judges.values.web import QueryRule

__all__ = [
    "AllNode",
    "collection_wide",
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
    after reset and at the end (`cua.judges.files`). `never` a removal: `path: removed`,
    `expect: {op: length, value: 0}`."""

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


class AnswerGetter(_Spec):
    """The agent's final answer: `done(answer=...)`, None when it gave none."""

    kind: Literal["answer"]


class DoneStatusGetter(_Spec):
    """How the agent ended: "success", "failure", "infeasible", or None (no `done`)."""

    kind: Literal["done_status"]


GetterSpec = Annotated[
    Union[
        AppStateGetter, SqlGetter, UrlGetter, TitleGetter, DomGetter, LocalStorageGetter, CookiesGetter, NavigationGetter,
        FileGetter, FilesGetter, CommandGetter, WindowsGetter, ClipboardGetter, AnswerGetter, DoneStatusGetter,
    ],
    Field(discriminator="kind"),
]


# ---------------------------------------------------------------- comparators

ValueTypeName = Literal["email", "url", "date", "time", "datetime", "money", "number", "text", "rich_text", "formula",
                        "phone", "address"]


class EqualsCmp(_Spec):
    """Exact equality of JSON values (1 == 1.0, True is not 1). With `type`, the same
    shape (lists, objects) whose scalar leaves are equal as that value type
    (`[["{p.email}"]]` with `type: email`: one message to one address, in any case)."""

    op: Literal["equals"]
    value: Any = None
    type: ValueTypeName | None = None


class TextCmp(_Spec):
    """Text equality after normalisation: Unicode NFKC, whitespace collapsed and trimmed,
    casefolded unless `case: true` (free text the agent types is judged as text, case and
    spacing aside: a title stored as "buy milk" passes for "Buy milk"), punctuation dropped
    when `punctuation: false`. Quotes enclosing the whole text ('"Buy milk"' = 'Buy milk')
    are dropped only with `quotes: true`, which is the default for the agent's answer (the
    quotes come from the instruction's wording) and for nothing else: a title stored with
    its quotes is another title, shown with them to every user."""

    op: Literal["text"]
    value: Any
    case: bool = False
    punctuation: bool = True
    quotes: bool = False


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
    """Same date (and time, when the expected value carries one) across formats:
    "2026-03-05", "March 5, 2026", "5 Mar 2026", "05/03/2026" (day first only with
    `day_first: true`), "2026-03-05 14:30", "2:30 PM". Times compare to the minute unless
    `seconds: true`. A value holding two dates or times ("March 5 or 6") fails
    (`cua.judges.values.temporal`)."""

    op: Literal["date"]
    value: Any
    day_first: bool = False
    seconds: bool = False


class TimeCmp(_Spec):
    """The same wall-clock time ("14:30" = "2:30 PM"), to the minute unless `seconds`; a
    date beside it is not compared; two times ("2 or 3 PM") fail."""

    op: Literal["time"]
    value: Any
    seconds: bool = False


class DateTimeCmp(_Spec):
    """The same date and time, both required, in any format `date` reads."""

    op: Literal["datetime"]
    value: Any
    day_first: bool = False
    seconds: bool = False


class EmailCmp(_Spec):
    """The same email address: case, enclosing quotes, `mailto:` and a display name
    ("Ana <ana@x.org>") aside; two addresses fail (`cua.judges.values.web`)."""

    op: Literal["email"]
    value: Any


class UrlCmp(_Spec):
    """The same URL: scheme and host case, a default port, percent-escapes of unreserved
    characters aside; query parameters compared as a multiset, so a parameter added,
    repeated or missing fails, except those in `ignore_params` (parameters that do not
    change what the page shows) and, unless `blank_is_absent: false`, those with an empty
    value (a blank filter field), and those written with the value the page takes when
    they are absent (`defaults`: `{sort: featured}`: the same page). `query_rules` are the
    app's declared parameters (`QueryRule`: how the app reads each, its default): the task
    loader fills them in from the template's bundled app (`WebApp.query_params`), so a
    template on a bundled app writes no `defaults`, and a parameter the app upper-cases,
    reads as an integer or defaults is compared as the app reads it. A path-only `value`
    ("/c/shoes?sort=price") compares the path, query and fragment. `params` gives the query as name -> value (a list for
    a repeated one), unencoded: `{value: "/c/shoes", params: {brand: "Acme & Co"}}`."""

    op: Literal["url"]
    value: Any
    params: dict[str, str | list[str]] | None = None
    ignore_params: list[str] = Field(default_factory=list)
    blank_is_absent: bool = True
    defaults: dict[str, str] = Field(default_factory=dict)
    query_rules: dict[str, QueryRule] = Field(default_factory=dict)


class MoneyCmp(_Spec):
    """The same amount to the cent and the same currency ("$1,234.50" = "1234.5 USD");
    an amount without a currency is in `currency` (or the expected value's); two
    amounts or two currencies fail."""

    op: Literal["money"]
    value: Any
    currency: str | None = None
    decimal_comma: bool = False


class RichTextCmp(_Spec):
    """Rich text (HTML) equal by what it shows, not its markup: the same lines (paragraph,
    heading, list item) with the same text and the same inline formatting (bold, italic,
    underline, links); `strong` is `b`, `em` is `i`, `p` is `div`, whitespace collapsed,
    attributes other than href ignored. `formatting: false` compares the text only;
    `case: false` ignores case."""

    op: Literal["rich_text"]
    value: Any
    formatting: bool = True
    case: bool = True


class PhoneCmp(_Spec):
    """The same phone number however it is grouped: digits compared, a 10-digit national
    number given the country code `country` ("(555) 010-2000" = "+1 555 010 2000")."""

    op: Literal["phone"]
    value: Any
    country: str = "1"


class AddressCmp(_Spec):
    """The same postal address: case, punctuation and line breaks ignored, the usual
    abbreviations spelled out ("St." = "Street", "Apt" = "Apartment", "N" = "North")."""

    op: Literal["address"]
    value: Any


class FormulaCmp(_Spec):
    """A spreadsheet formula (the text starts with "="; a typed-in value is not a formula
    and fails). With `value`: the same formula as written, up to absolute references,
    case, spacing and a range's corner order ("=sum($B$2:B7)" = "=SUM(B2:B7)",
    `cua.judges.values.formula`). With `computes` (a formula): the formula computes what
    that one does, judged by re-computing both with the sheets app's evaluator over the
    cells they read, perturbed ("=SUM(B2:B3,B4)" and "=B2+B3+B4" compute "=SUM(B2:B4)";
    "=SUM(B2:B4)*0+9", right today, does not). Which cells a formula names and which
    functions it calls is its shape; only what it computes is judged."""

    op: Literal["formula"]
    value: Any = None
    computes: str | None = None

    @model_validator(mode="after")
    def _one_way(self) -> "FormulaCmp":
        if (self.value is None) == (self.computes is None):
            raise ValueError("a formula comparator takes either `value` (the formula as written) or `computes` "
                             "(a formula it must compute the same as)")
        if self.computes is not None and not self.computes.startswith("="):
            raise ValueError(f"`computes` is a formula, starting with '=': {self.computes!r}")
        return self


class CellSpec(_Spec):
    """One cell of a saved spreadsheet: its `formula` as the file stores it (no "="),
    compared as a formula (`$`, case, spacing and a range's corner order aside; a list
    gives the formulas that count), "" for a plain value (a formula there fails), None
    not compared; its `value` compared as `type`."""

    formula: str | list[str] | None = None
    value: Any = None
    type: Literal["number", "text", "date", "time", "datetime", "money", "email", "url", "phone", "address"] = "number"


class CellsCmp(_Spec):
    """Cells of a saved spreadsheet as the office readers print them (one line per filled
    cell, "REF<TAB>f=FORMULA<TAB>v=VALUE"): every cell in `cells` is there, with the
    formula and value it names, each compared as its type (`cua.judges.values`), so an
    absolute reference or another spelling of the value is the same cell."""

    op: Literal["cells"]
    #: A string only as a template's placeholder ("{tax_cells}"), rendered to the mapping.
    cells: dict[str, CellSpec] | str = Field(min_length=1)


ColumnNorm = Literal["exact", "text", "number", "date", "time", "datetime", "phone", "address", "rich_text", "email",
                     "url", "money", "formula"]


class TableCmp(_Spec):
    """Rows (list of dicts) equal the expected rows on `columns` (default: the expected
    rows' keys), in order when `ordered`, each column compared as the value type that
    `normalize` names (`cua.judges.values`; `exact`: equal JSON)."""

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
        JsonPathCmp, DateCmp, TimeCmp, DateTimeCmp, EmailCmp, UrlCmp, MoneyCmp, TableCmp, LengthCmp, PresentCmp,
        AbsentCmp, RichTextCmp, PhoneCmp, AddressCmp, FormulaCmp, CellsCmp,
    ],
    Field(discriminator="op"),
]


# ---------------------------------------------------------------- nodes

class CheckNode(_Spec):
    """One leaf check: read a value with `get`, compare it with `expect`."""

    check: str = Field(min_length=1, description="A short human name, shown in evidence.")
    get: GetterSpec
    expect: ComparatorSpec

    @model_validator(mode="before")
    @classmethod
    def _answer_text_quotes(cls, data: Any) -> Any:
        """`op: text` on the agent's answer drops enclosing quotes unless it says otherwise
        (`TextCmp.quotes`); on stored values it keeps them."""
        if not isinstance(data, dict):
            return data
        get, expect = data.get("get"), data.get("expect")
        on_answer = (get.get("kind") if isinstance(get, dict) else None) == "answer" or isinstance(get, AnswerGetter)
        if on_answer and isinstance(expect, dict) and expect.get("op") == "text" and "quotes" not in expect:
            return {**data, "expect": {**expect, "quotes": True}}
        return data


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
    #: Checks that count toward dense progress only (never toward passing): the
    #: milestones on the way, in order. Reaching one counts every one before it (the
    #: record's page was open before its form was filled), so a milestone that no longer
    #: shows (a form cleared by saving) does not take back what a later one proves.
    subgoals: list[NodeSpec] = Field(default_factory=list)
    #: JSON paths into the app state that the task may change, naming records and
    #: fields: `todos[id=42].done` (a field of one row), `todos[title=Buy milk]` (that
    #: row added or removed; a change inside a row needs its field named),
    #: `todos[list_id=3][*].done` (one field of the rows a selector names). A pattern
    #: that names every row (`todos[*]`, `*`) is refused. Any other change is a violation.
    expected_changes: list[str] = Field(default_factory=list)
    #: Changes that merely using the app makes anywhere (a message marked read when
    #: opened): allowed, and never taken for the task's subject by judge QA. Each names
    #: one field (`messages[*].read`), never whole rows.
    incidental_changes: list[str] = Field(default_factory=list)
    #: Fields the instruction leaves to the agent, as `table.column` of the app's database
    #: ("any free seat": `bookings.seat`): judge QA's probes never count a different value
    #: there as damage. The judge itself ignores this list.
    free_fields: list[str] = Field(default_factory=list)
    #: Globs of the user's files (relative to the home folder) the task may create, remove,
    #: move or edit (`cua.judges.files`: `*` within a folder, `**` across folders). Set, or
    #: when a check reads a `file`, the judge diffs a manifest of the home folder from reset
    #: to the end, and any other change of a (non-hidden) file is a violation.
    expected_files: list[str] | None = None
    #: Diff the app state from reset to the end. Default: on when the sandbox runs an app.
    side_effects: bool | None = None
    #: The service whose state is diffed.
    service: str = "app"

    @field_validator("expected_changes")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for pattern in value:
            _valid_path(pattern)
            problem = collection_wide(pattern)
            if problem:
                raise ValueError(f"expected change {pattern!r} {problem}: name the rows and their fields")
        return value

    @field_validator("expected_files")
    @classmethod
    def _files(cls, value: list[str] | None) -> list[str] | None:
        for pattern in value or []:
            problem = glob_problem(pattern)
            if problem:
                raise ValueError(f"expected file {pattern!r} {problem}")
        return value

    @field_validator("free_fields")
    @classmethod
    def _free(cls, value: list[str]) -> list[str]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"free field {name!r} is not table.column")
        return value

    @field_validator("incidental_changes")
    @classmethod
    def _incidental(cls, value: list[str]) -> list[str]:
        for pattern in value:
            _valid_path(pattern)
            segments = parse_path(pattern)
            if not segments or segments[-1].key in (None, "*") or segments[-1].selectors:
                raise ValueError(f"incidental change {pattern!r} must end with a field name (e.g. messages[*].read): "
                                 "using an app never adds or removes rows")
        return value


def collection_wide(pattern: str) -> str | None:
    """Why a change pattern allows "anything under this collection", or None when it
    names records: no `*` key, and no `[*]` unless a condition on the same list (or an
    earlier one) says which rows."""
    narrowed = False
    for seg in parse_path(pattern):
        if seg.key == "*":
            return "allows a change under any key"
        kinds = [k for k, _ in seg.selectors]
        if "cond" in kinds or "index" in kinds:
            narrowed = True
        if "star" in kinds and not narrowed:
            return "allows every row"
    return None


for _model in (JsonPathCmp, AllNode, AnyNode, NotNode, WeightedItem, WeightedNode, CheckNode, JudgeSpec):
    _model.model_rebuild()
