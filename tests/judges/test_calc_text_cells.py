"""A number entered as text in a spreadsheet ('5) is not the number 5 (issue 29, item 4):
the office suite's .xlsx reader, run as the guest runs it (system Python, `-I -S`, the
standard library only), marks a text cell that reads as a number, and the `cells`
comparator refuses it where a number or an amount is asked for, while the same cell
holding the number passes, and a text check of the text cell still passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cua.judges.comparators import compare, read_cells
from cua.judges.spec import CellsCmp
from cua.tasks.suites.office.gen import READER

openpyxl = pytest.importorskip("openpyxl")


def _dump(tmp_path: Path, b2: object, b3: object) -> str:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Item", "Cost"])
    sheet.append(["rent", b2])
    sheet.append(["Total", b3])
    path = tmp_path / "budget.xlsx"
    book.save(path)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    out = subprocess.run([python, "-I", "-S", "-c", READER, str(path)], capture_output=True, text=True, check=True)
    return out.stdout


def _cells(**cells: dict[str, object]) -> CellsCmp:
    return CellsCmp.model_validate({"op": "cells", "cells": cells})


def test_a_number_entered_as_text_is_refused_where_a_number_is_asked(tmp_path: Path) -> None:
    numbers = _dump(tmp_path, 5, 12.5)
    texts = _dump(tmp_path, "5", "12.50")
    assert "B2\tf=\tv=5\n" in numbers and "B2\tf=\tv='5\n" in texts
    assert read_cells(texts)["B2"] == ("", "5", True) and read_cells(numbers)["B2"] == ("", "5", False)
    assert read_cells(texts)["A3"] == ("", "Total", False)  # text that is not a number is left as it is

    as_number = _cells(B2={"formula": "", "value": 5}, B3={"value": "12.5", "type": "money"})
    assert compare(as_number, numbers) == (True, "")
    ok, why = compare(as_number, texts)
    assert not ok and "B2 holds the text '5', not a number" in why
    ok, why = compare(_cells(B3={"value": "12.5", "type": "money"}), texts)
    assert not ok and "not a money" in why

    # the text cell read as text passes, as does a label beside it
    assert compare(_cells(B2={"value": "5", "type": "text"}, A3={"value": "Total", "type": "text"}), texts) == (True, "")
