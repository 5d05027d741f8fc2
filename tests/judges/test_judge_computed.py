"""What a spreadsheet judge accepts is what the sheet computes, not what it looks like.

A formula check (`op: formula, computes: F`) re-computes the agent's formula with the
sheets app's own evaluator over perturbed cells: every formula that computes F passes,
whatever its spelling; a constant dressed as a formula, another range or function fails.
A number check on stored state needs a number: text that reads as one (`'1623`) is text
to the app, whose sums skip it; an answer is still read leniently."""

from __future__ import annotations

from _apps_common import open_app
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from cua.actions import Done
from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.getters import build_getter
from cua.judges.judge import StateJudge
from cua.state import StateResult
from cua.task import JudgeInput

CMP: TypeAdapter[S.ComparatorSpec] = TypeAdapter(S.ComparatorSpec)
FAST = settings(max_examples=80, deadline=None)
FUNCTIONS = ("SUM", "MIN", "MAX", "AVERAGE")


def computes(observed: object, expected: str) -> bool:
    return compare(CMP.validate_python({"op": "formula", "computes": expected}), observed)[0]


ranges = st.tuples(st.sampled_from(FUNCTIONS), st.sampled_from("BCDH"), st.integers(2, 30), st.integers(1, 15))


@FAST
@given(ranges, st.data())
def test_every_spelling_of_the_same_computation_passes(r: tuple[str, str, int, int], data: st.DataObject) -> None:
    fn, col, lo, size = r
    hi = lo + size
    cut = data.draw(st.integers(lo, hi - 1))
    expected = f"={fn}({col}{lo}:{col}{hi})"
    forms = [
        f"={fn}(${col}${lo}:${col}${hi})",                           # absolute references
        f"={fn.lower()}({col.lower()}{lo}:{col}{hi})",               # case
        f"= {fn} ( {col}{lo} : {col}{hi} )",                         # spacing
        f"={fn}({col}{hi}:{col}{lo})",                               # corners swapped
        f"={fn}({col}{lo}:{col}{cut},{col}{cut + 1}:{col}{hi})",      # the range split in two
        f"={fn}({col}{lo}:{col}{hi})+0",                             # an identity term
    ]
    if fn == "SUM":
        forms.append("=" + "+".join(f"{col}{row}" for row in range(lo, hi + 1)))
    if fn == "AVERAGE":
        forms.append(f"=SUM({col}{lo}:{col}{hi})/COUNT({col}{lo}:{col}{hi})")
    for form in forms:
        assert computes(form, expected), form


@FAST
@given(ranges, st.integers(-5000, 5000))
def test_a_constant_or_another_computation_fails(r: tuple[str, str, int, int], k: int) -> None:
    fn, col, lo, size = r
    hi = lo + size
    expected = f"={fn}({col}{lo}:{col}{hi})"
    other = FUNCTIONS[(FUNCTIONS.index(fn) + 1) % len(FUNCTIONS)]
    for form in (
        f"={fn}({col}{lo}:{col}{hi})*0+{k}",     # the right shape, a hard-coded value (the probe)
        f"={k}",                                 # a constant dressed as a formula
        str(k),                                  # a typed number
        f"={fn}({col}{lo}:{col}{hi + 1})",       # one cell too many
        f"={fn}({col}{lo + 1}:{col}{hi})",       # one cell short
        f"={other}({col}{lo}:{col}{hi})",        # another function
        f"={fn}({col}{lo}:{col}{hi})+A1",        # reads a cell it should not
        f"={fn}({col}{lo}:{col}{hi}",            # does not parse: the sheet shows #ERROR!
        f" ={fn}({col}{lo}:{col}{hi})",          # a leading space: the app keeps it as text
    ):
        assert not computes(form, expected), form


def test_the_verdict_is_deterministic() -> None:
    spec = CMP.validate_python({"op": "formula", "computes": "=SUM(D2:D41)"})
    first = compare(spec, "=SUM(D2:D41)*0+2331")
    assert all(compare(spec, "=SUM(D2:D41)*0+2331") == first for _ in range(5))
    assert not first[0] and "computes 2331" in first[1]


