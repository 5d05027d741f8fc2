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
from typing import Annotated, Any, Union

from pydantic import (
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    PlainValidator,
    Tag,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from cua.judges.files import glob_problem
from cua.judges.paths import parse_path
from cua.judges.sidefx import ChangeTo
from cua.judges.spec_base import Spec as _Spec
from cua.judges.spec_base import valid_path as _valid_path
from cua.judges.spec_comparators import (
    AbsentCmp,
    AddressCmp,
    CellsCmp,
    CellSpec,
    ComparatorSpec,
    ContainsCmp,
    DateCmp,
    DateTimeCmp,
    EmailCmp,
    EqualsCmp,
    FormulaCmp,
    JsonPathCmp,
    JsonSubsetCmp,
    LengthCmp,
    MoneyCmp,
    MultisetCmp,
    NumberCmp,
    PhoneCmp,
    PresentCmp,
    RegexCmp,
    RichTextCmp,
    SetCmp,
    TableCmp,
    TextCmp,
    TimeCmp,
    UrlCmp,
    ValueTypeName,
)
from cua.judges.spec_getters import (
    AnswerGetter,
    AppStateGetter,
    ClipboardGetter,
    CommandGetter,
    CookiesGetter,
    DomGetter,
    DoneStatusGetter,
    FileGetter,
    FilesGetter,
    GetterSpec,
    LocalStorageGetter,
    NavigationGetter,
    SqlGetter,
    TitleGetter,
    UrlGetter,
    WindowsGetter,
)

__all__ = [
    "AbsentCmp",
    "AddressCmp",
    "AllNode",
    "AnswerGetter",
    "AnyNode",
    "AppStateGetter",
    "CellsCmp",
    "CellSpec",
    "CheckNode",
    "ClipboardGetter",
    "collection_wide",
    "CommandGetter",
    "ComparatorSpec",
    "ContainsCmp",
    "CookiesGetter",
    "DateCmp",
    "DateTimeCmp",
    "DomGetter",
    "DoneStatusGetter",
    "EmailCmp",
    "EqualsCmp",
    "FileGetter",
    "FilesGetter",
    "FormulaCmp",
    "GetterSpec",
    "JsonPathCmp",
    "JsonSubsetCmp",
    "JudgeSpec",
    "LengthCmp",
    "LocalStorageGetter",
    "MoneyCmp",
    "MultisetCmp",
    "NavigationGetter",
    "NodeSpec",
    "NotNode",
    "NumberCmp",
    "PhoneCmp",
    "PresentCmp",
    "RegexCmp",
    "RichTextCmp",
    "SetCmp",
    "SqlGetter",
    "TableCmp",
    "TextCmp",
    "TimeCmp",
    "TitleGetter",
    "UrlCmp",
    "UrlGetter",
    "ValueTypeName",
    "WeightedItem",
    "WeightedNode",
    "WindowsGetter",
]


#: The fewest words that can say why an allowance needs no check (`JudgeSpec.unjudged`).
_MIN_REASON_WORDS = 4


# ---------------------------------------------------------------- nodes

class CheckNode(_Spec):
    """One leaf check: read a value with `get`, compare it with `expect`."""

    check: str = Field(min_length=1, description="A short human name, shown in evidence.")
    get: GetterSpec
    expect: ComparatorSpec

    @model_validator(mode="before")
    @classmethod
    def _text_defaults(cls, data: Any) -> Any:
        """`op: text`'s (and a `table`'s text columns') defaults follow what is read. The agent's answer drops enclosing quotes
        (they come from the instruction's wording) and its case (`TextCmp`). A value the app
        stores (`app_state`, `sql`) keeps both: the app shows "WEEKLY PLAN" or '"Weekly plan"'
        to every user, another title than "Weekly plan". A template says otherwise explicitly."""
        if not isinstance(data, dict):
            return data
        get, expect = data.get("get"), data.get("expect")
        if not isinstance(expect, dict) or expect.get("op") not in ("text", "table"):
            return data
        kind = get.get("kind") if isinstance(get, dict) else get.kind if isinstance(get, _GETTERS) else None
        if kind == "answer" and expect.get("op") == "text" and "quotes" not in expect:
            return {**data, "expect": {**expect, "quotes": True}}
        if kind in STORED_KINDS and "case" not in expect:
            return {**data, "expect": {**expect, "case": True}}
        return data


#: Getters that read what the app stores, which its users see as it is stored.
STORED_KINDS = frozenset({"app_state", "sql"})
_GETTERS = (AnswerGetter, AppStateGetter, SqlGetter)


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


_SCALAR_TYPES = (bool, int, float, str, type(None))


def _incidental_in(value: Any) -> str:
    """An incidental change as a task file writes it: a path, or `{path, to}`."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        if set(value) != {"path", "to"} or not isinstance(value["path"], str):
            raise ValueError(f"an incidental change is a path, or {{path: <path>, to: <the value using the app sets>}}, "
                             f"not {value!r}")
        if not isinstance(value["to"], _SCALAR_TYPES):
            raise ValueError(f"incidental change {value['path']!r}: `to` is one value (true, a number, a text or null), "
                             f"not {value['to']!r}")
        return ChangeTo(value["path"], value["to"])
    raise ValueError(f"an incidental change is a path, or {{path: <path>, to: <value>}}, not {value!r}")


def _incidental_out(value: str) -> Any:
    return {"path": str(value), "to": value.to} if isinstance(value, ChangeTo) else str(value)


IncidentalChange = Annotated[str, PlainValidator(_incidental_in), PlainSerializer(_incidental_out),
                             WithJsonSchema({"anyOf": [
                                 {"type": "string", "description": "a field any value of which using the app may set"},
                                 {"type": "object", "additionalProperties": False, "required": ["path", "to"],
                                  "description": "a field that using the app may set only to `to`",
                                  "properties": {"path": {"type": "string"},
                                                 "to": {"type": ["boolean", "number", "string", "null"],
                                                        "description": "the only value the field may change to"}}},
                             ]})]


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
    #: one field (`messages[*].read`), never whole rows. Where using the app moves the
    #: field only one way, say so with the value it may take: `{path: "messages[*].read",
    #: to: true}` allows a message to become read, and a message marked unread is a
    #: violation (in the end state and at any point of the app's history). A plain path
    #: allows any value (a value the app computes from a formula). Its key in `unjudged`
    #: is the path.
    incidental_changes: list[IncidentalChange] = Field(default_factory=list)
    #: Fields the instruction leaves to the agent, as `table.column` of the app's database
    #: ("any free seat": `bookings.seat`): judge QA's probes never count a different value
    #: there as damage. The judge itself ignores this list.
    free_fields: list[str] = Field(default_factory=list)
    #: Globs of the user's files (relative to the home folder) the task may create, remove,
    #: move or edit (`cua.judges.files`: `*` within a folder, `**` across folders). Set, or
    #: when a check reads a `file`, the judge diffs a manifest of the home folder from reset
    #: to the end, and any other change of a (non-hidden) file is a violation.
    expected_files: list[str] | None = None
    #: Allowances no check needs to read, each with the reason: a key is an allowance of
    #: this judge (an expected or incidental change, a free field, an expected file) or a
    #: `table.column` of one ("notes.folder_id": "the instruction names no folder: any is
    #: right"). Every other allowance is read by a check, or the template does not load
    #: (`cua.judges.completeness`).
    unjudged: dict[str, str] = Field(default_factory=dict)
    #: Diff the app state from reset to the end. Default: on when the sandbox runs an app.
    side_effects: bool | None = None
    #: The service whose state is diffed.
    service: str = "app"
    #: A task over several apps (`sandbox.apps`): each other app's side-effect diff, by its
    #: service name, holding only what that app may change (`expected_changes`,
    #: `incidental_changes`, `free_fields`, `unjudged`); the checks stay here, each getter
    #: naming the service it reads. An app the sandbox runs without an entry may change nothing.
    apps: dict[str, JudgeSpec] = Field(default_factory=dict, max_length=16)
    #: The subgoals are a workflow's ordered checkpoints: the verdict's `credit` is the share
    #: of them met in order (a checkpoint counts only when every one before it holds too);
    #: passing still needs every check, and credit short of passing stays below 1.
    checkpoints: bool = False

    @field_validator("apps")
    @classmethod
    def _apps(cls, value: dict[str, JudgeSpec]) -> dict[str, JudgeSpec]:
        for name, sub in value.items():
            if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or name == "app":
                raise ValueError(f"apps key {name!r} is not the service of another app (sandbox.apps names them)")
            if sub.checks or sub.subgoals or sub.apps or sub.expected_files is not None or sub.checkpoints:
                raise ValueError(f"apps.{name} holds only what that app may change (expected_changes, "
                                 "incidental_changes, free_fields, unjudged); its checks go in the judge's checks")
        return {name: sub.model_copy(update={"service": name}) for name, sub in value.items()}

    @model_validator(mode="after")
    def _checkpoints(self) -> JudgeSpec:
        if self.checkpoints and len(self.subgoals) < 2:
            raise ValueError("checkpoints: true needs the workflow's ordered subgoals (at least 2)")
        return self

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

    @field_validator("unjudged")
    @classmethod
    def _unjudged(cls, value: dict[str, str]) -> dict[str, str]:
        for key, reason in value.items():
            if len(reason.split()) < _MIN_REASON_WORDS:
                raise ValueError(f"unjudged {key!r} needs a reason (at least {_MIN_REASON_WORDS} words) why no check "
                                 f"needs to read it, not {reason!r}")
        return value

    @field_validator("incidental_changes")
    @classmethod
    def _incidental(cls, value: list[IncidentalChange]) -> list[IncidentalChange]:
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
