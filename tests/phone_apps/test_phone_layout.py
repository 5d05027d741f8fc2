"""Every screen of every phone app, in real Chromium with mobile emulation and touch, on a
360 px phone, the same phone in landscape and an 800 px tablet: no sideways scrolling, no control smaller than a
fingertip (44 x 44 CSS px), and a name in the accessibility tree for every control."""

from __future__ import annotations

import pytest
from _phone_rig import LANDSCAPE, PHONE, TABLET, control_names_missing, horizontal_overflow, open_phone, small_targets
from playwright.async_api import Browser

#: app -> the screens a person reaches in it (a call screen needs a call: `POST` first, see below).
PAGES: dict[str, list[str]] = {
    "dialer": ["/keypad", "/keypad?number=7700", "/favourites", "/recents", "/recents?filter=missed", "/contacts",
               "/contacts?q=an"],
    "messages": ["/", "/threads/1", "/threads/44", "/new", "/new?q=ma", "/new?q=0770", "/new?to=%2B44%207700%20900123",
                 "/new?body=A%20long%20shared%20text%20that%20must%20wrap%3A%20https%3A%2F%2Fexample.org%2Fa%2Fvery%2Flong%2Fpath%2Fwithout%2Fspaces",
                 "/search", "/search?q=dinner"],
    "clock": ["/alarms", "/alarms/new", "/alarms/1", "/world", "/world/add", "/world/add?q=new", "/timers"],
    "gallery": ["/", "/favourites", "/albums", "/albums/1", "/trash", "/photos/1", "/photos/40"],
    "phone_settings": ["/", "/wifi", "/wifi/1", "/wifi/5", "/wifi/3", "/bluetooth", "/bluetooth/pair", "/display", "/sound",
                       "/language", "/apps", "/apps/5", "/about"],
}
CASES = [(app, page) for app, pages in PAGES.items() for page in pages]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("device", ["phone", "landscape", "tablet"])
@pytest.mark.parametrize(("app_name", "page"), CASES)
async def test_screen_fits_and_names_its_controls(browser: Browser, app_name: str, page: str, device: str) -> None:
    async with open_phone(browser, app_name, {"phone": PHONE, "landscape": LANDSCAPE, "tablet": TABLET}[device]) as phone:
        await phone.open(page)
        assert await horizontal_overflow(phone.page) == 0, f"{app_name}{page} scrolls sideways on a {device}"
        assert await small_targets(phone.page) == [], f"{app_name}{page}: controls under 44 px on a {device}"
        assert await control_names_missing(phone.page) == [], f"{app_name}{page}: unnamed controls"


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("page", PAGES["phone_settings"])
async def test_settings_fit_at_the_largest_font_in_the_dark_theme(browser: Browser, page: str) -> None:
    """The settings app follows the font size and theme it sets: at its largest it still fits a 360 px phone."""
    async with open_phone(browser, "phone_settings", PHONE) as phone:
        phone.app.db.execute("UPDATE settings SET value = 'largest' WHERE key = 'font_size'")
        phone.app.db.execute("UPDATE settings SET value = '1' WHERE key = 'dark_theme'")
        await phone.open(page)
        assert await phone.page.locator("body").get_attribute("class") == "dark font-largest"
        assert await horizontal_overflow(phone.page) == 0, f"phone_settings{page} scrolls sideways at the largest font"
        assert await small_targets(phone.page) == [], f"phone_settings{page}: controls under 44 px at the largest font"
