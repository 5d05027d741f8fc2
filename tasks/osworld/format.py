"""The OSWorld task file format, as data: what one `<uuid>.json` holds.

A task names an instruction, `config` steps that prepare the machine (download files,
launch or open apps, run commands, focus a window, sleep), and an `evaluator`: one
metric function or several (`func` a list, joined by `conj`), each comparing what a
`result` getter reads from the machine with what an `expected` getter gives (a rule, a
reference file), with `options`, after `postconfig` steps. Written from the format's
public description; fields this adapter does not use are kept and ignored.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ConfigStep", "Evaluator", "GetterSpec", "OSWorldTask"]


class ConfigStep(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class GetterSpec(BaseModel):
    """`{"type": "vm_file", "path": ..., "dest": ...}` and the like: the type names the
    getter; the other keys are its arguments."""

    model_config = ConfigDict(extra="allow")
    type: str

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class Evaluator(BaseModel):
    model_config = ConfigDict(extra="allow")
    func: str | list[str]
    conj: Literal["and", "or"] = "and"
    result: GetterSpec | list[GetterSpec] | None = None
    expected: GetterSpec | list[GetterSpec] | None = None
    options: dict[str, Any] | list[dict[str, Any]] = Field(default_factory=dict)
    postconfig: list[ConfigStep] = Field(default_factory=list)

    def items(self) -> list[tuple[str, GetterSpec | None, GetterSpec | None, dict[str, Any]]]:
        """(metric, result getter, expected getter, options) for each function."""
        funcs = [self.func] if isinstance(self.func, str) else list(self.func)

        def nth(value: Any, i: int) -> Any:
            if isinstance(value, list):
                return value[i] if i < len(value) else None
            return value

        return [(f, nth(self.result, i), nth(self.expected, i), nth(self.options, i) or {})
                for i, f in enumerate(funcs)]


class OSWorldTask(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1, max_length=200)
    instruction: str
    snapshot: str = ""
    source: str = ""
    config: list[ConfigStep] = Field(default_factory=list)
    related_apps: list[str] = Field(default_factory=list)
    evaluator: Evaluator

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not all(c.isalnum() or c in "-_." for c in value):
            raise ValueError("an id is letters, digits, '-', '_' and '.'")
        return value
