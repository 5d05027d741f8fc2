"""The phone families' formats (cua/policy/families/qwen_mobile.py, uitars_mobile.py,
androidworld.py): what each output means as touch actions, and what each refuses.

Recorded outputs are quoted from the public sources named beside them; the others follow
the formats those sources document."""

from __future__ import annotations

import pytest

from cua.actions import Click, Done, DoubleTap, Key, LongPress, Nav, OpenApp, Swipe, Tap, Type, Wait
from cua.observation import Size
from cua.policy.engine import parse_output
from cua.policy.families import get_family

PHONE = Size(width=412, height=915)


def parse(family: str, raw: str, frame: Size = PHONE) -> list:  # type: ignore[type-arg]
    parsed, error, _ = parse_output(get_family(family), raw, frame)
    assert error is None, error
    assert parsed is not None
    return parsed.actions


def parse_fails(family: str, raw: str, frame: Size = PHONE) -> str:
    parsed, error, _ = parse_output(get_family(family), raw, frame)
    assert parsed is None and error is not None, parsed
    return error.message


def qwen(arguments: str, tool: str = "mobile_use") -> str:
    return f'<tool_call>\n{{"name": "{tool}", "arguments": {arguments}}}\n</tool_call>'


# -- Qwen mobile_use -----------------------------------------------------------------------

def test_a_recorded_qwen3_mobile_use_click_is_a_tap_on_the_relative_grid() -> None:
    # QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb, recorded output of the
    # "Open the file manager app" example, on its 1092x2408 screenshot.
    raw = '\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [935, 406]}}\n</tool_call>\n'
    frame = Size(width=1092, height=2408)
    assert parse("qwen3-vl-mobile", raw, frame) == [Tap(x=round(935 * 1.092, 2), y=round(406 * 2.408, 2))]
    # the same text from Qwen2.5-VL means pixels of its smart-resized image
    model = get_family("qwen2.5-vl-mobile").model_frame(frame)
    [tap] = parse("qwen2.5-vl-mobile", raw, frame)
    assert tap == Tap(x=round(935 * frame.width / model.image.width, 2),
                      y=round(406 * frame.height / model.image.height, 2))
    # the desktop family still reads a stray mobile_use as a mouse click (a phone model in a browser)
    assert isinstance(parse("qwen2.5-vl", raw, frame)[0], Click)


def test_qwen_mobile_use_actions_as_touch_actions() -> None:
    family = "qwen2.5-vl-mobile"
    model = get_family(family).model_frame(PHONE)
    sx, sy = model.scale
    [press] = parse(family, qwen('{"action": "long_press", "coordinate": [100, 200], "time": 2}'))
    assert press == LongPress(x=round(100 * sx, 2), y=round(200 * sy, 2), duration_ms=2000)
    [swipe] = parse(family, qwen('{"action": "swipe", "coordinate": [200, 800], "coordinate2": [210, 300]}'))
    assert isinstance(swipe, Swipe) and swipe.direction == "up" and abs(swipe.distance - 500 * sy) < 0.01
    [left] = parse(family, qwen('{"action": "swipe", "coordinate": [300, 400], "coordinate2": [20, 390]}'))
    assert isinstance(left, Swipe) and left.direction == "left" and abs(left.distance - 280 * sx) < 0.01
    buttons = [parse(family, qwen(f'{{"action": "system_button", "button": "{b}"}}'))[0]
               for b in ("Back", "Home", "Menu", "enter")]
    assert buttons == [Nav(button="back"), Nav(button="home"), Nav(button="recents"), Key(keys=["Enter"])]
    assert parse(family, qwen('{"action": "open", "text": "Clock"}')) == [OpenApp(name="Clock")]
    assert parse(family, qwen('{"action": "type", "text": "hello"}')) == [Type(text="hello")]
    assert parse(family, qwen('{"action": "key", "text": "backspace"}')) == [Key(keys=["Backspace"])]
    assert parse(family, qwen('{"action": "wait", "time": 2}')) == [Wait(seconds=2)]
    assert parse(family, qwen('{"action": "terminate", "status": "failure"}')) == [Done(status="failure")]
    answered = qwen('{"action": "answer", "text": "7 am"}') + "\n" + qwen('{"action": "terminate", "status": "success"}')
    assert parse("qwen3-vl-mobile", answered) == [Done(status="success", answer="7 am")]


