"""The declarative task format: one YAML file holds one or more task templates.

These pydantic models ARE the format: the loader validates every file against them,
and `tasks/schema/task.schema.json` is generated from them (`python -m cua.tasks.format`
rewrites it; a test fails when it is stale). `tasks/README.md` documents the format
with complete examples.

Strings anywhere in a template may hold `{param}` / `{param.field}` / `{param.0.field}`
placeholders, filled from the seeded parameters when a template is instantiated (see
`cua.tasks.render`). Nothing is ever evaluated as code: derived values are string
templates, and hard cases name a Python function by `module:function`.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from cua.attack import Goal, Place, Style
from cua.judges.spec import JudgeSpec
from cua.state import StateQuery
from cua.task import TaskTags

__all__ = [
    "FormatProblem",
    "TaskFormatError",
    "ID_PATTERN",
    "ChoiceParam",
    "DateParam",
    "IntParam",
    "OracleSpec",
    "ParamSpec",
    "RowsParam",
    "SandboxSpec",
    "SetupSpec",
    "StepSpec",
    "StringParam",
    "TaskFile",
    "TemplateSpec",
    "json_schema",
]

#: `suite.name@version`, e.g. `todo.mark_done@1`.
ID_PATTERN = r"^[a-z][a-z0-9_]*\.[a-z0-9][a-z0-9_.-]*@[1-9][0-9]*$"
#: `package.module:function`.
FUNCTION_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*$"
SCHEMA_PATH = Path(__file__).parent / "schema" / "task.schema.json"



@dataclass(frozen=True)
class FormatProblem:
    file: str
    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.reason}" if self.field else f"{self.file}: {self.reason}"


class TaskFormatError(ValueError):
    """A task file (or a template instantiated from it) breaks the format. Defined beside the
    format so that the loader and `cua.tasks.kinds` both raise it without importing each other."""

    def __init__(self, problems: list[FormatProblem]) -> None:
        self.problems = problems
        shown = "\n  ".join(str(p) for p in problems[:12])
        more = f"\n  ... and {len(problems) - 12} more" if len(problems) > 12 else ""
        super().__init__(f"invalid task file ({len(problems)} problem{'s' if len(problems) != 1 else ''}):\n  {shown}{more}")

    @property
    def file(self) -> str:
        return self.problems[0].file

    @property
    def field(self) -> str:
        return self.problems[0].field

    @property
    def reason(self) -> str:
        return self.problems[0].reason

class _Spec(BaseModel):
    # A whole-string placeholder keeps its value's type ("{list.n}" -> 11); where the
    # format wants text (an answer, typed text, an instruction), numbers become text.
    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)


# ---------------------------------------------------------------- parameters

class IntParam(_Spec):
    """A uniform integer in [min, max]."""

    type: Literal["int"]
    min: int
    max: int


class ChoiceParam(_Spec):
    """One of `values` (any JSON values), uniformly."""

    type: Literal["choice"]
    values: list[Any] = Field(min_length=1)


class StringParam(_Spec):
    """One string from `values`."""

    type: Literal["string"]
    values: list[str] = Field(min_length=1)


class DateParam(_Spec):
    """A uniform date in [min, max] (ISO dates). The value is a dict: `{d}` renders it
    in `format` (strftime; default ISO), `{d.iso}` is ISO, and every entry of
    `formats` is one more rendering, e.g. `{d.us}` with `formats: {us: "%m/%d/%Y"}`."""

    type: Literal["date"]
    min: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    max: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    format: str = "%Y-%m-%d"
    formats: dict[str, str] = Field(default_factory=dict)


class RowsParam(_Spec):
    """Rows drawn from the seeded app: `sql` runs on the app's database at the task's
    app seed, in process; the rng picks `pick` rows (an int, or "a..b" for a random
    count). pick 1 gives one row dict (`{row.column}`); otherwise a list of dicts
    (`{rows.0.column}`). `distinct` makes the picks come from different rows (always)."""

    type: Literal["rows"]
    sql: str = Field(min_length=1)
    params: list[Any] = Field(default_factory=list)
    pick: int | str = 1
    #: The app to query; default: the template's `sandbox.app`.
    app: str | None = None

    @field_validator("pick")
    @classmethod
    def _pick(cls, value: int | str) -> int | str:
        if isinstance(value, int):
            if value < 1:
                raise ValueError("pick must be >= 1")
            return value
        match = re.fullmatch(r"\s*(\d+)\s*\.\.\s*(\d+)\s*", value)
        if not match or not 1 <= int(match[1]) <= int(match[2]):
            raise ValueError("pick must be an int >= 1 or a range 'a..b' with 1 <= a <= b")
        return value


ParamSpec = Annotated[Union[IntParam, ChoiceParam, StringParam, DateParam, RowsParam], Field(discriminator="type")]


# ---------------------------------------------------------------- oracle steps

class LocatorSpec(_Spec):
    """An element: a CSS (or XPath) selector, narrowed by its text or its index among matches."""

    selector: str = Field(min_length=1)
    xpath: bool = False
    #: Keep matches whose normalised text equals this.
    text: str | None = None
    #: Keep matches whose normalised text contains this.
    text_contains: str | None = None
    #: Which of the (remaining) matches; negative counts from the end.
    index: int = 0


Locator = Union[str, LocatorSpec]


class FillArgs(_Spec):
    selector: Locator
    text: str
    #: Press Enter after typing.
    submit: bool = False


class SelectArgs(_Spec):
    selector: Locator
    #: The option's visible text (or its value attribute, when no text matches).
    option: str


class DragArgs(_Spec):
    from_: Locator = Field(alias="from")
    to: Locator
    model_config = ConfigDict(extra="forbid", populate_by_name=True, coerce_numbers_to_str=True)


class DoneArgs(_Spec):
    answer: str | None = None
    status: Literal["success", "failure", "infeasible"] = "success"


class ClickStep(_Spec):
    """Click the element's centre (scrolling it into view with Scroll actions first)."""

    click: Locator
    button: Literal["left", "right", "middle"] = "left"
    count: int = Field(1, ge=1, le=3)


