"""Model family parsers and geometry.

Recorded outputs are quoted from public sources named beside each; the others follow
the formats those sources document, and say so."""

from __future__ import annotations

import ast
import importlib.util
import math
from pathlib import Path
from typing import Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cua.actions import Back, Click, Done, Drag, Key, KeyDown, KeyUp, MouseDown, MouseUp, Move, Scroll, Type, Wait
from cua.observation import Size
from cua.policy.engine import parse_output
from cua.policy.families import FAMILIES, get_family
from cua.policy.families.anthropic import api_image_size
from cua.policy.imaging import smart_resize, smart_resize_local

SCREEN = Size(width=1280, height=720)


def parse(family: str, raw: str, frame: Size = SCREEN, pointer=None, **options):
    parsed, error, new_pointer = parse_output(get_family(family, **options), raw, frame, pointer)
    assert error is None, error
    assert parsed is not None
    return parsed


def parse_fails(family: str, raw: str, frame: Size = SCREEN, **options) -> str:
    parsed, error, _ = parse_output(get_family(family, **options), raw, frame)
    assert parsed is None and error is not None
    assert error.raw == raw and error.family == family
    return error.message


# -- smart_resize -------------------------------------------------------------------------

def _qwen_vl_utils_smart_resize():
    """qwen-vl-utils' own smart_resize.

    Its module imports torchvision at the top, and PyPI's torchvision (a CUDA build)
    breaks beside CPU torch, so on such machines the import fails. Then the function,
    with the helpers and constants it uses, is compiled from the installed module's
    source alone: the code compared is still upstream's, not a transcription."""
    try:
        from qwen_vl_utils.vision_process import smart_resize

        return smart_resize
    except Exception:  # noqa: BLE001 (any import-time failure of its heavy dependencies)
        pass
    spec = importlib.util.find_spec("qwen_vl_utils")  # locates the package without running it
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("qwen-vl-utils is not installed (it comes with the policy extra)")
    path = Path(spec.submodule_search_locations[0]) / "vision_process.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    wanted = {"round_by_factor", "ceil_by_factor", "floor_by_factor", "smart_resize"}
    body = [node for node in tree.body
            if (isinstance(node, ast.FunctionDef) and node.name in wanted)
            or (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and all(isinstance(t, ast.Name) and t.id.isupper() for t in node.targets))]
    assert {n.name for n in body if isinstance(n, ast.FunctionDef)} == wanted, "qwen-vl-utils changed its layout"
    namespace: dict = {"math": math, "Optional": Optional, "Tuple": Tuple}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), namespace)  # noqa: S102
    return namespace["smart_resize"]


SIZES = [(h, w) for h in (15, 28, 29, 56, 100, 333, 480, 720, 768, 1000, 1080, 1117, 1440, 2160, 4320)
         for w in (14, 28, 57, 200, 640, 1024, 1280, 1366, 1920, 2559, 3840, 7680)
         if max(h, w) / min(h, w) <= 200]
BUDGETS = [(28, 4 * 28 * 28, 16384 * 28 * 28), (28, 256 * 28 * 28, 1280 * 28 * 28),
           (28, 100 * 28 * 28, 16384 * 28 * 28), (32, 4 * 32 * 32, 16384 * 32 * 32), (32, 64 * 32 * 32, 2048 * 32 * 32)]


@pytest.mark.slow  # tries to import qwen-vl-utils, which imports torch and torchvision (seconds)
@pytest.mark.parametrize("factor,min_pixels,max_pixels", BUDGETS)
def test_smart_resize_matches_qwen_vl_utils(factor, min_pixels, max_pixels):
    upstream = _qwen_vl_utils_smart_resize()
    for h, w in SIZES:
        expected = tuple(upstream(h, w, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels))
        assert smart_resize_local(h, w, factor, min_pixels, max_pixels) == expected, (h, w)
        assert smart_resize(h, w, factor, min_pixels, max_pixels) == expected, (h, w)


def _transformers_smart_resize():
    try:  # the torchvision-backed module named in the brief, where torchvision exists
        from transformers.models.qwen2_vl.image_processing_qwen2_vl import smart_resize as reference
    except ImportError:  # without torchvision: the PIL backend's copy of the same function
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import smart_resize as reference
    return reference


