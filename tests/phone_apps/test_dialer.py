"""The dialer in real Chromium with mobile emulation, driven by taps: dialling on the keypad
writes an outgoing call to the log, the call screen's Mute and Speaker and End call are
state, opening the log clears the missed-call notifications, favourites star and call,
and Clear call history asks first."""

from __future__ import annotations

import pytest
from _phone_rig import open_phone
from playwright.async_api import Browser, expect

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium


async def test_dialling_a_contacts_number_on_the_keypad_logs_the_call(browser: Browser) -> None:
    async with open_phone(browser, "dialer") as phone:
        ana = phone.app.state()["contacts"][5]
        before = len(phone.app.state()["calls"])
        await phone.open("/keypad")
        for ch in ana["number"]:  # typed as a person does: the keypad's keys, spaces and brackets skipped
            if ch.isdigit():
                await phone.page.get_by_role("button", name=ch, exact=True).tap()
        await expect(phone.page.get_by_label("Phone number")).to_have_value("".join(c for c in ana["number"] if c.isdigit()))
        await phone.page.get_by_role("button", name="Call", exact=True).tap()
        await expect(phone.page.get_by_role("status")).to_have_text("Calling…")
        calls = phone.app.state()["calls"]
        assert len(calls) == before + 1
        call = calls[-1]
        assert (call["direction"], call["status"], call["contact_id"], call["name"]) == ("outgoing", "active", ana["id"], ana["name"])
        await expect(phone.page.get_by_role("heading", name=ana["name"])).to_be_visible()

        await phone.page.get_by_role("button", name="Mute").tap()
        await expect(phone.page.get_by_role("button", name="Mute")).to_have_attribute("aria-pressed", "true")
        await phone.page.get_by_role("button", name="Speaker").tap()
        await expect(phone.page.get_by_role("button", name="Speaker")).to_have_attribute("aria-pressed", "true")
        assert (phone.app.state()["calls"][-1]["muted"], phone.app.state()["calls"][-1]["speaker"]) == (1, 1)
        await phone.page.get_by_role("button", name="End call").tap()
        await phone.page.wait_for_url("**/recents")
        assert phone.app.state()["calls"][-1]["status"] == "ended"
        await expect(phone.page.locator(".entry").first).to_contain_text(ana["name"])


async def test_an_unknown_number_is_logged_as_typed_and_junk_is_refused(browser: Browser) -> None:
    async with open_phone(browser, "dialer") as phone:
        before = len(phone.app.state()["calls"])
        await phone.open("/keypad")
        await phone.page.get_by_label("Phone number").fill("not a number")
        await phone.page.get_by_role("button", name="Call", exact=True).tap()
        await phone.page.wait_for_url("**/keypad?number=not+a+number")
        assert len(phone.app.state()["calls"]) == before
        await phone.page.get_by_label("Phone number").fill("+34 600 11 22 33")
        await phone.page.get_by_role("button", name="Call", exact=True).tap()
        await expect(phone.page.get_by_role("status")).to_have_text("Calling…")
        call = phone.app.state()["calls"][-1]
        assert (call["number"], call["contact_id"], call["direction"]) == ("+34 600 11 22 33", None, "outgoing")


async def test_missed_calls_are_notifications_until_the_log_is_opened(browser: Browser) -> None:
    async with open_phone(browser, "dialer") as phone:
        notes = phone.app.state()["notifications"]
        assert notes and all(n["app"] == "dialer" and n["title"] == "Missed call" for n in notes)
        await phone.open(notes[0]["link"])
        assert phone.app.state()["notifications"] == []
        await expect(phone.page.get_by_role("link", name="Missed")).to_have_attribute("aria-current", "page")
        assert await phone.page.locator(".entry").count() == await phone.page.locator(".entry.missed").count() > 0


async def test_starring_a_contact_makes_a_favourite_that_calls(browser: Browser) -> None:
    async with open_phone(browser, "dialer") as phone:
        target = next(c for c in phone.app.state()["contacts"] if not c["favourite"])
        await phone.open("/contacts")
        await phone.page.get_by_role("searchbox", name="Search contacts").fill(target["name"])
        await phone.page.get_by_role("searchbox", name="Search contacts").press("Enter")
        star = phone.page.get_by_role("button", name=f"Favourite {target['name']}")
        await star.tap()
        await expect(star).to_have_attribute("aria-pressed", "true")
        assert next(c for c in phone.app.state()["contacts"] if c["id"] == target["id"])["favourite"] == 1
        await phone.page.get_by_role("link", name="Favourites").tap()
        await phone.page.get_by_role("button", name=f"Call {target['name']}").tap()
        await expect(phone.page.get_by_role("status")).to_have_text("Calling…")
        assert phone.app.state()["calls"][-1]["contact_id"] == target["id"]


async def test_clear_call_history_asks_first(browser: Browser) -> None:
    async with open_phone(browser, "dialer") as phone:
        count = len(phone.app.state()["calls"])
        await phone.open("/recents")
        await phone.page.get_by_role("button", name="Clear call history").tap()
        dialog = phone.page.get_by_role("dialog", name="Clear call history?")
        await dialog.get_by_role("button", name="Cancel").tap()
        await expect(dialog).to_be_hidden()
        assert len(phone.app.state()["calls"]) == count
        await phone.page.get_by_role("button", name="Clear call history").tap()
        await dialog.get_by_role("button", name="Clear").tap()
        await expect(phone.page.get_by_text("No calls")).to_be_visible()
        assert phone.app.state()["calls"] == []
