"""The sandbox interface's shared pieces: coordinate scaling, the kind registry, the error tree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cua.actions import Click, Drag, Goto, MouseDown, Scroll, Type
from cua.errors import (
    ActionFailed,
    BadRequest,
    CuaError,
    ErrorCode,
    SandboxCrashed,
    Timeout,
    error_for_code,
)
from cua.observation import Size
from cua.sandbox import kinds, resolve_kind, scale_action, validate_config


def test_scale_from_a_downscaled_frame_to_the_screen():
    frame, screen = Size(width=640, height=360), Size(width=1280, height=720)
    assert scale_action(Click(x=100, y=50), frame, screen) == Click(x=200, y=100)
    drag = scale_action(Drag(path=[{"x": 0, "y": 0}, {"x": 320, "y": 180}]), frame, screen)
    assert [(p.x, p.y) for p in drag.path] == [(0, 0), (640, 360)]
    assert scale_action(MouseDown(), frame, screen) == MouseDown()
    assert scale_action(Type(text="a"), frame, screen) == Type(text="a")


@given(st.integers(16, 4000), st.integers(16, 4000), st.integers(16, 4000), st.integers(16, 4000),
       st.floats(0, 1, exclude_max=True), st.floats(0, 1, exclude_max=True))
def test_scaled_points_stay_on_screen(fw, fh, sw, sh, rx, ry):
    frame, screen = Size(width=fw, height=fh), Size(width=sw, height=sh)
    click = scale_action(Click(x=rx * fw, y=ry * fh), frame, screen)
    assert 0 <= click.x <= sw - 1 and 0 <= click.y <= sh - 1
    assert abs(click.x - rx * sw) <= 1 and abs(click.y - ry * sh) <= 1


@pytest.mark.parametrize("action", [Click(x=1280, y=10), Click(x=-1, y=10), Scroll(x=10, y=720, dy=5)])
def test_out_of_bounds_is_an_agent_fault_with_a_reason(action):
    with pytest.raises(ActionFailed) as info:
        scale_action(action, Size(width=1280, height=720), Size(width=1280, height=720))
    assert info.value.reason == "out_of_bounds" and info.value.fault == "agent"


def test_foreign_actions_are_agent_faults():
    with pytest.raises(ActionFailed) as info:
        scale_action(Goto(url="http://x"), Size(width=10, height=10), Size(width=10, height=10),
                     foreign=frozenset({"goto"}))
    assert info.value.reason == "unsupported_action"


def test_unknown_kind_is_a_bad_request_naming_the_known_ones():
    with pytest.raises(BadRequest) as info:
        resolve_kind("mainframe")
    assert "browser" in info.value.message
    assert {"browser", "desktop", "vm"} <= set(kinds())


def test_invalid_config_is_a_bad_request_with_field_errors():
    with pytest.raises(BadRequest) as info:
        validate_config("browser", {"viewport": {"width": -5, "height": 10}, "no_such_option": 1})
    assert info.value.details["errors"]


def test_error_tree_separates_faults_and_round_trips_codes():
    assert SandboxCrashed("x").fault == "infra" and Timeout("x").retryable
    assert ActionFailed("x").fault == "agent" and BadRequest("x").fault == "client"
    for code in ErrorCode:
        err = error_for_code(code.value, "msg", {"reason": "r"} if code is ErrorCode.ACTION_FAILED else {})
        assert isinstance(err, CuaError) and err.code is code
    assert error_for_code("from_the_future", "m").code is ErrorCode.INTERNAL
