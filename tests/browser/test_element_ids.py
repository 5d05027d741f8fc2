"""Element-id grounding in a real browser: interactive elements carry stable ids and their
states, an action may name an id (resolved by the sandbox at act time, and reported in
pixels), and ids survive a snapshot restore and a fork."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image

from cua.actions import Click, ClickElement, HoverElement
from cua.marks import draw_marks
from cua.observation import Observation, ObserveOptions, Size
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import SqlQuery
from cua.tasks.apps import service

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

TODO = ServiceSpec.model_validate(service("todo"))
IDS = ObserveOptions(element_ids=True)
START = "/lists/1?show=all"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb() -> AsyncIterator[BrowserSandbox]:
    box = await BrowserSandbox.create(BrowserConfig(services=[TODO], start_url=START, isolation="shared"),
                                      sandbox_id="ids-main")
    try:
        yield box
    finally:
        await box.close()


def node(obs: Observation, name: str) -> dict[str, Any]:
    assert obs.axtree is not None
    (found,) = [n for n in obs.axtree if n.get("name") == name]
    return found


def checkboxes(obs: Observation) -> list[dict[str, Any]]:
    assert obs.axtree is not None
    return [n for n in obs.axtree if n.get("role") == "checkbox"]


async def done_by_title(sb: BrowserSandbox) -> dict[str, int]:
    (res,) = await sb.query([SqlQuery(query="SELECT title, done FROM todos WHERE list_id = 1")])
    return {r["title"]: int(r["done"]) for r in res.value}


async def test_ids_states_and_acting_by_id(sb: BrowserSandbox) -> None:
    obs = await sb.reset(seed=0, observe=IDS)
    boxes = checkboxes(obs)
    assert len(boxes) >= 3 and all(b["id"] and b["bbox"]["width"] > 0 for b in boxes)
    assert len({b["id"] for b in boxes}) == len(boxes)
    target = next(b for b in boxes if "checked" not in b.get("states", []))
    title = target["name"].removeprefix("Done: ")
    assert (await done_by_title(sb))[title] == 0

    # the same page read again keeps every id
    again = await sb.observe(IDS)
    assert [b["id"] for b in checkboxes(again)] == [b["id"] for b in boxes]

    after = await sb.act(ClickElement(element=target["id"]), observe=IDS)
    assert after.error is None
    assert (await done_by_title(sb))[title] == 1
    # the ticked checkbox now says so in the tree
    assert "checked" in node(after, target["name"]).get("states", [])
    # the resolved point is the element's centre, in the observation's frame
    assert after.resolved_action is not None and after.resolved_action["type"] == "click"
    box = target["bbox"]
    assert abs(after.resolved_action["x"] - (box["x"] + box["width"] / 2)) <= 1.5
    assert abs(after.resolved_action["y"] - (box["y"] + box["height"] / 2)) <= 1.5


async def test_resolved_point_is_in_the_agents_frame(sb: BrowserSandbox) -> None:
    half = ObserveOptions(element_ids=True, frame=Size(width=640, height=360))
    obs = await sb.reset(seed=0, observe=half)
    target = next(b for b in checkboxes(obs) if "checked" not in b.get("states", []))
    after = await sb.act(HoverElement(element=target["id"]), frame=obs.frame, observe=half)
    assert after.error is None and after.resolved_action is not None
    full = await sb.observe(IDS)
    full_box = node(full, target["name"])["bbox"]
    assert abs(after.resolved_action["x"] * 2 - (full_box["x"] + full_box["width"] / 2)) <= 2
    assert abs(after.resolved_action["y"] * 2 - (full_box["y"] + full_box["height"] / 2)) <= 2


async def test_unknown_id_is_the_agents_error(sb: BrowserSandbox) -> None:
    await sb.reset(seed=0, observe=IDS)
    obs = await sb.act(ClickElement(element="e999999"), observe=IDS)
    assert obs.error is not None and obs.error.reason == "unknown_element"
    ok = await sb.act(Click(x=5, y=5))
    assert ok.error is None  # the episode goes on


async def test_ids_survive_restore_and_fork(sb: BrowserSandbox) -> None:
    obs = await sb.reset(seed=0, observe=IDS)
    before = {b["name"]: b["id"] for b in checkboxes(obs)}
    open_boxes = [b for b in checkboxes(obs) if "checked" not in b.get("states", [])]
    snap = await sb.snapshot()
    # move on: the page reloads with the first todo ticked (a new document, other ids)
    away = await sb.act(ClickElement(element=open_boxes[0]["id"]), observe=IDS)
    assert away.error is None
    restored = await sb.restore(snap, observe=IDS)
    assert {b["name"]: b["id"] for b in checkboxes(restored)} == before
    name, eid = open_boxes[-1]["name"], open_boxes[-1]["id"]
    title = name.removeprefix("Done: ")
    assert (await done_by_title(sb))[title] == 0
    clicked = await sb.act(ClickElement(element=eid), observe=IDS)
    assert clicked.error is None and (await done_by_title(sb))[title] == 1

    child = await sb.fork(snap, sandbox_id="ids-fork")
    try:
        forked = await child.observe(IDS)
        assert {b["name"]: b["id"] for b in checkboxes(forked)} == before
        first_name, first_id = open_boxes[0]["name"], open_boxes[0]["id"]
        await child.act(ClickElement(element=first_id))
        assert (await done_by_title(child))[first_name.removeprefix("Done: ")] == 1
    finally:
        await child.close()


async def test_marks_are_drawn_on_a_copy(sb: BrowserSandbox) -> None:
    obs = await sb.reset(seed=0, observe=IDS)
    assert obs.screenshot is not None
    original = obs.screenshot.data
    marked = draw_marks(obs)
    assert obs.screenshot.data == original and marked[:3] == b"\xff\xd8\xff"
    a = Image.open(io.BytesIO(original)).convert("RGB")
    b = Image.open(io.BytesIO(marked)).convert("RGB")
    assert a.size == b.size
    box = checkboxes(obs)[0]["bbox"]
    # the mark's outline runs along the element's box
    x, y = int(box["x"]) - 1, int(box["y"] + box["height"] / 2)
    assert a.getpixel((x, y)) != b.getpixel((x, y))