@pytest.mark.slow  # imports transformers (seconds)
@pytest.mark.parametrize("factor,min_pixels,max_pixels", BUDGETS)
def test_smart_resize_matches_transformers(factor, min_pixels, max_pixels):
    reference = _transformers_smart_resize()
    compared = 0
    for h, w in SIZES:
        if round(h / factor) == 0 or round(w / factor) == 0:
            continue  # transformers rounds such a side to 0 (qwen-vl-utils keeps one factor)
        assert smart_resize_local(h, w, factor, min_pixels, max_pixels) == tuple(
            reference(h, w, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
        ), (h, w)
        compared += 1
    assert compared > 100


def test_smart_resize_keeps_the_budget_and_rejects_bad_sizes():
    assert smart_resize(1080, 1920) == smart_resize_local(1080, 1920)  # our copy where upstream is absent
    h, w = smart_resize(1080, 1920)
    assert (h, w) == (1092, 1932) and h % 28 == 0 and w % 28 == 0
    assert smart_resize(4320, 7680, 28, 3136, 1280 * 28 * 28)[0] * smart_resize(4320, 7680, 28, 3136, 1280 * 28 * 28)[1] <= 1280 * 28 * 28
    for bad in ((0, 10), (10, 0), (1, 500)):
        with pytest.raises(ValueError):
            smart_resize(*bad)


def test_model_frames_per_family():
    frame = Size(width=1920, height=1080)
    assert get_family("qwen2.5-vl").model_frame(frame).image == Size(width=1932, height=1092)
    assert get_family("qwen3-vl").model_frame(frame).grid == (1000.0, 1000.0)
    assert get_family("qwen3-vl").model_frame(frame).image.width % 32 == 0
    assert get_family("ui-tars-1.5").model_frame(frame).image == Size(width=1932, height=1092)
    assert get_family("openai").model_frame(frame).image == frame
    # Claude: a standard size of the same aspect when one is smaller, else the API's limits
    assert api_image_size(Size(width=1280, height=800)) == Size(width=1280, height=800)
    assert api_image_size(Size(width=1920, height=1200)) == Size(width=1280, height=800)
    assert api_image_size(Size(width=1920, height=1080)) == Size(width=1366, height=768)
    odd = api_image_size(Size(width=3000, height=1000))
    assert max(odd.width, odd.height) <= 1568 and odd.width * odd.height <= 1_150_000


# -- coordinate round trips ----------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(
    family=st.sampled_from(sorted(FAMILIES)),
    width=st.integers(min_value=57, max_value=1999),
    height=st.integers(min_value=57, max_value=1999),
    fx=st.floats(min_value=0, max_value=1, exclude_max=True),
    fy=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_screen_to_model_to_screen_within_one_pixel(family, width, height, fx, fy):
    if max(width, height) / min(width, height) > 4:
        return
    frame = Size(width=width, height=height)
    model = get_family(family).model_frame(frame)
    x, y = fx * (width - 1), fy * (height - 1)
    mx, my = model.from_frame(x, y)
    back = model.to_frame(mx, my)
    sx, sy = model.scale
    # one pixel, or half a grid step where the grid is coarser than the screen
    assert abs(back[0] - x) <= max(1.0, sx / 2 + 1e-6)
    assert abs(back[1] - y) <= max(1.0, sy / 2 + 1e-6)
    if sx <= 2 and sy <= 2:
        assert abs(back[0] - x) <= 1.0 and abs(back[1] - y) <= 1.0


@settings(max_examples=60, deadline=None)
@given(width=st.integers(100, 3000), height=st.integers(100, 3000), mx=st.integers(0, 999), my=st.integers(0, 999))
def test_model_points_land_on_the_screen(width, height, mx, my):
    if max(width, height) / min(width, height) > 8:
        return
    frame = Size(width=width, height=height)
    for family in ("qwen3-vl", "qwen2.5-vl", "ui-tars-1.5"):
        model = get_family(family).model_frame(frame)
        gx, gy = mx * model.grid[0] / 1000, my * model.grid[1] / 1000
        x, y = model.to_frame(gx, gy)
        assert 0 <= x <= width - 1 and 0 <= y <= height - 1


def test_round_trip_through_the_text_format():
    """A click written by each family at the model coordinates of a screen point parses
    back to that point (within a pixel)."""
    frame = Size(width=1366, height=767)
    point = (1001.0, 333.0)
    outputs = {
        "qwen2.5-vl": '<tool_call>{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}</tool_call>',
        "qwen3-vl": '<tool_call>{{"name": "computer_use", "arguments": {{"action": "left_click", "coordinate": [{x}, {y}]}}}}</tool_call>',
        "ui-tars-1.5": "Thought: click it\nAction: click(start_box='<|box_start|>({x},{y})<|box_end|>')",
        "openai": '{{"type": "click", "x": {x}, "y": {y}, "button": "left"}}',
        "anthropic": '{{"action": "left_click", "coordinate": [{x}, {y}]}}',
        "osworld": "pyautogui.click({x}, {y})",
    }
    for family, template in outputs.items():
        model = get_family(family).model_frame(frame)
        mx, my = model.from_frame(*point)
        [click] = parse(family, template.format(x=mx, y=my), frame).actions
        assert isinstance(click, Click)
        tolerance = max(1.0, model.scale[0] / 2)
        assert abs(click.x - point[0]) <= tolerance and abs(click.y - point[1]) <= tolerance, family


# -- qwen2.5-vl / qwen3-vl -----------------------------------------------------------------

def test_qwen25_recorded_click_with_thought():
    # Qwen2.5-VL computer_use answer (Thought/Action prose, then the tool call), as
    # recorded in a public agent test script found through the code search.
    raw = (
        "Thought: To achieve the goal, I need to first navigate back to the main United Airlines homepage "
        "where I can find options for booking flights.\nAction: Click on the 'Book' option in the top "
        "navigation bar to access flight booking options.\n<tool_call>\n"
        '{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [124, 178]}}\n</tool_call>'
    )
    parsed = parse("qwen2.5-vl", raw, Size(width=1288, height=728))  # already a multiple of 28
    assert parsed.actions == [Click(x=124, y=178)]
    assert parsed.thought is not None and parsed.thought.startswith("Thought: To achieve")


def test_qwen3_recorded_mobile_use_click():
    # QwenLM/Qwen3-VL cookbooks/mobile_agent.ipynb, recorded output of the
    # "Open the file manager app" example (the model's mobile_use tool).
    raw = '\n<tool_call>\n{"name": "mobile_use", "arguments": {"action": "click", "coordinate": [935, 406]}}\n</tool_call>\n'
    frame = Size(width=1092, height=2408)
    [click] = parse("qwen2.5-vl", raw, frame).actions
    model = get_family("qwen2.5-vl").model_frame(frame)
    assert click == Click(x=round(935 * frame.width / model.image.width, 2), y=round(406 * frame.height / model.image.height, 2))


def test_qwen_double_brace_quirk_and_multiple_calls():
    # The doubled brace comes from a template copied verbatim by a model (seen in the same
    # public test script as above).
    raw = (
        'Thought: Testing\n<tool_call>\n{{"name": "computer_use", "arguments": {"action": "type", "text": "hi"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "key", "keys": ["ctrl", "Return"]}}\n</tool_call>\n'
        '<tool_call>\n{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}\n</tool_call>'
    )
    assert parse("qwen2.5-vl", raw).actions == [Type(text="hi"), Key(keys=["Control", "Enter"]), Done(status="success")]


def test_qwen_drag_starts_at_the_tracked_pointer():
    frame = Size(width=1288, height=728)
    raw = ('<tool_call>{"name": "computer_use", "arguments": {"action": "mouse_move", "coordinate": [10, 20]}}</tool_call>'
           '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", "coordinate": [300, 400]}}</tool_call>')
    actions = parse("qwen2.5-vl", raw, frame).actions
    assert actions[0] == Move(x=10, y=20)
    assert isinstance(actions[1], Drag) and [(p.x, p.y) for p in actions[1].path] == [(10, 20), (300, 400)]
    # the pointer carries over between calls (the session tracks it)
    family = get_family("qwen2.5-vl")
    drag_only = '<tool_call>{"name": "computer_use", "arguments": {"action": "left_click_drag", "coordinate": [5, 6]}}</tool_call>'
    parsed, _, pointer = parse_output(family, drag_only, frame, (100.0, 50.0))
    assert [(p.x, p.y) for p in parsed.actions[0].path] == [(100.0, 50.0), (5, 6)] and pointer == (5, 6)
    # unknown pointer: press where the mouse really is
    parsed, _, _ = parse_output(family, drag_only, frame, None)
    assert parsed.actions == [MouseDown(), Move(x=5, y=6), MouseUp()]


def test_qwen_scroll_pixels_and_wait():
    frame = Size(width=1288, height=728)
    raw = ('<tool_call>{"name": "computer_use", "arguments": {"action": "scroll", "pixels": -300, "coordinate": [100, 100]}}</tool_call>'
           '<tool_call>{"name": "computer_use", "arguments": {"action": "wait", "time": 2}}</tool_call>')
    assert parse("qwen2.5-vl", raw, frame).actions == [Scroll(x=100, y=100, dx=0, dy=300), Wait(seconds=2)]


def test_qwen3_relative_grid_new_actions_and_tool_calls():
    raw = ('<tool_call>\n{"name": "computer_use", "arguments": {"action": "triple_click", "coordinate": [500, 250]}}\n</tool_call>\n'
           '<tool_call>\n{"name": "computer_use", "arguments": {"action": "hscroll", "pixels": 200}}\n</tool_call>')
    actions = parse("qwen3-vl", raw, pointer=None).actions
    assert actions[0] == Click(x=640, y=180, count=3)
    assert actions[1] == Scroll(x=640, y=180, dx=200, dy=0)
    answer = ('<tool_call>{"name": "computer_use", "arguments": {"action": "answer", "text": "42"}}</tool_call>'
              '<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "success"}}</tool_call>')
    assert parse("qwen3-vl", answer).actions == [Done(status="success", answer="42")]
    # OpenAI tool_calls on the message (vLLM with a tool parser)
    family = get_family("qwen3-vl")
    tool_calls = [{"id": "c1", "type": "function", "function": {"name": "computer_use",
                   "arguments": '{"action": "left_click", "coordinate": [999, 999]}'}}]
    parsed, error, _ = parse_output(family, "", SCREEN, None, tool_calls)
    assert error is None and parsed.actions == [Click(x=1278.72, y=719)]
    assert "<tool_call>" in parsed.history_text
    # qwen2.5-vl does not offer triple_click
    assert "unknown computer_use action" in parse_fails("qwen2.5-vl", raw)


def test_qwen3_thinking_goes_to_the_thought():
    raw = ('<think>The search box is at the top.</think>\n<tool_call>{"name": "computer_use", '
           '"arguments": {"action": "left_click", "coordinate": [500, 40]}}</tool_call>')
    assert parse("qwen3-vl", raw).thought == "The search box is at the top."


@pytest.mark.parametrize("raw,message", [
    ("I think I am done.", "no <tool_call>"),
    ("<tool_call>{not json}</tool_call>", "not valid JSON"),
    ('<tool_call>{"name": "browser", "arguments": {}}</tool_call>', "unknown tool"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": ["a", 2]}}</tool_call>', "must be a number"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "mouse_move"}}</tool_call>', "needs a coordinate"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "key", "keys": ["hyperdrive"]}}</tool_call>', "unknown key"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [1, 2, 3]}}</tool_call>', "[x, y]"),
    ('<tool_call>{"name": "computer_use", "arguments": {"action": "terminate", "status": "maybe"}}</tool_call>', "status"),
    ("", "no <tool_call>"),
])
def test_qwen_malformed(raw, message):
    assert message in parse_fails("qwen2.5-vl", raw)


# -- ui-tars-1.5 ----------------------------------------------------------------------------

def test_uitars_recorded_outputs():
    # bytedance/UI-TARS codes/tests/action_parser_test.py: the box-token and <point> spellings
    frame = Size(width=1288, height=728)  # the smart_resize fixed point: model pixels == screen pixels
    assert parse("ui-tars-1.5", "Thought: test\nAction: click(start_box='<|box_start|>(112,224)<|box_end|>')", frame).actions == [Click(x=112, y=224)]
    parsed = parse("ui-tars-1.5", "Thought: test\nAction: click(point='<point>200 300</point>')", frame)
    assert parsed.actions == [Click(x=200, y=300)] and parsed.thought == "test"
    # bytedance/UI-TARS README_coordinates.md / coordinate_processing_script.py: the worked example's model output
    assert parse("ui-tars-1.5", "Thought: xxx\nAction: click(start_box='(197,525)')", frame).actions == [Click(x=197, y=525)]


def test_uitars_action_space():
    frame = Size(width=1288, height=728)
    raw = ("Thought: select the word and copy it\nAction: drag(start_box='(10,20)', end_box='(110,20)')\n\n"
           "hotkey(key='ctrl c')\n\nleft_double(start_box='(5,5)')\n\nright_single(start_box='[1, 1, 3, 3]')\n\n"
           "scroll(start_box='(300,300)', direction='down')\n\nwait()")
    actions = parse("ui-tars-1.5", raw, frame).actions
    assert isinstance(actions[0], Drag) and [(p.x, p.y) for p in actions[0].path] == [(10, 20), (110, 20)]
    assert actions[1:] == [Key(keys=["Control", "c"]), Click(x=5, y=5, count=2), Click(x=2, y=2, button="right"),
                           Scroll(x=300, y=300, dx=0, dy=500), Wait(seconds=5)]


def test_uitars_type_with_quotes_newline_and_finished():
    frame = Size(width=1288, height=728)
    assert parse("ui-tars-1.5", "Thought: t\nAction: type(content='it\\'s \"fine\"\\n')", frame).actions == [
        Type(text="it's \"fine\""), Key(keys=["Enter"])]
    # unescaped inner quote (a common model slip) is recovered by position
    assert parse("ui-tars-1.5", "Action: type(content='don't stop')", frame).actions == [Type(text="don't stop")]
    parsed = parse("ui-tars-1.5", "Thought: all set\nAction: finished(content='The price is $5')", frame)
    assert parsed.actions == [Done(status="success", answer="The price is $5")]
    assert parse("ui-tars-1.5", "Action: finished()", frame).actions == [Done(status="success")]


def test_uitars_backslashes_are_read_in_one_pass():
    frame = Size(width=1288, height=728)
    # a path as models write it: a backslash before an ordinary letter is kept
    assert parse("ui-tars-1.5", "Action: type(content='C:\\Users\\me')", frame).actions == [Type(text="C:\\Users\\me")]
    # an escaped backslash followed by `n` is a backslash and an n, not a newline
    assert parse("ui-tars-1.5", "Action: type(content='a\\\\nb')", frame).actions == [Type(text="a\\nb")]
    family = get_family("ui-tars-1.5")
    for text in ("\\", "a\\", "\\n", "it\\'s", "C:\\new"):
        rendered = family.render([Type(text=text)], frame)
        assert family.parse(rendered, family.context(frame)).actions == [Type(text=text)], rendered


@pytest.mark.parametrize("raw,message", [
    ("Thought: I am thinking only.", "no `Action:`"),
    ("Thought: t\nAction: teleport(start_box='(1,2)')", "unknown UI-TARS action"),
    ("Thought: t\nAction: click(start_box=)", "cannot read action"),
    ("Thought: t\nAction: click()", "needs start_box"),
    ("Thought: t\nAction: scroll(start_box='(1,2)', direction='sideways')", "scroll direction"),
    ("Thought: t\nAction: click(start_box='(a,b)')", "must be a number"),
])
def test_uitars_malformed(raw, message):
    assert message in parse_fails("ui-tars-1.5", raw)


# -- openai ---------------------------------------------------------------------------------

def test_openai_computer_call_items():
    # Item shapes from OpenAI's computer-use guide (computer_call with an action, a
    # reasoning summary, and message output).
    raw = """[
      {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Clicking on the browser address bar."}]},
      {"type": "computer_call", "id": "cu_1", "call_id": "call_1", "action": {"type": "click", "button": "left", "x": 156, "y": 50},
       "pending_safety_checks": [], "status": "completed"}
    ]"""
    parsed = parse("openai", raw)
    assert parsed.actions == [Click(x=156, y=50)] and parsed.thought == "Clicking on the browser address bar."


def test_openai_action_types():
    raw = """```json
    [{"type": "double_click", "x": 1, "y": 2},
     {"type": "drag", "path": [{"x": 1, "y": 1}, {"x": 5, "y": 5}, {"x": 9, "y": 9}]},
     {"type": "keypress", "keys": ["CTRL", "L"]},
     {"type": "type", "text": "hello"},
     {"type": "scroll", "x": 640, "y": 360, "scroll_x": 0, "scroll_y": -200},
     {"type": "move", "x": 3, "y": 4},
     {"type": "click", "x": 0, "y": 0, "button": "wheel"},
     {"type": "click", "x": 0, "y": 0, "button": "back"},
     {"type": "wait"}, {"type": "screenshot"}]
    ```"""
    actions = parse("openai", raw).actions
    assert actions[0] == Click(x=1, y=2, count=2)
    assert isinstance(actions[1], Drag) and len(actions[1].path) == 3
    assert actions[2:] == [Key(keys=["Control", "L"]), Type(text="hello"), Scroll(x=640, y=360, dx=0, dy=-200),
                           Move(x=3, y=4), Click(x=0, y=0, button="middle"), Back(), Wait(seconds=1), Wait(seconds=0)]


def test_openai_message_only_means_done_and_malformed():
    assert parse("openai", "The flight costs $320.").actions == [Done(status="success", answer="The flight costs $320.")]
    assert "unknown OpenAI computer action" in parse_fails("openai", '{"type": "teleport"}')
    assert "invalid JSON" in parse_fails("openai", '{"type": "click", "x": ')
    assert "needs x and y" in parse_fails("openai", '{"type": "click"}')
    assert "unknown mouse button" in parse_fails("openai", '{"type": "click", "x": 1, "y": 1, "button": "thumb"}')


# -- anthropic ------------------------------------------------------------------------------

def test_anthropic_tool_use_message_scaled_from_the_api_image():
    # Shape of an Anthropic Messages response with a computer tool_use block (docs'
    # computer use example); the screen is 1920x1200, which Claude sees at 1280x800.
    raw = """{"role": "assistant", "content": [
      {"type": "text", "text": "I'll open the menu."},
      {"type": "tool_use", "id": "toolu_01", "name": "computer", "input": {"action": "left_click", "coordinate": [640, 400]}}]}"""
    frame = Size(width=1920, height=1200)
    parsed = parse("anthropic", raw, frame)
    assert parsed.actions == [Click(x=960, y=600)] and parsed.thought == "I'll open the menu."


def test_anthropic_actions():
    raw = """[{"action": "key", "text": "ctrl+s"}, {"action": "key", "text": "Return"},
      {"action": "type", "text": "Hello"}, {"action": "mouse_move", "coordinate": [10, 10]},
      {"action": "left_click_drag", "start_coordinate": [1, 1], "coordinate": [20, 20]},
      {"action": "scroll", "coordinate": [100, 100], "scroll_direction": "down", "scroll_amount": 3},
      {"action": "double_click", "coordinate": [5, 5]}, {"action": "triple_click", "coordinate": [6, 6]},
      {"action": "left_click", "coordinate": [7, 7], "text": "shift"},
      {"action": "hold_key", "text": "alt", "duration": 1},
      {"action": "wait", "duration": 2}, {"action": "key", "text": "ctrl+a BackSpace"}]"""
    actions = parse("anthropic", raw).actions
    assert actions[:4] == [Key(keys=["Control", "s"]), Key(keys=["Enter"]), Type(text="Hello"), Move(x=10, y=10)]
    assert isinstance(actions[4], Drag) and [(p.x, p.y) for p in actions[4].path] == [(1, 1), (20, 20)]
    assert actions[5:] == [
        Scroll(x=100, y=100, dx=0, dy=300), Click(x=5, y=5, count=2), Click(x=6, y=6, count=3),
        KeyDown(key="Shift"), Click(x=7, y=7), KeyUp(key="Shift"),
        KeyDown(key="Alt"), Wait(seconds=1), KeyUp(key="Alt"), Wait(seconds=2),
        Key(keys=["Control", "a"]), Key(keys=["Backspace"]),
    ]
    # the 2024 tool's drag: from where the pointer is
    parsed, _, _ = parse_output(get_family("anthropic"), '{"action": "left_click_drag", "coordinate": [9, 9]}', SCREEN, (1.0, 2.0))
    assert [(p.x, p.y) for p in parsed.actions[0].path] == [(1.0, 2.0), (9, 9)]


def test_anthropic_malformed():
    assert "unknown computer tool action" in parse_fails("anthropic", '{"action": "zoom"}')
    assert "needs coordinate" in parse_fails("anthropic", '{"action": "mouse_move"}')
    assert "scroll_direction" in parse_fails("anthropic", '{"action": "scroll", "scroll_direction": "in"}')


# -- osworld --------------------------------------------------------------------------------

def test_osworld_pyautogui_code():
    # The answer format OSWorld's screenshot/pyautogui prompt asks for (code in a
    # ```python block, with the agent's reasoning around it).
    raw = """I need to open the terminal and type the command.
```python
import pyautogui
import time
pyautogui.click(960, 540)
time.sleep(0.5)
pyautogui.typewrite('ls -la', interval=0.05)
pyautogui.press('enter')
pyautogui.hotkey('ctrl', 'shift', 't')
x, y = 100, 200
pyautogui.moveTo(x + 10, y * 2)
pyautogui.dragTo(300, 400, duration=0.5, button='left')
pyautogui.scroll(-5)
pyautogui.write(['tab', 'tab'])
pyautogui.doubleClick(x=5, y=6)
pyautogui.rightClick((7, 8))
pyautogui.keyDown('shift'); pyautogui.keyUp('shift')
```"""
    parsed = parse("osworld", raw, Size(width=1920, height=1080))
    assert parsed.thought == "I need to open the terminal and type the command."
    assert parsed.actions[:6] == [Click(x=960, y=540), Wait(seconds=0.5), Type(text="ls -la"), Key(keys=["Enter"]),
                                  Key(keys=["Control", "Shift", "t"]), Move(x=110, y=400)]
    assert isinstance(parsed.actions[6], Drag) and [(p.x, p.y) for p in parsed.actions[6].path] == [(110, 400), (300, 400)]
    assert parsed.actions[7:] == [Scroll(x=300, y=400, dx=0, dy=500), Key(keys=["Tab"]), Key(keys=["Tab"]),
                                  Click(x=5, y=6, count=2), Click(x=7, y=8, button="right"),
                                  KeyDown(key="Shift"), KeyUp(key="Shift")]


def test_osworld_special_answers_and_computer13():
    assert parse("osworld", "```DONE```").actions == [Done(status="success")]
    assert parse("osworld", "FAIL").actions == [Done(status="infeasible")]
    assert parse("osworld", "WAIT").actions == [Wait(seconds=1)]
    # computer_13 (OSWorld desktop_env/actions.py ACTION_SPACE): flat and nested parameters
    raw = """```json
    [{"action_type": "CLICK", "x": 10, "y": 20, "button": "right", "num_clicks": 1},
     {"action_type": "TYPING", "parameters": {"text": "abc"}},
     {"action_type": "HOTKEY", "keys": ["ctrl", "c"]},
     {"action_type": "SCROLL", "dx": 0, "dy": -2},
     {"action_type": "MOVE_TO", "x": 1, "y": 1}, {"action_type": "DRAG_TO", "x": 9, "y": 9},
     {"action_type": "DONE"}]
    ```"""
    actions = parse("osworld", raw).actions
    assert actions[:4] == [Click(x=10, y=20, button="right"), Type(text="abc"), Key(keys=["Control", "c"]),
                           Scroll(x=10, y=20, dx=0, dy=200)]
    assert actions[4] == Move(x=1, y=1) and isinstance(actions[5], Drag) and actions[6] == Done()


def test_osworld_code_is_never_executed():
    hostile = "```python\nimport os\nos.system('touch /tmp/cua_pwned')\n```"
    assert "unsupported call os.system" in parse_fails("osworld", hostile)
    assert "unsupported statement" in parse_fails("osworld", "```python\nfor i in range(3):\n    pyautogui.click(1, 1)\n```")
    assert "unsupported call pyautogui.locateCenterOnScreen" in parse_fails(
        "osworld", "pyautogui.locateCenterOnScreen('x.png')")
    assert "unsupported expression" in parse_fails("osworld", "pyautogui.click(__import__('os').getpid(), 1)")
    assert "not valid python" in parse_fails("osworld", "```python\npyautogui.click(1,\n```")
    assert "no pyautogui code" in parse_fails("osworld", "I would click the button.")
    assert "unknown pointer" in parse_fails("osworld", "pyautogui.moveRel(5, 5)")
    assert "unknown name" in parse_fails("osworld", "pyautogui.click(x, y)")


def test_unknown_family_name():
    with pytest.raises(ValueError, match="known: androidworld, anthropic"):
        get_family("gpt-9")
