"""Clock in real Chromium with mobile emulation, driven by taps: an alarm is created with
its time, days and label, edited, switched off by its switch alone and deleted after a
confirmation; a bad time is refused with a message; a city joins and leaves the world
clock; a timer is set, paused, reset and deleted, and running timers are notifications."""

from __future__ import annotations

import pytest
from _phone_rig import open_phone
from playwright.async_api import Browser, expect

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium


async def test_an_alarm_is_created_edited_switched_and_deleted(browser: Browser) -> None:
    async with open_phone(browser, "clock") as phone:
        before = len(phone.app.state()["alarms"])
        await phone.open("/alarms")
        await phone.page.get_by_role("link", name="Add alarm").tap()
        await phone.page.get_by_label("Alarm time").fill("06:45")
        for day in ("Monday", "Wednesday", "Friday"):
            await phone.page.get_by_role("checkbox", name=day).tap()
        await phone.page.get_by_placeholder("Add label").fill("Swim  club")
        await phone.page.get_by_role("button", name="Save").tap()
        await phone.page.wait_for_url("**/alarms")
        alarms = phone.app.state()["alarms"]
        assert len(alarms) == before + 1
        new = alarms[-1]
        assert (new["time"], new["days"], new["label"], new["enabled"]) == ("06:45", ["mon", "wed", "fri"], "Swim club", 1)
        await expect(phone.page.locator(f".alarm[data-id='{new['id']}'] .alarm-days")).to_have_text("Mon, Wed, Fri")

        switch = phone.page.get_by_role("switch", name="Alarm 06:45 Swim club")
        await switch.tap()  # no Save button: the switch saves itself
        await expect(phone.page.get_by_role("switch", name="Alarm 06:45 Swim club")).not_to_be_checked()
        assert phone.app.state()["alarms"][-1]["enabled"] == 0

        await phone.page.get_by_role("link", name="Edit alarm 06:45 Swim club").tap()
        await phone.page.get_by_role("checkbox", name="Wednesday").tap()
        await phone.page.get_by_role("checkbox", name="Saturday").tap()
        await phone.page.get_by_label("Alarm time").fill("07:10")
        await phone.page.get_by_role("button", name="Save").tap()
        await phone.page.wait_for_url("**/alarms")
        edited = phone.app.state()["alarms"][-1]
        assert (edited["time"], edited["days"], edited["enabled"]) == ("07:10", ["mon", "fri", "sat"], 1)

        await phone.page.get_by_role("link", name="Edit alarm 07:10 Swim club").tap()
        await phone.page.get_by_role("button", name="Delete alarm").tap()
        dialog = phone.page.get_by_role("dialog", name="Delete this alarm?")
        await dialog.get_by_role("button", name="Cancel").tap()
        await expect(dialog).to_be_hidden()
        assert len(phone.app.state()["alarms"]) == before + 1
        await phone.page.get_by_role("button", name="Delete alarm").tap()
        await dialog.get_by_role("button", name="Delete").tap()
        await phone.page.wait_for_url("**/alarms")
        assert edited["id"] not in {a["id"] for a in phone.app.state()["alarms"]}


async def test_a_time_that_is_no_time_is_refused(browser: Browser) -> None:
    async with open_phone(browser, "clock") as phone:
        before = phone.app.state()["alarms"]
        await phone.open("/alarms/new")
        await phone.page.evaluate("document.querySelector('input[name=time]').type = 'text'")  # past the picker
        await phone.page.get_by_label("Alarm time").fill("25:99")
        await phone.page.get_by_role("button", name="Save").tap()
        await expect(phone.page.get_by_role("alert")).to_contain_text("Enter a time")
        assert phone.app.state()["alarms"] == before


async def test_a_city_joins_and_leaves_the_world_clock(browser: Browser) -> None:
    async with open_phone(browser, "clock") as phone:
        have = {c["name"] for c in phone.app.state()["cities"]}
        city = next(c for c in ("Kathmandu", "Adelaide", "St. John's") if c not in have)
        await phone.open("/world")
        await phone.page.get_by_role("link", name="Add city").tap()
        await phone.page.get_by_role("searchbox", name="Search for a city").fill(city[:5])
        await phone.page.get_by_role("searchbox", name="Search for a city").press("Enter")
        await phone.page.get_by_role("button", name=city).tap()
        await phone.page.wait_for_url("**/world")
        added = phone.app.state()["cities"][-1]
        assert added["name"] == city
        row = phone.page.locator(f".city[data-id='{added['id']}']")
        await expect(row).to_contain_text(city)
        await phone.page.get_by_role("button", name=f"Remove {city}").tap()
        await expect(row).to_have_count(0)
        assert city not in {c["name"] for c in phone.app.state()["cities"]}


async def test_a_timer_runs_pauses_resets_and_goes(browser: Browser) -> None:
    async with open_phone(browser, "clock") as phone:
        await phone.open("/timers")
        await phone.page.get_by_label("Minutes").fill("12")
        await phone.page.get_by_label("Seconds").fill("30")
        await phone.page.get_by_label("Timer label").fill("Bread")
        await phone.page.get_by_role("button", name="Start", exact=True).tap()
        await expect(phone.page.get_by_role("button", name="Pause timer Bread")).to_be_visible()
        timer = phone.app.state()["timers"][-1]
        assert (timer["label"], timer["duration_s"], timer["remaining_s"], timer["state"]) == ("Bread", 750, 750, "running")
        assert f"timer-{timer['id']}" in {n["id"] for n in phone.app.state()["notifications"]}
        card = phone.page.locator(f".timer[data-id='{timer['id']}']")
        await card.get_by_role("button", name="Pause timer Bread").tap()
        await expect(card.get_by_role("status")).to_have_text("Paused")
        assert phone.app.state()["timers"][-1]["state"] == "paused"
        assert f"timer-{timer['id']}" not in {n["id"] for n in phone.app.state()["notifications"]}
        await card.get_by_role("button", name="Reset timer Bread").tap()
        await expect(card.get_by_role("status")).to_have_text("Ready")
        await card.get_by_role("button", name="Delete timer Bread").tap()
        await expect(card).to_have_count(0)
        assert timer["id"] not in {t["id"] for t in phone.app.state()["timers"]}