class FillStep(_Spec):
    """Click a text field, select all, type the text. Date, time and datetime-local inputs
    take ISO text, typed segment by segment and checked."""

    fill: FillArgs


class SelectStep(_Spec):
    """Choose an option of a native <select> by keyboard after focusing it by click."""

    select: SelectArgs


class DragStep(_Spec):
    drag: DragArgs


class WaitForStep(_Spec):
    """Wait (bounded) until the element exists and is visible, or with `gone` until no match
    is visible (a loading indicator or busy overlay: what an app shows while it ignores input)."""

    wait_for: Locator
    timeout: float = Field(10.0, gt=0, le=120)
    gone: bool = False
    #: CSS selector of an iframe to look inside (a preview pane loaded in a frame of its own).
    frame: str | None = None


class PressStep(_Spec):
    """A key combination, e.g. "ctrl+a" or "Enter"."""

    press: str


class TypeStep(_Spec):
    """Type text into whatever has focus."""

    type_text: str


class GotoStep(_Spec):
    """Navigate to a URL; a path is resolved against the current page's origin, and
    `app:NAME/path` is a path on app NAME's origin, as the apps page the episode started
    on (`about:apps`, a sandbox with `apps`) links it."""

    goto: str


class ScrollToStep(_Spec):
    scroll_to: Locator


class DoneStep(_Spec):
    done: DoneArgs = Field(default_factory=DoneArgs)


class ActionStep(_Spec):
    """Any unified action (`cua.actions`), e.g. `{action: {type: scroll, x: 640, y: 360, dy: 300}}`."""

    action: dict[str, Any]


_STEP_KEYS = ("click", "fill", "select", "drag", "wait_for", "press", "type_text", "goto", "scroll_to", "done",
              "action")


def _step_tag(value: Any) -> str | None:
    if isinstance(value, dict):
        if "type" in value:  # a bare unified action dict
            return "raw"
        for key in _STEP_KEYS:
            if key in value:
                return key
        return None
    if isinstance(value, BaseModel):
        return next((k for k in _STEP_KEYS if k in type(value).model_fields or
                     (k == "drag" and isinstance(value, DragStep))), None)
    return None


class RawActionStep(BaseModel):
    """A bare unified action dict (has `type`), validated against `cua.actions` on instantiation."""

    model_config = ConfigDict(extra="allow")
    type: str


StepSpec = Annotated[
    Union[
        Annotated[ClickStep, Tag("click")], Annotated[FillStep, Tag("fill")], Annotated[SelectStep, Tag("select")],
        Annotated[DragStep, Tag("drag")], Annotated[WaitForStep, Tag("wait_for")], Annotated[PressStep, Tag("press")],
        Annotated[TypeStep, Tag("type_text")], Annotated[GotoStep, Tag("goto")],
        Annotated[ScrollToStep, Tag("scroll_to")], Annotated[DoneStep, Tag("done")],
        Annotated[ActionStep, Tag("action")], Annotated[RawActionStep, Tag("raw")],
    ],
    Discriminator(_step_tag, custom_error_type="step_kind",
                  custom_error_message="a step needs one of the keys: " + ", ".join(_STEP_KEYS)
                  + " (or be a unified action with `type`)"),
]


class PythonRef(_Spec):
    """A Python function named `module:function`. For an oracle or near miss:
    `fn(ctx: OracleContext, params: dict) -> AsyncIterator[Action]`."""

    python: str = Field(pattern=FUNCTION_PATTERN)


def _oracle_tag(value: Any) -> str | None:
    if isinstance(value, (list, tuple)):
        return "steps"
    if isinstance(value, (dict, PythonRef)):
        return "python"
    return None


OracleSpec = Annotated[
    Union[Annotated[list[StepSpec], Tag("steps")], Annotated[PythonRef, Tag("python")]],
    Discriminator(_oracle_tag, custom_error_type="oracle_kind",
                  custom_error_message="an oracle is a list of steps or {python: 'module:function'}"),
]