@pytest.mark.parametrize("raw, says", [
    (qwen('{"action": "left_click", "coordinate": [1, 2]}', tool="computer_use"), "phone"),
    (qwen('{"action": "left_click", "coordinate": [1, 2]}'), "left_click"),
    (qwen('{"action": "swipe", "coordinate": [5, 5], "coordinate2": [5, 5]}'), "ends where it starts"),
    (qwen('{"action": "swipe", "coordinate": [5, 5]}'), "coordinate2"),
    (qwen('{"action": "click"}'), "coordinate"),
    (qwen('{"action": "system_button", "button": "Power"}'), "system button"),
    (qwen('{"action": "open", "text": "../../etc"}'), "app name"),
    (qwen('{"action": "long_press", "coordinate": [1, 2], "time": 0}'), "long_press"),
    (qwen('{"action": "key", "text": "volume_up"}'), "key"),
])
def test_qwen_mobile_refuses_what_a_phone_cannot_do(raw: str, says: str) -> None:
    assert says in parse_fails("qwen2.5-vl-mobile", raw)


def test_the_phone_prompt_offers_only_mobile_use() -> None:
    for name in ("qwen2.5-vl-mobile", "qwen3-vl-mobile"):
        family = get_family(name)
        prompt = family.system_prompt(family.model_frame(PHONE))
        assert '"name": "mobile_use"' in prompt and "computer_use" not in prompt
        assert "touchscreen" in prompt and "left_click" not in prompt
    qwen3 = get_family("qwen3-vl-mobile")
    assert "1000x1000" in qwen3.system_prompt(qwen3.model_frame(PHONE))


# -- UI-TARS mobile ------------------------------------------------------------------------

def test_ui_tars_phone_actions() -> None:
    family = "ui-tars-1.5-mobile"
    model = get_family(family).model_frame(PHONE)
    sx, sy = model.scale
    at = (round(100 * sx, 2), round(200 * sy, 2))
    assert parse(family, "Thought: tap it\nAction: click(start_box='<|box_start|>(100,200)<|box_end|>')") == \
        [Tap(x=at[0], y=at[1])]
    # the Doubao-style spelling of the same point
    assert parse(family, "Action: click(point='<point>100 200</point>')") == [Tap(x=at[0], y=at[1])]
    assert parse(family, "Action: long_press(start_box='(100,200)', time='1.5')") == \
        [LongPress(x=at[0], y=at[1], duration_ms=1500)]
    [scroll] = parse(family, "Action: scroll(start_box='(100,200)', direction='down')")
    assert scroll == Swipe(x=at[0], y=at[1], direction="up", distance=PHONE.height / 2)  # content down: finger up
    [drag] = parse(family, "Action: drag(start_box='(100,700)', end_box='(100,200)')")
    assert isinstance(drag, Swipe) and drag.direction == "up" and abs(drag.distance - 500 * sy) < 0.01
    # UI-TARS-1.0's phone scroll names both ends
    [old] = parse(family, "Action: scroll(start_box='(300,400)', end_box='(50,400)')")
    assert isinstance(old, Swipe) and old.direction == "left"
    assert parse(family, "Action: open_app(app_name='Clock')") == [OpenApp(name="Clock")]
    assert parse(family, "Action: press_home()") == [Nav(button="home")]
    assert parse(family, "Action: press_back()") == [Nav(button="back")]
    assert parse(family, "Action: type(content='buy milk\\n')") == [Type(text="buy milk"), Key(keys=["Enter"])]
    assert parse(family, "Action: finished(content='done')") == [Done(status="success", answer="done")]
    assert "phone" in parse_fails(family, "Action: right_single(start_box='(1,2)')")
    assert "direction" in parse_fails(family, "Action: scroll(start_box='(1,2)', direction='sideways')")


def test_ui_tars_phone_prompt_names_the_phone_actions() -> None:
    text = get_family("ui-tars-1.5-mobile").instruction_text("Set an alarm")
    assert "press_home()" in text and "open_app(app_name='')" in text and "hotkey" not in text
    assert text.endswith("## User Instruction\nSet an alarm")


# -- AndroidWorld --------------------------------------------------------------------------

def aw(action: str, reason: str = "Because.") -> str:
    return f"Reason: {reason}\nAction: {action}"


