"""Phone settings in real Chromium with mobile emulation, driven by taps: Wi-Fi connects
to a secured network only with its key (a wrong password is refused, saying so) and
forgets it after a confirmation; Bluetooth pairs, disconnects and forgets; display and
sound switches, sliders and choices save the moment they change; a bad value posted past
the page is refused; an app's permissions change one by one; the device is renamed."""

from __future__ import annotations

import pytest
from _phone_rig import Phone, open_phone
from playwright.async_api import Browser, expect

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium


def _settings(phone: Phone) -> dict[str, str]:
    return {r["key"]: r["value"] for r in phone.app.state()["settings"]}


async def test_wifi_connects_with_the_right_password_only_and_forgets_after_asking(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        net = next(n for n in phone.app.state()["networks"] if n["ssid"] == "Flat 3B")
        assert not net["saved"] and net["key"]
        await phone.open("/wifi")
        await phone.page.get_by_role("link", name="Flat 3B").tap()
        await phone.page.get_by_label("Password", exact=True).fill("wrong-password-1")
        await phone.page.get_by_role("button", name="Connect").tap()
        await expect(phone.page.get_by_role("alert")).to_have_text("Incorrect password. Check it and try again.")
        assert not next(n for n in phone.app.state()["networks"] if n["id"] == net["id"])["connected"]

        await phone.page.get_by_label("Password", exact=True).fill(net["key"])
        await phone.page.get_by_role("checkbox", name="Show password").tap()
        await expect(phone.page.get_by_label("Password", exact=True)).to_have_attribute("type", "text")
        await phone.page.get_by_role("button", name="Connect").tap()
        await phone.page.wait_for_url("**/wifi")
        nets = {n["ssid"]: n for n in phone.app.state()["networks"]}
        assert [s for s, n in nets.items() if n["connected"]] == ["Flat 3B"]
        assert (nets["Flat 3B"]["saved"], nets["Flat 3B"]["saved_password"]) == (1, net["key"])
        await expect(phone.page.get_by_role("link", name="Flat 3B Connected")).to_be_visible()

        await phone.page.get_by_role("link", name="Flat 3B Connected").tap()
        await phone.page.get_by_role("button", name="Forget").tap()
        dialog = phone.page.get_by_role("dialog", name="Forget Flat 3B?")
        await dialog.get_by_role("button", name="Cancel").tap()
        assert nets["Flat 3B"] == next(n for n in phone.app.state()["networks"] if n["ssid"] == "Flat 3B")
        await phone.page.get_by_role("button", name="Forget").tap()
        await dialog.get_by_role("button", name="Forget").tap()
        await phone.page.wait_for_url("**/wifi")
        forgotten = next(n for n in phone.app.state()["networks"] if n["ssid"] == "Flat 3B")
        assert (forgotten["saved"], forgotten["saved_password"], forgotten["connected"]) == (0, "", 0)


async def test_wifi_off_drops_the_connection(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        assert any(n["connected"] for n in phone.app.state()["networks"])
        await phone.open("/wifi")
        switch = phone.page.get_by_role("switch", name="Use Wi-Fi")
        await switch.tap()
        await expect(phone.page.get_by_text("Turn on Wi-Fi to see available networks")).to_be_visible()
        assert _settings(phone)["wifi"] == "0"
        assert not any(n["connected"] for n in phone.app.state()["networks"])


async def test_bluetooth_pairs_disconnects_and_forgets(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        await phone.open("/bluetooth")
        await phone.page.get_by_role("link", name="Pair new device").tap()
        await phone.page.get_by_role("button", name="Pair JBL Flip 6").tap()
        await phone.page.wait_for_url("**/bluetooth")
        jbl = next(d for d in phone.app.state()["bt_devices"] if d["name"] == "JBL Flip 6")
        assert (jbl["paired"], jbl["connected"]) == (1, 1)
        await phone.page.get_by_role("button", name="Disconnect JBL Flip 6").tap()
        await expect(phone.page.get_by_role("button", name="Connect JBL Flip 6")).to_be_visible()
        assert next(d for d in phone.app.state()["bt_devices"] if d["name"] == "JBL Flip 6")["connected"] == 0
        await phone.page.get_by_role("button", name="Forget JBL Flip 6").tap()
        await phone.page.get_by_role("dialog", name="Forget JBL Flip 6?").get_by_role("button", name="Forget device").tap()
        await expect(phone.page.locator(f".device[data-id='{jbl['id']}']")).to_have_count(0)
        assert next(d for d in phone.app.state()["bt_devices"] if d["name"] == "JBL Flip 6")["paired"] == 0


async def test_display_and_sound_save_as_they_change(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        await phone.open("/display")
        await phone.page.get_by_role("switch", name="Dark theme").tap()
        await expect(phone.page.locator("body")).to_have_class("dark font-default")  # the app follows its own theme
        await phone.page.get_by_role("radio", name="Largest").tap()
        await expect(phone.page.locator("body")).to_have_class("dark font-largest")
        await phone.page.get_by_role("slider", name="Brightness level").fill("20")  # a slider's change event
        await expect(phone.page.get_by_role("slider", name="Brightness level")).to_have_value("20")
        s = _settings(phone)
        assert (s["dark_theme"], s["font_size"], s["brightness"]) == ("1", "largest", "20")

        await phone.open("/sound")
        await phone.page.get_by_role("switch", name="Do Not Disturb").tap()
        await expect(phone.page.get_by_role("switch", name="Do Not Disturb")).to_be_checked()
        await phone.page.get_by_label("Start").fill("23:15")
        await phone.page.get_by_label("End").fill("06:30")
        await phone.page.get_by_role("button", name="Save schedule").tap()
        await expect(phone.page.get_by_label("Start")).to_have_value("23:15")
        await phone.page.get_by_role("radio", name="Zen Garden").tap()
        await expect(phone.page.get_by_role("radio", name="Zen Garden")).to_be_checked()
        s = _settings(phone)
        assert (s["dnd"], s["dnd_start"], s["dnd_end"], s["ringtone"]) == ("1", "23:15", "06:30", "Zen Garden")


async def test_values_the_page_does_not_offer_are_refused(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        before = _settings(phone)
        await phone.open("/display")
        for key, value in (("brightness", "250"), ("font_size", "huge"), ("ringtone", "Airhorn"), ("dnd_start", "25:00"),
                           ("device_name", " "), ("nonsense", "1")):
            status = await phone.page.evaluate(
                "async ([k, v]) => (await fetch('/set', {method: 'POST', body: new URLSearchParams({[k]: v, back: '/display'})})).status",
                [key, value])
            assert status == 200  # the redirect back to the page, followed
        assert _settings(phone) == before


async def test_an_apps_permissions_change_one_by_one_and_the_phone_is_renamed(browser: Browser) -> None:
    async with open_phone(browser, "phone_settings") as phone:
        app = next(a for a in phone.app.state()["apps"] if a["name"] == "WhatsApp")
        before = {p["permission"]: p["grant_state"] for p in phone.app.state()["permissions"] if p["app_id"] == app["id"]}
        target = "deny" if before["camera"] != "deny" else "ask"
        await phone.open("/apps")
        await phone.page.get_by_role("link", name="WhatsApp").tap()
        group = phone.page.get_by_role("group", name="Camera access for WhatsApp")
        await group.get_by_role("radio", name={"deny": "Don't allow", "ask": "Ask every time"}[target]).tap()
        await expect(group.get_by_role("radio", name={"deny": "Don't allow", "ask": "Ask every time"}[target])).to_be_checked()
        after = {p["permission"]: p["grant_state"] for p in phone.app.state()["permissions"] if p["app_id"] == app["id"]}
        assert after == {**before, "camera": target}

        await phone.open("/about")
        await phone.page.get_by_label("Device name").fill("Sam's  work phone")
        await phone.page.get_by_role("button", name="Rename").tap()
        await expect(phone.page.get_by_label("Device name")).to_have_value("Sam's work phone")
        assert _settings(phone)["device_name"] == "Sam's work phone"
