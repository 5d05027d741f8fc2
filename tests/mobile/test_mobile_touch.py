"""Every touch action reaches the page as real touch input (touch events, touch pointers),
never as synthesised mouse events; mouse actions are refused. Real Chromium, the probe app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _phone import phone, probe_log

from cua.errors import BadRequest
from cua.sandboxes.mobile import MobileSandbox

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

#: The probe's pad, in the screen's pixels: the app area starts under the 24 px status bar.
PAD_Y = 24 + 150


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb() -> AsyncIterator[MobileSandbox]:
    async with phone(start_app="probe") as sandbox:
        yield sandbox


@pytest_asyncio.fixture(loop_scope="module", autouse=True)
async def _fresh(sb: MobileSandbox) -> None:
    await sb.reset(seed=0)
    await probe_log(sb)


def types(log: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in log]


async def test_tap_is_touch_then_the_compat_click_and_no_mouse_before_it(sb: MobileSandbox) -> None:
    obs = await sb.act({"type": "tap", "x": 200, "y": PAD_Y})
    assert obs.error is None
    log = await probe_log(sb)
    seen = types(log)
    assert seen[:2] == ["pointerdown", "touchstart"], seen
    assert log[0]["pointerType"] == "touch"
    end = seen.index("touchend")
    assert "mousedown" not in seen[:end] and "mousemove" not in seen[:end]
    # Chromium's compatibility mouse events come only after the finger lifted, then the click
    assert seen.index("click") > end
    assert all(e.get("pointerType") in (None, "touch", "mouse") for e in log)
    assert [e["pointerType"] for e in log if e["type"].startswith("pointer")] == ["touch", "touch"]
    assert log[1]["touches"] == [[200, PAD_Y - 24]]


async def test_double_tap_is_two_touches_and_a_dblclick(sb: MobileSandbox) -> None:
    await sb.act({"type": "double_tap", "x": 100, "y": PAD_Y})
    seen = types(await probe_log(sb))
    assert seen.count("touchstart") == 2 and seen.count("touchend") == 2
    assert seen.index("mousedown") > seen.index("touchend")
    assert "dblclick" in seen


async def test_long_press_holds_the_finger_down_for_its_duration(sb: MobileSandbox) -> None:
    await sb.act({"type": "long_press", "x": 100, "y": PAD_Y, "duration_ms": 700})
    log = await probe_log(sb)
    seen = types(log)
    start, end = log[seen.index("touchstart")], log[seen.index("touchend")]
    assert end["t"] - start["t"] >= 650
    assert "touchmove" not in seen
    assert "mousedown" not in seen and "click" not in seen  # a press, not a slow tap


@pytest.mark.parametrize(("direction", "axis", "sign"), [("up", 1, -1), ("down", 1, 1), ("left", 0, -1), ("right", 0, 1)])
async def test_swipe_moves_one_finger_its_distance_towards_its_direction_over_its_duration(
        sb: MobileSandbox, direction: str, axis: int, sign: int) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": PAD_Y, "direction": direction, "distance": 100, "duration_ms": 300})
    log = await probe_log(sb)
    moves = [e for e in log if e["type"] == "touchmove"]
    assert len(moves) >= 10
    assert all(len(m["touches"]) == 1 for m in moves)
    first = log[types(log).index("touchstart")]
    travelled = moves[-1]["touches"][0][axis] - first["touches"][0][axis]
    assert travelled == pytest.approx(sign * 100, abs=1)
    assert moves[-1]["t"] - first["t"] >= 250
    assert "mousedown" not in types(log) and "click" not in types(log)


async def test_fling_is_fast_and_keeps_scrolling_content_going(sb: MobileSandbox) -> None:
    await sb.act({"type": "fling", "x": 200, "y": 24 + 600, "direction": "up", "distance": 120})
    top = await _scroll_top(sb)
    assert top > 120  # the content went on past the finger's travel: a fling, not a drag
    await sb.act({"type": "swipe", "x": 200, "y": 24 + 600, "direction": "down", "distance": 40, "duration_ms": 600})


async def test_slow_swipe_scrolls_content_by_its_distance(sb: MobileSandbox) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": 24 + 620, "direction": "up", "distance": 80, "duration_ms": 800})
    assert 40 <= await _scroll_top(sb) <= 120


async def _scroll_top(sb: MobileSandbox) -> float:
    from _phone import frame_of
    value: float = await frame_of(sb, "probe").evaluate("document.getElementById('scroller').scrollTop")
    return value


@pytest.mark.parametrize("scale", [0.5, 2.0])
async def test_pinch_moves_two_fingers_apart_or_together_by_its_scale(sb: MobileSandbox, scale: float) -> None:
    await sb.act({"type": "pinch", "x": 200, "y": PAD_Y, "scale": scale, "duration_ms": 300})
    log = await probe_log(sb)
    moves = [e for e in log if e["type"] == "touchmove"]
    assert moves and all(len(m["touches"]) == 2 for m in moves)

    def spread(e: dict[str, Any]) -> float:
        (x0, _), (x1, _) = e["touches"]
        return float(abs(x1 - x0))

    start = next(e for e in log if e["type"] == "touchstart" and len(e["touches"]) == 2)
    assert spread(moves[-1]) / spread(start) == pytest.approx(scale, rel=0.05)
    assert "mousedown" not in types(log)


@pytest.mark.parametrize("action", [{"type": "click", "x": 100, "y": PAD_Y}, {"type": "move", "x": 100, "y": PAD_Y},
                                    {"type": "scroll", "x": 100, "y": PAD_Y, "dx": 0, "dy": 100},
                                    {"type": "drag", "path": [{"x": 100, "y": PAD_Y}, {"x": 200, "y": PAD_Y}]},
                                    {"type": "mouse_down", "x": 100, "y": PAD_Y}, {"type": "goto", "url": "about:blank"}])
async def test_mouse_actions_are_refused_and_reach_nothing(sb: MobileSandbox, action: dict[str, Any]) -> None:
    obs = await sb.act(action)
    assert obs.error is not None and obs.error.reason == "unsupported_action"
    assert "touch input only" in obs.error.message
    assert await probe_log(sb) == []


async def test_a_bad_device_is_the_clients_typed_error_before_any_browser_starts() -> None:
    with pytest.raises(BadRequest) as caught:
        await MobileSandbox.create({"isolation": "shared", "device": "nokia_3310"}, sandbox_id="bad")
    assert "nokia_3310" in caught.value.message and "pixel_7" in caught.value.message
    with pytest.raises(BadRequest):
        await MobileSandbox.create({"isolation": "shared", "viewport": {"width": 1280, "height": 720}}, sandbox_id="bad")