def test_androidworld_actions_mean_what_its_actuation_does() -> None:
    family = "androidworld"
    frame = Size(width=1080, height=2400)
    assert parse(family, aw('{"action_type": "click", "x": 540, "y": 1200}'), frame) == [Tap(x=540, y=1200)]
    assert parse(family, aw('{"action_type": "double_tap", "x": 5, "y": 6}'), frame) == [DoubleTap(x=5, y=6)]
    assert parse(family, aw('{"action_type": "long_press", "x": 5, "y": 6}'), frame) == [LongPress(x=5, y=6)]
    assert parse(family, aw('{"action_type": "input_text", "text": "hi", "x": 10, "y": 20}'), frame) == \
        [Tap(x=10, y=20), Type(text="hi"), Key(keys=["Enter"])]
    assert parse(family, aw('{"action_type": "keyboard_enter"}'), frame) == [Key(keys=["Enter"])]
    assert parse(family, aw('{"action_type": "navigate_home"}'), frame) == [Nav(button="home")]
    assert parse(family, aw('{"action_type": "navigate_back"}'), frame) == [Nav(button="back")]
    assert parse(family, aw('{"action_type": "open_app", "app_name": "Clock"}'), frame) == [OpenApp(name="Clock")]
    assert parse(family, aw('{"action_type": "wait"}'), frame) == [Wait(seconds=1)]
    # scroll down: the finger goes up from the centre, half the screen (AndroidWorld's actuation)
    assert parse(family, aw('{"action_type": "scroll", "direction": "down"}'), frame) == \
        [Swipe(x=540, y=1200, direction="up", distance=1200)]
    assert parse(family, aw('{"action_type": "scroll", "direction": "right"}'), frame) == \
        [Swipe(x=540, y=1200, direction="left", distance=540)]
    # swipe: edge to edge in 500 ms; its "left" starts at the left edge, as AndroidWorld swipes it
    assert parse(family, aw('{"action_type": "swipe", "direction": "up"}'), frame) == \
        [Swipe(x=540, y=2399, direction="up", distance=2399, duration_ms=500)]
    assert parse(family, aw('{"action_type": "swipe", "direction": "left"}'), frame) == \
        [Swipe(x=0, y=1200, direction="right", distance=1079, duration_ms=500)]
    assert parse(family, aw('{"action_type": "status", "goal_status": "complete"}'), frame) == [Done(status="success")]
    assert parse(family, aw('{"action_type": "status", "goal_status": "infeasible"}'), frame) == \
        [Done(status="infeasible")]
    assert parse(family, aw('{"action_type": "answer", "text": "42"}'), frame) == [Done(status="success", answer="42")]
    # the bare JSON (no Reason/Action lines) reads too
    assert parse(family, '{"action_type": "navigate_back"}', frame) == [Nav(button="back")]


@pytest.mark.parametrize("raw, says", [
    (aw('{"action_type": "click", "index": 3}'), "index"),
    (aw('{"action_type": "click"}'), "x and y"),
    (aw('{"action_type": "scroll", "direction": "diagonal"}'), "direction"),
    (aw('{"action_type": "status", "goal_status": "maybe"}'), "goal_status"),
    (aw('{"action_type": "input_text", "text": ""}'), "text"),
    (aw('{"action_type": "open_app", "app_name": ""}'), "app name"),
    (aw('{"action_type": "fly"}'), "fly"),
    (aw('{"action_type": "click", "x": 1, "y": '), "JSON"),
    ("Reason: nothing to do", "no JSON"),
])
def test_androidworld_refuses_malformed_actions(raw: str, says: str) -> None:
    assert says in parse_fails("androidworld", raw)


def test_a_turns_touch_actions_are_kept_in_the_models_own_units() -> None:
    """The trajectory keeps each action as the model wrote it too (`PolicyAgent`): a tap's point
    and a swipe's start and length on Qwen3-VL's 0..999 grid."""
    from cua.episode.policy_agent import PolicyAgent
    from cua.policy import make_policy

    agent = PolicyAgent(make_policy("openai:m@http://127.0.0.1:9/v1", family="qwen3-vl-mobile", api_key="k"), "m")
    frame = Size(width=412, height=915)
    actions, grid = agent._model_frame_actions(
        [Tap(x=206, y=457.5), Swipe(x=103, y=800, direction="up", distance=457.5),
         Swipe(x=103, y=800, direction="left", distance=103)], frame)
    assert grid == Size(width=1000, height=1000) and actions is not None
    assert actions[0] == {"type": "tap", "x": 500, "y": 500}
    assert actions[1] == {"type": "swipe", "x": 250, "y": 874, "direction": "up", "distance": 500, "duration_ms": 300}
    assert actions[2]["distance"] == 250
