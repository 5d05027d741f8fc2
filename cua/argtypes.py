"""Argument types the `cua eval` and `cua tasks` commands share: bad input is a usage
error that names the value, never a traceback."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Literal

__all__ = ["real_number", "snapshot_period", "suite_name", "whole_number"]


def whole_number(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high]; anything else is a usage error, not a traceback."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{value} is out of range: at least {low}"
                                             + (f" and at most {high}" if high is not None else ""))
        return value

    return parse


def real_number(low: float, *, above: bool = False) -> Callable[[str], float]:
    """An argparse type: a number at least `low` (above it, with `above`); NaN and anything
    else is a usage error."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if value != value or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {'above' if above else 'at least'} {low:g}")
        return value

    return parse


def snapshot_period(text: str) -> Literal["every", "none"] | int:
    """An argparse type, `--snapshots`: `every` step, `none`, or every N-th step (N >= 1; 1 is every)."""
    value = text.strip().lower()
    if value == "every" or value == "none":
        return "every" if value == "every" else "none"
    try:
        period = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not every, none or a number of steps") from None
    if period < 1:
        raise argparse.ArgumentTypeError(f"{period} is out of range: every N-th step takes N at least 1")
    return "every" if period == 1 else period


def suite_name(text: str) -> str:
    """An argparse type: a suite's name, the prefix of its template ids (`todo.add_item@1`)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a suite name: lowercase letters, digits and _, "
                                         "beginning with a letter")
    return text
