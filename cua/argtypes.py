"""Argument types the `cua eval` and `cua tasks` commands share: bad input is a usage
error that names the value, never a traceback."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["real_number", "whole_number"]


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