def test_a_number_typed_as_text_is_not_the_stored_number() -> None:
    """sheets.set_budget_value's check on the real app: `'1623` is stored as text (the
    sheet's sums skip it) and fails; 1623 typed as a number passes; an answer "1,623"
    still reads as the number."""
    _, web, control = open_app("sheets")
    spec = S.JudgeSpec.model_validate({"checks": [
        {"check": "the cell holds the amount", "get": {"kind": "app_state", "path": "sheets[name=Budget].cells.B2.value"},
         "expect": {"op": "number", "value": 1623}}]})
    answer = S.JudgeSpec.model_validate({"checks": [
        {"check": "the answer", "get": {"kind": "answer"}, "expect": {"op": "number", "value": 1623}}]})
    key = build_getter(S.AppStateGetter(kind="app_state")).key

    def stored_passes() -> bool:
        return StateJudge(spec).evaluate(JudgeInput(final={key: StateResult(value=control.state())}, done=Done())).passed

    cells = web.post("/api/sheets/2/cells", json={"ref": "B2", "raw": "'1623"}).json()["cells"]
    web.post("/api/sheets/2/cells", json={"ref": "Z1", "raw": "=SUM(B2:B2)+5"})
    assert control.state()["sheets"][1]["cells"]["Z1"]["value"] == 5  # the app's sum skips the text
    assert cells["B2"]["value"] == "'1623" and not stored_passes()
    web.post("/api/sheets/2/cells", json={"ref": "B2", "raw": "1623"})
    assert stored_passes()
    assert StateJudge(answer).evaluate(JudgeInput(final={}, done=Done(answer="1,623"))).passed


def test_a_saved_calc_formula_is_judged_by_what_it_computes() -> None:
    """The office `cells` check: a saved formula that computes the one asked for passes
    (split range, absolute references, a sum written out); a constant term, another range
    or a function the evaluator lacks compared as written (COUNTA) keep their verdicts."""
    def saved(formula: str, want: str | list[str] = "SUM(B2:B7)") -> bool:
        spec = CMP.validate_python({"op": "cells", "cells": {"B8": {"formula": want, "value": 60}}})
        return compare(spec, f"A8\tf=\tv=Total\nB8\tf={formula}\tv=60\n")[0]

    for same in ("SUM(B2:B7)", "SUM($B$2:$B$7)", "sum(B2:B4,B5:B7)", "B2+B3+B4+B5+B6+B7", "SUM(B7:B2)"):
        assert saved(same), same
    for other in ("SUM(B2:B7)*0+60", "60", "SUM(B2:B6)", "SUM(B2:B8)", "MAX(B2:B7)", "SUM(B2:B7)+A1"):
        assert not saved(other), other
    assert saved("COUNTA(B2:B7)", ["COUNTA(B2:B7)", "COUNTA(B1:B7)"])
    assert not saved("COUNTA(B2:B9)", ["COUNTA(B2:B7)", "COUNTA(B1:B7)"])  # two #NAME? errors do not agree


def test_a_count_over_another_range_of_the_same_size_fails() -> None:
    assert computes("=COUNT(B2:B7)", "=COUNT(B2:B7)") and computes("=COUNT(B2:B4,B5:B7)", "=COUNT(B2:B7)")
    assert not computes("=COUNT(B3:B8)", "=COUNT(B2:B7)")    # the same number of cells, other cells
    assert not computes("=6", "=COUNT(B2:B7)")


def test_a_number_inside_stored_state_is_stored_too() -> None:
    """A number check on a path into stored rows (json_path) needs a number as well; the
    same text read from an answer or a page is parsed."""
    spec = CMP.validate_python({"op": "json_path", "path": "[0].reward", "expect": {"op": "number", "value": 1}})
    assert compare(spec, [{"reward": 1.0}], stored=True)[0]
    assert not compare(spec, [{"reward": "1"}], stored=True)[0]
    assert compare(spec, [{"reward": "1"}])[0]
    number = CMP.validate_python({"op": "number", "value": 1623})
    assert not compare(number, "'1623", stored=True)[0] and not compare(number, True, stored=True)[0]
    assert compare(number, "1,623")[0] and compare(number, 1623, stored=True)[0]
