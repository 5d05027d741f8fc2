"""Gallery in real Chromium with mobile emulation, driven by taps: the pictures are real
PNGs; a photo is favourited, its details shown, moved to an album (a new one), moved to
the trash after a confirmation and restored; deleting forever and emptying the trash ask
first; deleting an album keeps its photos."""

from __future__ import annotations

from typing import Any

import pytest
from _phone_rig import Phone, open_phone
from playwright.async_api import Browser, expect

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium


def _photo(phone: Phone, pid: int) -> dict[str, Any]:
    photo: dict[str, Any] = next(p for p in phone.app.state()["photos"] if p["id"] == pid)
    return photo


async def test_the_grid_shows_real_pictures(browser: Browser) -> None:
    async with open_phone(browser, "gallery") as phone:
        await phone.open("/")
        first = phone.page.locator(".grid img").first
        await first.scroll_into_view_if_needed()
        await expect(first).to_have_js_property("complete", True)
        assert await first.evaluate("img => img.naturalWidth") >= 200
        response = await phone.page.request.get(phone.base + "/photos/1.png")
        assert response.headers["content-type"] == "image/png" and (await response.body()).startswith(b"\x89PNG\r\n\x1a\n")


async def test_a_photo_is_favourited_moved_trashed_and_restored(browser: Browser) -> None:
    async with open_phone(browser, "gallery") as phone:
        photo = next(p for p in phone.app.state()["photos"] if not p["favourite"] and not p["trashed_at"])
        await phone.open("/albums")
        await phone.page.get_by_label("New album name").fill("Best of 2026")
        await phone.page.get_by_role("button", name="Create").tap()
        await expect(phone.page.get_by_role("heading", name="Best of 2026")).to_be_visible()
        album = phone.app.state()["albums"][-1]
        assert album["name"] == "Best of 2026"

        await phone.open(f"/photos/{photo['id']}")
        fav = phone.page.get_by_role("button", name="Favourite")
        await fav.tap()
        await expect(fav).to_have_attribute("aria-pressed", "true")
        assert _photo(phone, photo["id"])["favourite"] == 1

        await phone.page.get_by_role("button", name="Details").tap()
        details = phone.page.get_by_role("dialog", name="Details")
        await expect(details).to_contain_text(f"{photo['width']} × {photo['height']}")
        await expect(details).to_contain_text(photo["camera"])
        await details.get_by_role("button", name="Close").tap()

        await phone.page.get_by_role("button", name="Move").tap()
        sheet = phone.page.get_by_role("dialog", name="Move to album")
        await sheet.get_by_role("radio", name="Best of 2026").tap()
        await sheet.get_by_role("button", name="Move").tap()
        await expect(sheet).to_be_hidden()
        assert _photo(phone, photo["id"])["album"] == "Best of 2026"

        await phone.page.get_by_role("button", name="Delete").tap()
        dialog = phone.page.get_by_role("dialog", name="Move to trash?")
        await dialog.get_by_role("button", name="Cancel").tap()
        assert _photo(phone, photo["id"])["trashed_at"] is None
        await phone.page.get_by_role("button", name="Delete").tap()
        await dialog.get_by_role("button", name="Move to trash").tap()
        await phone.page.wait_for_url(phone.base + "/")
        assert _photo(phone, photo["id"])["trashed_at"] == "2026-03-02 09:00"
        await expect(phone.page.locator(f".cell[data-id='{photo['id']}']")).to_have_count(0)

        await phone.page.get_by_role("link", name="Trash").tap()
        item = phone.page.locator(f".trash-item[data-id='{photo['id']}']")
        await item.get_by_role("button", name="Restore").tap()
        await expect(item).to_have_count(0)
        restored = _photo(phone, photo["id"])
        assert (restored["trashed_at"], restored["album"], restored["favourite"]) == (None, "Best of 2026", 1)


async def test_deleting_forever_and_emptying_the_trash_ask_first(browser: Browser) -> None:
    async with open_phone(browser, "gallery") as phone:
        trashed = [p for p in phone.app.state()["photos"] if p["trashed_at"]]
        assert len(trashed) >= 2
        await phone.open("/trash")
        one = phone.page.locator(f".trash-item[data-id='{trashed[0]['id']}']")
        await one.get_by_role("button", name="Delete forever").tap()
        await one.get_by_role("dialog").get_by_role("button", name="Delete").tap()
        await expect(one).to_have_count(0)
        assert trashed[0]["id"] not in {p["id"] for p in phone.app.state()["photos"]}

        await phone.page.get_by_role("button", name="Empty trash").tap()
        dialog = phone.page.get_by_role("dialog", name="Empty trash?")
        await dialog.get_by_role("button", name="Cancel").tap()
        assert [p["id"] for p in phone.app.state()["photos"] if p["trashed_at"]] == [p["id"] for p in trashed[1:]]
        await phone.page.get_by_role("button", name="Empty trash").tap()
        await dialog.get_by_role("button", name="Empty trash").tap()
        await expect(phone.page.get_by_text("Trash is empty")).to_be_visible()
        photos = phone.app.state()["photos"]
        assert not [p for p in photos if p["trashed_at"]] and len(photos) > 40


async def test_deleting_an_album_keeps_its_photos(browser: Browser) -> None:
    async with open_phone(browser, "gallery") as phone:
        album = phone.app.state()["albums"][0]
        members = [p["id"] for p in phone.app.state()["photos"] if p["album_id"] == album["id"]]
        assert members
        await phone.open(f"/albums/{album['id']}")
        await phone.page.get_by_role("button", name="Delete album").tap()
        await phone.page.get_by_role("dialog", name="Delete this album?").get_by_role("button", name="Delete").tap()
        await phone.page.wait_for_url("**/albums")
        state = phone.app.state()
        assert album["id"] not in {a["id"] for a in state["albums"]}
        assert all(p["album_id"] is None for p in state["photos"] if p["id"] in members)
