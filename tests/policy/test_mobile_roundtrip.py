"""The phone families are held to the desktop families' round trip (test_sft_roundtrip.py):
any action a family's format can express, rendered into its text and parsed back by cua's own
parser, is the same action within 1 px; what it cannot express is refused with a typed error.
The predicate of what each format cannot say is written here from the formats' documentation
(each family module's docstring), independently of the renderers."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_sft_roundtrip import _tars_escaping_fails, keys, roundtrip, texts, thoughts  # tests/policy is on the path

from cua.actions import (
    Action,
    Click,
    Done,
    DoubleTap,
    Fling,
    Key,
    LongPress,
    Nav,
    OpenApp,
    Pinch,
    Scroll,
    Swipe,
    Tap,
    Type,
    Wait,
)
from cua.observation import Size
from cua.policy.families import get_family
from cua.policy.families.base import UnrenderableAction

MOBILE = ["qwen2.5-vl-mobile", "qwen3-vl-mobile", "ui-tars-1.5-mobile", "androidworld"]
KINDS = ["tap", "double_tap", "long_press", "swipe", "fling", "pinch", "open_app", "nav", "type", "key", "wait",
         "done", "click", "scroll"]

#: Phones and tablets in CSS pixels, portrait and landscape. Up to 2000 px a model unit of the
#: 0..999 grid is under 1 px, the round trip's tolerance (past it, one unit is the bound).
frames = st.builds(lambda w, h: Size(width=w, height=h), st.integers(280, 1999), st.integers(280, 1999))
directions = st.sampled_from(["up", "down", "left", "right"])
app_names = st.one_of(st.sampled_from(["Clock", "Phone Settings", "AT&T", "O'Reilly", "Google+", "设置"]),
                      st.text(alphabet=string.ascii_letters + string.digits + " .&'+-_", min_size=1, max_size=30)
                      .filter(lambda s: s[0].isalnum() and not s[-1].isspace()))


def _point(frame: Size) -> st.SearchStrategy[tuple[float, float]]:
    return st.tuples(st.floats(0, frame.width - 1), st.floats(0, frame.height - 1))


def _half(frame: Size, direction: str) -> float:
    return frame.height / 2 if direction in ("up", "down") else frame.width / 2


def _edge_swipe(frame: Size, finger: str) -> Swipe:
    """AndroidWorld's own `swipe`, as its actuation performs it (edge to edge, 500 ms)."""
    w, h = frame.width - 1, frame.height - 1
    x, y = {"down": (frame.width / 2, 0.0), "up": (frame.width / 2, h), "right": (0.0, frame.height / 2),
            "left": (w, frame.height / 2)}[finger]
    return Swipe(x=x, y=y, direction=finger, distance=h if finger in ("up", "down") else w, duration_ms=500)  # type: ignore[arg-type]


def action_of(kind: str, frame: Size) -> st.SearchStrategy[Action]:
    p = _point(frame)
    durations = st.one_of(st.just(800), st.integers(1, 60_000))
    if kind == "tap":
        return st.builds(lambda xy: Tap(x=xy[0], y=xy[1]), p)
    if kind == "double_tap":
        return st.builds(lambda xy: DoubleTap(x=xy[0], y=xy[1]), p)
    if kind == "long_press":
        return st.builds(lambda xy, ms: LongPress(x=xy[0], y=xy[1], duration_ms=ms), p, durations)
    if kind == "swipe":
        free = st.builds(lambda xy, d, dist, ms: Swipe(x=xy[0], y=xy[1], direction=d, distance=dist, duration_ms=ms),
                         p, directions, st.floats(5, 2000), st.one_of(st.just(300), st.integers(1, 60_000)))
        half = st.builds(lambda xy, d: Swipe(x=xy[0], y=xy[1], direction=d, distance=_half(frame, d)), p, directions)
        centred = st.builds(lambda d: Swipe(x=frame.width / 2, y=frame.height / 2, direction=d,
                                            distance=_half(frame, d)), directions)
        edge = st.builds(lambda d: _edge_swipe(frame, d), directions)
        return st.one_of(free, half, centred, edge)
    if kind == "fling":
        return st.builds(lambda xy, d: Fling(x=xy[0], y=xy[1], direction=d), p, directions)
    if kind == "pinch":
        return st.builds(lambda xy, s: Pinch(x=xy[0], y=xy[1], scale=s), p, st.floats(0.1, 10))
    if kind == "open_app":
        return st.builds(lambda n: OpenApp(name=n), app_names)
    if kind == "nav":
        return st.builds(lambda b: Nav(button=b), st.sampled_from(["back", "home", "recents"]))
    if kind == "type":
        return st.builds(lambda t: Type(text=t), texts)
    if kind == "key":
        return st.builds(lambda ks: Key(keys=ks), st.one_of(st.just(["Enter"]),
                                                            st.lists(keys, min_size=1, max_size=2, unique=True)))
    if kind == "wait":
        return st.builds(lambda s: Wait(seconds=s), st.one_of(st.sampled_from([1.0, 5.0]), st.floats(0, 60)))
    if kind == "done":
        return st.builds(lambda s, a: Done(status=s, answer=a), st.sampled_from(["success", "failure", "infeasible"]),
                         st.one_of(st.none(), texts))
    if kind == "click":
        return st.builds(lambda xy: Click(x=xy[0], y=xy[1]), p)
    return st.builds(lambda xy: Scroll(x=xy[0], y=xy[1], dy=300), p)


