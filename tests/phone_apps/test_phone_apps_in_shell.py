"""The five phone apps inside the real mobile sandbox (`kind: mobile`, the phone shell in
front of them), driven by touch only: the drawer shows each, the shade shows their
notifications (missed calls, unread messages, running timers) and a tapped notification
opens its place in its app, which reads it; a number dialled by taps on the keypad is in
the call log the judge reads; a photo shared from the gallery through the share sheet is
texted from messages."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from _phone import frame_of

from cua.sandboxes.mobile import MobileSandbox
from cua.tasks.apps import service

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium

APPS = ["dialer", "messages", "clock", "gallery", "phone_settings"]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sb() -> AsyncIterator[MobileSandbox]:
    config = {"isolation": "shared", "services": [service(a, a) for a in APPS], "share_paths": {"messages": "/new?body={text}"}}
    sandbox = await MobileSandbox.create(config, sandbox_id="phone-apps-test")
    try:
        yield sandbox
    finally:
        await sandbox.close()


@pytest_asyncio.fixture(loop_scope="module", autouse=True)
async def _fresh(sb: MobileSandbox) -> None:
    await sb.reset(seed=0)


async def state_of(sb: MobileSandbox, app: str) -> dict[str, Any]:
    [result] = await sb.query([{"kind": "app_state", "service": app}])
    assert result.ok, result
    value: dict[str, Any] = result.value
    return value


async def tap_selector(sb: MobileSandbox, selector: str, app: str | None = None) -> None:
    """A tap (a touch, not a click) on the centre of an element of the shell or of `app`'s page."""
    frame = frame_of(sb, app) if app else sb.page.main_frame
    target = frame.locator(selector).first
    await target.scroll_into_view_if_needed()
    box = await target.bounding_box()
    assert box is not None, selector
    obs = await sb.act({"type": "tap", "x": box["x"] + box["width"] / 2, "y": box["y"] + box["height"] / 2})
    assert obs.error is None, obs.error


async def test_the_drawer_shows_every_phone_app(sb: MobileSandbox) -> None:
    await sb.act({"type": "swipe", "x": 200, "y": 600, "direction": "up", "distance": 200})
    shown = await sb.page.locator("#drawer-grid .icon").evaluate_all("els => els.map(e => e.dataset.app)")
    assert sorted(shown) == sorted(APPS)


async def test_a_message_notification_opens_its_thread_which_reads_it(sb: MobileSandbox) -> None:
    unread = [n for n in (await state_of(sb, "messages"))["notifications"]]
    missed = (await state_of(sb, "dialer"))["notifications"]
    timers = (await state_of(sb, "clock"))["notifications"]
    assert unread and missed and timers
    await sb.act({"type": "swipe", "x": 200, "y": 6, "direction": "down", "distance": 300})
    [shell] = await sb.query([{"kind": "app_state", "service": "shell"}])
    shown = {(n["app"], n["id"]) for n in shell.value["notifications_shown"]}
    assert {("messages", n["id"]) for n in unread} | {("dialer", n["id"]) for n in missed} | {("clock", n["id"]) for n in timers} <= shown
    note = unread[0]
    await tap_selector(sb, f"#notifications button[data-id='{note['id']}']")
    [url] = await sb.query([{"kind": "url"}])
    assert str(url.value).endswith(note["link"])
    after = await state_of(sb, "messages")
    thread_id = int(note["link"].rsplit("/", 1)[1])
    assert next(t for t in after["threads"] if t["id"] == thread_id)["unread"] == 0
    assert note["id"] not in {n["id"] for n in after["notifications"]}


async def test_a_number_dialled_by_taps_is_in_the_call_log(sb: MobileSandbox) -> None:
    before = len((await state_of(sb, "dialer"))["calls"])
    obs = await sb.act({"type": "open_app", "name": "dialer"})
    assert obs.error is None, obs.error
    for digit in "07700900123":
        await tap_selector(sb, f".key[data-key='{digit}']", "dialer")
    assert await frame_of(sb, "dialer").input_value("#number") == "07700900123"
    await tap_selector(sb, "#dial", "dialer")
    await frame_of(sb, "dialer").wait_for_selector("#end-call")
    calls = (await state_of(sb, "dialer"))["calls"]
    assert len(calls) == before + 1
    assert (calls[-1]["number"], calls[-1]["direction"], calls[-1]["status"]) == ("07700900123", "outgoing", "active")


async def test_a_photo_shared_through_the_share_sheet_is_texted(sb: MobileSandbox) -> None:
    photo = next(p for p in (await state_of(sb, "gallery"))["photos"] if not p["trashed_at"] and p["place"])
    person = (await state_of(sb, "messages"))["contacts"][3]
    await sb.act({"type": "open_app", "name": "gallery"})
    await tap_selector(sb, f".cell[data-id='{photo['id']}']", "gallery")
    await frame_of(sb, "gallery").wait_for_selector(".share:not([hidden])")  # only the shell gives Share
    await tap_selector(sb, ".share", "gallery")
    await tap_selector(sb, "#dialog button >> text=Messages")
    [shell] = await sb.query([{"kind": "app_state", "service": "shell"}])
    assert shell.value["open_app"] == "messages"
    [share] = shell.value["shares"]
    assert (share["from"], share["to"]) == ("gallery", "messages") and share["text"].startswith(photo["caption"] + " (")
    messages = frame_of(sb, "messages")
    await messages.wait_for_selector(".shared")
    await tap_selector(sb, "#to-q", "messages")
    for action in ({"type": "type", "text": person["name"]}, {"type": "key", "keys": "Enter"}):
        obs = await sb.act(action)
        assert obs.error is None, obs.error
    await messages.wait_for_url("**/new?q=*")
    await tap_selector(sb, "a.pick[href*='to=']", "messages")
    await messages.wait_for_selector("#composer textarea")
    assert await messages.input_value("#composer textarea") == share["text"]
    await tap_selector(sb, "#composer .send", "messages")
    await messages.wait_for_selector(".bubble.out")
    sent = (await state_of(sb, "messages"))["messages"][-1]
    assert (sent["name"], sent["body"]) == (person["name"], share["text"])
