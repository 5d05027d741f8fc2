"""Argument types the `cua eval` and `cua tasks` commands share: bad input is a usage
error that names the value, never a traceback."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["whole_number"]


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
