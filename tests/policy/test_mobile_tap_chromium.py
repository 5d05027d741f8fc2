"""A phone model's output taps the element it means, in real Chromium (issue 33's "done when").

A page of app icons under Playwright's mobile emulation with touch (`has_touch`, `is_mobile`,
a pixel ratio of 3); the screenshot the model would see is the device-pixel one. Each
family's output names the target icon's centre in that family's own coordinates (Qwen3-VL:
0..999 of the screen; Qwen2.5-VL and UI-TARS: pixels of the smart-resized screenshot;
AndroidWorld: pixels of the screenshot), written here from the conventions' definitions.
The parsed tap must lie inside the icon's box; mapped to the screen by `scale_action`, it is
sent as touch input (CDP `Input.dispatchTouchEvent`), and the icon, and nothing else, gets
the touch and then the click Chromium makes of the tap. The last test does the same through
the mobile sandbox kind (sandboxes/mobile) and its probe app."""

from __future__ import annotations

import json
from typing import Any

import pytest
from playwright.async_api import Browser

from cua.actions import Tap
from cua.observation import Size
from cua.policy.engine import parse_output
from cua.policy.families import get_family
from cua.policy.imaging import smart_resize
from cua.sandbox import scale_action

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium

SCREEN = Size(width=360, height=740)  # CSS px
DPR = 3
FRAME = Size(width=SCREEN.width * DPR, height=SCREEN.height * DPR)  # the screenshot, device px

#: Twelve icons in a 4x3 grid, each recording the events it gets (with where they were aimed).
PAGE = """<!doctype html><meta name=viewport content="width=device-width,initial-scale=1">
<style>body { margin: 0 } #grid { display: grid; grid-template-columns: repeat(4, 72px); gap: 16px;
  padding: 400px 28px 0 } button { width: 72px; height: 72px; border: 0; border-radius: 16px }</style>
<div id=grid></div><script>
window.seen = [];
const names = ["Phone", "Messages", "Clock", "Gallery", "Settings", "Contacts", "Camera", "Maps", "Mail",
               "Notes", "Music", "Files"];
for (const name of names) {
  const b = document.createElement("button"); b.id = name; b.textContent = name;
  document.getElementById("grid").append(b);
}
for (const kind of ["touchstart", "touchend", "pointerdown", "mousedown", "click"])
  addEventListener(kind, e => seen.push({type: kind, target: e.target.id || e.target.tagName,
                                         pointerType: e.pointerType || null}), true);
</script>"""


def _output(family: str, cx: float, cy: float) -> str:
    """The family's tap at CSS point (cx, cy), in the family's coordinates."""
    fx, fy = cx * DPR, cy * DPR  # screenshot pixels
    if family == "qwen3-vl-mobile":
        args = {"action": "click", "coordinate": [round(fx / FRAME.width * 1000), round(fy / FRAME.height * 1000)]}
        return f'<tool_call>\n{json.dumps({"name": "mobile_use", "arguments": args})}\n</tool_call>'
    if family == "androidworld":
        return f'Reason: open it\nAction: {{"action_type": "click", "x": {round(fx)}, "y": {round(fy)}}}'
    height, width = smart_resize(FRAME.height, FRAME.width, 28,
                                 *((100 * 28 * 28, 16384 * 28 * 28) if family.startswith("ui-tars") else (None, None)))
    mx, my = round(fx * width / FRAME.width), round(fy * height / FRAME.height)
    if family == "qwen2.5-vl-mobile":
        args = {"action": "click", "coordinate": [mx, my]}
        return f'<tool_call>\n{json.dumps({"name": "mobile_use", "arguments": args})}\n</tool_call>'
    return f"Thought: open it\nAction: click(start_box='<|box_start|>({mx},{my})<|box_end|>')"


@pytest.mark.parametrize("family", ["qwen3-vl-mobile", "qwen2.5-vl-mobile", "ui-tars-1.5-mobile", "androidworld"])
@pytest.mark.parametrize("target", ["Clock", "Files"])
async def test_a_model_output_taps_the_element_it_names(browser: Browser, family: str, target: str) -> None:
    context = await browser.new_context(viewport={"width": SCREEN.width, "height": SCREEN.height},
                                        device_scale_factor=DPR, is_mobile=True, has_touch=True)
    try:
        page = await context.new_page()
        await page.set_content(PAGE)
        shot = await page.screenshot()
        assert (int.from_bytes(shot[16:20], "big"), int.from_bytes(shot[20:24], "big")) == (FRAME.width, FRAME.height)
        box = await page.locator(f"#{target}").bounding_box()
        assert box is not None
        parsed, error, _ = parse_output(get_family(family), _output(family, box["x"] + box["width"] / 2,
                                                                     box["y"] + box["height"] / 2), FRAME)
        assert error is None and parsed is not None, error
        [tap] = parsed.actions
        assert isinstance(tap, Tap)
        # inside the icon, in the screenshot's pixels
        assert box["x"] * DPR <= tap.x <= (box["x"] + box["width"]) * DPR
        assert box["y"] * DPR <= tap.y <= (box["y"] + box["height"]) * DPR
        on_screen = scale_action(tap, FRAME, SCREEN)
        assert isinstance(on_screen, Tap)
        cdp = await context.new_cdp_session(page)
        point = {"x": on_screen.x, "y": on_screen.y, "id": 0, "radiusX": 1, "radiusY": 1, "force": 1}
        await cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [point]})
        await cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
        await page.wait_for_function("window.seen.some(e => e.type === 'click')", timeout=5000)
        seen: list[dict[str, Any]] = await page.evaluate("window.seen")
        kinds = [e["type"] for e in seen]
        assert {e["target"] for e in seen} == {target}, seen  # the icon, and no other
        assert kinds[:2] == ["pointerdown", "touchstart"] and seen[0]["pointerType"] == "touch", seen
        assert "mousedown" not in kinds[:kinds.index("touchend")], seen  # touch first, never mouse
        assert kinds.index("click") > kinds.index("touchend"), seen
    finally:
        await context.close()


async def test_in_the_mobile_sandbox_a_qwen_output_taps_the_link_it_names() -> None:
    """The same through the mobile sandbox: its observation's frame, the parsed tap acted as
    the agent's action; the probe app's "next" link is followed (and only a tap on it is)."""
    from _phone import frame_of, phone
    from playwright.async_api import expect

    async with phone(start_app="probe") as sb:
        obs = await sb.reset(seed=0)
        frame = obs.frame
        viewport = sb.page.viewport_size
        assert viewport is not None
        scale = frame.width / viewport["width"]
        probe = frame_of(sb, "probe")
        box = await probe.locator("#next").bounding_box()  # CSS px of the screen
        assert box is not None
        cx, cy = (box["x"] + box["width"] / 2) * scale, (box["y"] + box["height"] / 2) * scale
        args = {"action": "click", "coordinate": [round(cx / frame.width * 1000), round(cy / frame.height * 1000)]}
        raw = f'I open the next page.\n<tool_call>\n{json.dumps({"name": "mobile_use", "arguments": args})}\n</tool_call>'
        parsed, error, _ = parse_output(get_family("qwen3-vl-mobile"), raw, frame)
        assert error is None and parsed is not None, error
        [tap] = parsed.actions
        assert isinstance(tap, Tap)
        after = await sb.act(tap, frame=frame)
        assert after.error is None, after.error
        await expect(probe.locator("#where")).to_have_text("/p2")
