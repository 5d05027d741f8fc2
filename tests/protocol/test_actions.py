"""The unified action schema: validation, key normalisation, JSON round trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from cua.actions import (
    ActionAdapter,
    Click,
    Done,
    Drag,
    Key,
    KeyDown,
    Scroll,
    Type,
    normalize_key,
    parse_action,
    parse_actions,
)


def test_discriminated_union_picks_the_model_by_type():
    assert parse_action({"type": "click", "x": 3, "y": 4}) == Click(x=3, y=4)
    assert isinstance(parse_action({"type": "done", "answer": "42"}), Done)
    actions = parse_actions([{"type": "type", "text": "hi"}, {"type": "key", "keys": "ctrl+s"}])
    assert actions == [Type(text="hi"), Key(keys=["Control", "s"])]


@pytest.mark.parametrize("bad", [
    {"type": "click", "x": 1},                                  # missing y
    {"type": "click", "x": 1, "y": 2, "button": "left-ish"},   # bad enum
    {"type": "click", "x": 1, "y": 2, "count": 9},             # out of range
    {"type": "teleport", "x": 1, "y": 2},                      # unknown type
    {"type": "drag", "path": [{"x": 1, "y": 1}]},              # needs two points
    {"type": "key", "keys": ["hyper-ctrl"]},                   # unknown key
    {"type": "wait", "seconds": 600},                          # too long
    {"type": "click", "x": 1, "y": 2, "code": "import os"},    # extra fields are refused
    "pyautogui.click(1, 2)",                                   # code strings are never actions
])
def test_malformed_actions_are_refused(bad):
    with pytest.raises(ValidationError):
        parse_action(bad)


@pytest.mark.parametrize("spelling,canonical", [
    ("ctrl", "Control"), ("Return", "Enter"), ("esc", "Escape"), ("cmd", "Meta"), ("pgdn", "PageDown"),
    ("BackSpace", "Backspace"), ("f5", "F5"), ("a", "a"), ("<", "<"), (" ", "Space"), ("Enter", "Enter"),
])
def test_key_aliases_from_every_family_normalise(spelling, canonical):
    assert normalize_key(spelling) == canonical


def test_key_combo_strings():
    assert Key(keys="ctrl+shift+t").keys == ["Control", "Shift", "t"]
    assert Key(keys="ctrl++").keys == ["Control", "+"]
    assert Key(keys="+").keys == ["+"]
    assert KeyDown(key="shift").key == "Shift"


@given(st.sampled_from(["click", "move", "scroll"]), st.floats(0, 5000), st.floats(0, 5000))
def test_json_round_trip(kind, x, y):
    action = parse_action({"type": kind, "x": x, "y": y})
    assert ActionAdapter.validate_json(ActionAdapter.dump_json(action)) == action


def test_actions_are_immutable_data():
    click = Click(x=1, y=2)
    with pytest.raises(ValidationError):
        click.x = 5  # type: ignore[misc]
    assert Drag(path=[{"x": 0, "y": 0}, {"x": 5, "y": 5}]).path[-1].x == 5
    assert Scroll(x=1, y=1, dy=120).dx == 0
