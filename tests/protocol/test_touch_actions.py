"""The touch actions (cua/actions.py): their validation, their scaling, and their refusal by
every sandbox that has no touch screen (here the fake; the browser's in tests/browser)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from cua.actions import (
    MOUSE_ONLY,
    TOUCH_ONLY,
    ActionAdapter,
    DoubleTap,
    Fling,
    LongPress,
    Nav,
    OpenApp,
    Pinch,
    Swipe,
    Tap,
    parse_action,
)
from cua.errors import ActionFailed
from cua.observation import Size
from cua.sandbox import create_sandbox, scale_action

ONE_OF_EACH: list[dict[str, Any]] = [
    {"type": "tap", "x": 10, "y": 20},
    {"type": "double_tap", "x": 10, "y": 20},
    {"type": "long_press", "x": 10, "y": 20},
    {"type": "swipe", "x": 10, "y": 20, "direction": "up", "distance": 300},
    {"type": "fling", "x": 10, "y": 20, "direction": "left"},
    {"type": "pinch", "x": 10, "y": 20, "scale": 0.5},
    {"type": "open_app", "name": "Phone Settings"},
    {"type": "nav", "button": "recents"},
]


def test_each_touch_action_parses_with_the_contracts_defaults_and_round_trips_through_json() -> None:
    parsed = [parse_action(data) for data in ONE_OF_EACH]
    assert {a.type for a in parsed} == TOUCH_ONLY
    assert not TOUCH_ONLY & MOUSE_ONLY
    by_type = {a.type: a for a in parsed}
    assert isinstance(press := by_type["long_press"], LongPress) and press.duration_ms == 800
    assert isinstance(swipe := by_type["swipe"], Swipe) and swipe.duration_ms == 300
    assert isinstance(fling := by_type["fling"], Fling) and fling.distance == 600
    assert isinstance(pinch := by_type["pinch"], Pinch) and pinch.duration_ms == 400
    for action in parsed:
        assert ActionAdapter.validate_json(ActionAdapter.dump_json(action)) == action


@pytest.mark.parametrize("data", [
    {"type": "tap", "x": 10},  # no y
    {"type": "tap", "x": "10", "y": 20},  # a string is no number
    {"type": "double_tap", "x": 1e9, "y": 0},  # past the coordinate bound
    {"type": "long_press", "x": 1, "y": 1, "duration_ms": 0},
    {"type": "long_press", "x": 1, "y": 1, "duration_ms": -5},
    {"type": "long_press", "x": 1, "y": 1, "duration_ms": 10 ** 9},
    {"type": "swipe", "x": 1, "y": 1, "direction": "up"},  # no distance
    {"type": "swipe", "x": 1, "y": 1, "direction": "up", "distance": 0},
    {"type": "swipe", "x": 1, "y": 1, "direction": "up", "distance": -10},
    {"type": "swipe", "x": 1, "y": 1, "direction": "north", "distance": 10},
    {"type": "swipe", "x": 1, "y": 1, "direction": "up", "distance": float("nan")},
    {"type": "fling", "x": 1, "y": 1, "direction": "up", "duration_ms": 10},  # a fling's duration is fixed
    {"type": "pinch", "x": 1, "y": 1, "scale": 0},
    {"type": "pinch", "x": 1, "y": 1, "scale": -2},
    {"type": "pinch", "x": 1, "y": 1, "scale": float("inf")},
    {"type": "open_app", "name": ""},
    {"type": "open_app", "name": "../etc/passwd"},
    {"type": "open_app", "name": "x" * 65},
    {"type": "open_app", "name": " leading space"},
    {"type": "open_app", "name": "a\nb"},
    {"type": "nav", "button": "menu"},
    {"type": "tap", "x": 1, "y": 1, "pressure": 1},  # unknown fields are refused
])
def test_malformed_touch_actions_are_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        parse_action(data)


def test_app_names_take_what_home_screens_show() -> None:
    for name in ("Clock", "phone_settings", "Calendar 2", "AT&T", "Google+", "Yahoo. Mail", "O'Reilly", "设置"):
        assert OpenApp(name=name).name == name


def test_touch_points_scale_like_pointer_points_and_a_swipes_distance_along_its_axis() -> None:
    frame, screen = Size(width=200, height=400), Size(width=400, height=1200)  # x2 across, x3 down
    assert scale_action(Tap(x=10, y=20), frame, screen) == Tap(x=20, y=60)
    assert scale_action(DoubleTap(x=10, y=20), frame, screen) == DoubleTap(x=20, y=60)
    assert scale_action(LongPress(x=10, y=20, duration_ms=5), frame, screen) == LongPress(x=20, y=60, duration_ms=5)
    assert scale_action(Pinch(x=10, y=20, scale=2), frame, screen) == Pinch(x=20, y=60, scale=2)
    up = scale_action(Swipe(x=10, y=20, direction="up", distance=100), frame, screen)
    assert up == Swipe(x=20, y=60, direction="up", distance=300)
    left = scale_action(Fling(x=10, y=20, direction="left", distance=100), frame, screen)
    assert left == Fling(x=20, y=60, direction="left", distance=200)
    assert scale_action(Nav(button="home"), frame, screen) == Nav(button="home")


@given(st.sampled_from([Tap, DoubleTap, LongPress]), st.floats(-1000, 1000), st.floats(-1000, 1000))
def test_a_touch_off_the_frame_is_an_agent_fault(cls: type[Tap | DoubleTap | LongPress], x: float, y: float) -> None:
    frame = Size(width=360, height=800)
    action = cls(x=x, y=y)
    if 0 <= x < 360 and 0 <= y < 800:
        assert scale_action(action, frame, frame) == action
        return
    with pytest.raises(ActionFailed) as info:
        scale_action(action, frame, frame)
    assert info.value.reason == "out_of_bounds" and info.value.fault == "agent"


async def test_the_fake_sandbox_refuses_every_touch_action_as_unsupported() -> None:
    sandbox = await create_sandbox("fake", {"screen": {"width": 500, "height": 300}}, sandbox_id="touch")
    try:
        await sandbox.reset()
        for data in ONE_OF_EACH:
            obs = await sandbox.act(parse_action(data))
            assert obs.error is not None and obs.error.reason == "unsupported_action", (data, obs.error)
        # and it still takes what it always took
        obs = await sandbox.act(parse_action({"type": "click", "x": 5, "y": 5}))
        assert obs.error is None
    finally:
        await sandbox.close()


def test_the_rl_action_space_holds_a_touch_to_the_frame_like_a_click() -> None:
    from cua.rl.env import ActionSpace

    space = ActionSpace(Size(width=360, height=800))
    assert space.contains({"type": "tap", "x": 359, "y": 799})
    assert not space.contains({"type": "tap", "x": 360, "y": 10})
    assert not space.contains({"type": "swipe", "x": 10, "y": 900, "direction": "up", "distance": 100})
    assert space.contains({"type": "nav", "button": "back"})
