"""What every part of the judge specification shares: strict, frozen models, and the check
that a JSON path parses (`cua.judges.paths`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from cua.judges.paths import PathError, parse_path

__all__ = ["Spec", "valid_path"]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def valid_path(value: str | None) -> str | None:
    if value is not None:
        try:
            parse_path(value)
        except PathError as exc:
            raise ValueError(str(exc)) from None
    return value