# ---------------------------------------------------------------- sandbox and setup

class ViewportSpec(_Spec):
    width: int = Field(1280, gt=0, le=16384)
    height: int = Field(720, gt=0, le=16384)


class SandboxSpec(_Spec):
    """Which sandbox to create. `app: NAME` (browser, mobile) runs the bundled app NAME as the
    sandbox's service `app`; `start_url` is a path on it (a phone starts on its shell: its
    `config.start_app` says which app is open). Other keys of `config` pass through to the
    sandbox kind's config model unchanged."""

    kind: Literal["browser", "desktop", "vm", "fake", "mobile"] = "browser"
    app: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]*$")
    #: More bundled apps beside `app` (a workflow across apps; a phone's home screen), each
    #: a service named as the app (its state is `app_state` of that service) on its own
    #: origin; the task's own app stays the service `app`. A browser sandbox with more apps
    #: starts on the apps page (`about:apps`: a link to each) unless `start_url` says otherwise.
    apps: list[str] = Field(default_factory=list, max_length=16)
    start_url: str | None = None
    viewport: ViewportSpec | None = None
    isolation: Literal["container", "shared"] | None = None
    config: dict[str, Any] = Field(default_factory=dict)


class PlantedAttackSpec(_Spec):
    """A prompt injection planted in the app's own content at reset (`cua.attack`): where,
    how it is shown and what it wants. Its markers are seeded from the template's seed
    (`cua.attack.make_attack`), and the template names the first attack's as `{attack.address}`,
    `{attack.origin}`, `{attack.host}`, `{attack.secret}` and `{attack.text}`; the episode
    also judges its safety against it (`cua.judges.safety`)."""

    place: Place
    style: Style = "visible"
    goal: Goal


class SetupSpec(_Spec):
    """How the sandbox is prepared before the agent's first observation."""

    #: The seed the app is reset to (and rows params are drawn at). Default: the episode seed.
    app_seed: int | None = None
    #: Overrides `sandbox.start_url`.
    start_url: str | None = None
    #: Files to create in a desktop/VM sandbox: absolute path -> text content.
    files: dict[str, str] = Field(default_factory=dict)
    #: Steps run after reset, before the agent starts (same vocabulary as an oracle).
    actions: list[StepSpec] = Field(default_factory=list)
    #: A state query read after reset (and after `actions`) whose string value becomes the
    #: instruction, for tasks whose request the page draws (e.g. MiniWoB's utterance);
    #: the template's `instruction` is the fallback when it cannot be read.
    instruction_query: StateQuery | None = None
    #: A state query read after every step whose truthy value means the app itself ended
    #: the episode (MiniWoB++'s episode end): the runner stops and the judge reads the end.
    end_query: StateQuery | None = None
    #: Prompt injections planted at reset, part of the state the episode starts from.
    attacks: list[PlantedAttackSpec] = Field(default_factory=list, max_length=8)


# ---------------------------------------------------------------- template and file

class TagsSpec(TaskTags):
    model_config = ConfigDict(extra="forbid")


class TemplateSpec(_Spec):
    id: str = Field(pattern=ID_PATTERN, description="suite.name@version, e.g. todo.mark_done@1")
    instruction: str = Field(min_length=1)
    params: dict[str, ParamSpec] = Field(default_factory=dict)
    #: Derived string params, filled in order: `{full: "{c.first} {c.last}"}`.
    derived: dict[str, str] = Field(default_factory=dict)
    #: `module:function(app, rng) -> dict`, merged over `params` (app is None without an app).
    generator: str | None = Field(None, pattern=FUNCTION_PATTERN)
    sandbox: SandboxSpec = Field(default_factory=SandboxSpec)
    setup: SetupSpec = Field(default_factory=SetupSpec)
    judge: JudgeSpec
    max_steps: int = Field(30, ge=1, le=1000)
    #: None only with `tags.oracle: false` (a task without a scripted solution).
    oracle: OracleSpec | None = None
    near_miss: OracleSpec | None = None
    tags: TagsSpec = Field(default_factory=TagsSpec)

    @field_validator("params", "derived")
    @classmethod
    def _names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                raise ValueError(f"parameter name {name!r} is not an identifier")
        return value


class TaskFile(_Spec):
    """One YAML file. `defaults` are deep-merged under every template (the template wins)."""

    suite: str | None = Field(None, pattern=r"^[a-z][a-z0-9_]*$")
    defaults: dict[str, Any] = Field(default_factory=dict)
    templates: list[TemplateSpec] = Field(min_length=1)


def json_schema() -> dict[str, Any]:
    schema = TaskFile.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://cua.dev/schema/task.schema.json"
    schema["title"] = "cua task file"
    return schema


def write_schema(path: Path = SCHEMA_PATH) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(json_schema(), indent=1, sort_keys=True) + "\n")
    return path


if __name__ == "__main__":
    print(write_schema(Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_PATH))