def expected_refusal(family: str, a: Action, frame: Size) -> bool:
    """Whether `family`'s phone format truly cannot express `a` exactly."""
    if isinstance(a, (Click, Scroll, Pinch, Fling)):
        return True  # no mouse on a phone; no family writes a pinch; a fling has no speed in any of them
    if isinstance(a, Nav) and a.button == "recents":
        return family in ("ui-tars-1.5-mobile", "androidworld")
    if family in ("qwen2.5-vl-mobile", "qwen3-vl-mobile"):
        if isinstance(a, DoubleTap):
            return True
        if isinstance(a, Swipe):
            return a.duration_ms != 300
        if isinstance(a, Key):
            return len(a.keys) > 1 or (a.keys != ["Enter"] and family == "qwen3-vl-mobile")
        if isinstance(a, Done):
            return a.status == "infeasible" or (a.answer is not None and family == "qwen2.5-vl-mobile")
        return False
    if family == "ui-tars-1.5-mobile":
        if isinstance(a, DoubleTap):
            return True
        if isinstance(a, LongPress):
            return a.duration_ms != 800
        if isinstance(a, Swipe):
            return a.duration_ms != 300
        if isinstance(a, Key):
            return len(a.keys) > 1 and "+" in a.keys
        if isinstance(a, Wait):
            return a.seconds != 5.0
        if isinstance(a, Type):
            return a.text.endswith("\n") or _tars_escaping_fails(a.text)
        if isinstance(a, Done):
            return a.status != "success" or a.answer == "" or (a.answer is not None and _tars_escaping_fails(a.answer))
        return False
    # androidworld
    if isinstance(a, LongPress):
        return a.duration_ms != 800
    if isinstance(a, Swipe):
        centred_scroll = (a.x, a.y) == (frame.width / 2, frame.height / 2) and a.duration_ms == 300 \
            and a.distance == _half(frame, a.direction)
        return not (centred_scroll or a == _edge_swipe(frame, a.direction))
    if isinstance(a, Type):
        return True  # AndroidWorld types only with Enter after (input_text)
    if isinstance(a, Key):
        return a.keys != ["Enter"]
    if isinstance(a, Wait):
        return a.seconds != 1.0
    if isinstance(a, Done):
        return a.status == "failure" or (a.status == "infeasible" and a.answer is not None)
    return False


@pytest.mark.slow  # 56 cases x 60 examples
@pytest.mark.parametrize("family_name", MOBILE)
@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_render_then_parse_is_the_same_action(family_name: str, kind: str, data: st.DataObject) -> None:
    family = get_family(family_name)
    frame = data.draw(frames)
    action = data.draw(action_of(kind, frame))
    thought = data.draw(thoughts)
    if expected_refusal(family_name, action, frame):
        with pytest.raises(UnrenderableAction):
            family.render([action], frame, thought=thought)
        return
    roundtrip(family, [action], frame, thought)


@pytest.mark.parametrize("family_name", MOBILE)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_a_phone_session_round_trips_in_every_family(family_name: str, data: st.DataObject) -> None:
    """The fast lane's share of the property: the common phone actions, one turn each."""
    family = get_family(family_name)
    frame = data.draw(frames)
    kind = data.draw(st.sampled_from(["tap", "long_press", "swipe", "open_app", "nav", "key", "done"]))
    action = data.draw(action_of(kind, frame))
    if expected_refusal(family_name, action, frame):
        with pytest.raises(UnrenderableAction):
            family.render([action], frame)
        return
    roundtrip(family, [action], frame, None)


@pytest.mark.parametrize("family_name", ["qwen2.5-vl-mobile", "qwen3-vl-mobile", "ui-tars-1.5-mobile"])
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_turns_of_several_touch_actions_round_trip(family_name: str, data: st.DataObject) -> None:
    family = get_family(family_name)
    frame = data.draw(frames)
    kinds = data.draw(st.lists(st.sampled_from(["tap", "nav", "open_app", "swipe"]), min_size=2, max_size=4))
    actions = [data.draw(action_of(k, frame)) for k in kinds]
    if any(expected_refusal(family_name, a, frame) for a in actions):
        return
    roundtrip(family, actions, frame, None)


def test_androidworld_takes_one_action_a_turn_but_a_tap_text_and_enter_are_one_input_text() -> None:
    family = get_family("androidworld")
    frame = Size(width=1080, height=2400)
    with pytest.raises(UnrenderableAction):
        family.render([Tap(x=1, y=2), Nav(button="back")], frame)
    field = [Tap(x=540, y=300), Type(text="milk 'n' \"honey\""), Key(keys=["Enter"])]
    text = family.render(field, frame, thought="Fill the search box.")
    assert text == ('Reason: Fill the search box.\nAction: {"action_type": "input_text", '
                    '"text": "milk \'n\' \\"honey\\"", "x": 540, "y": 300}')
    roundtrip(family, field, frame, "Fill the search box.")
    roundtrip(family, [Type(text="no field"), Key(keys=["Enter"])], frame, None)


@pytest.mark.parametrize("family_name", MOBILE)
def test_approximations_are_named(family_name: str) -> None:
    """With approximate=True a fling is written as the nearest swipe the format has, and says so."""
    from cua.policy.families.base import RenderContext

    family = get_family(family_name)
    frame = Size(width=412, height=915)
    ctx = RenderContext(family.model_frame(frame), approximate=True)
    text = family.render_turn([Fling(x=200, y=700, direction="up", distance=300)], None, ctx)
    [swipe] = family.parse(text, family.context(frame)).actions
    assert isinstance(swipe, Swipe) and swipe.direction == "up"
    assert ctx.approximations and "fling" in ctx.approximations[0]
