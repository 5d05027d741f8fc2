"""Mail's message list on a touch screen: the row's hover menu (archive, trash, mark unread)
sits over the row's right part and shows while the row is hovered, and a touch screen keeps a
row "hovered" after a tap, so a second tap on the subject archived the message. On a device
without hover the menu is not there: the subject takes the tap, and opens the message."""

from __future__ import annotations

import pytest
from _phone_rig import open_phone
from playwright.async_api import Browser


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_tap_on_a_subject_opens_the_message_and_nothing_else(browser: Browser) -> None:
    async with open_phone(browser, "mail") as phone:
        await phone.open("/")
        # the middle of the part of each subject the phone shows (its cell clips the rest), where the
        # floating Compose button does not cover it
        hits = await phone.page.evaluate("""() => [...document.querySelectorAll('tr.msg-row a[data-field=subject]')]
            .filter((link) => link.getBoundingClientRect().bottom < innerHeight).map((link) => {
              const a = link.getBoundingClientRect(), c = link.closest('td').getBoundingClientRect();
              const left = Math.max(a.left, c.left), right = Math.min(a.right, c.right);
              const hit = document.elementFromPoint((left + right) / 2, a.top + a.height / 2);
              return link.contains(hit) || hit.contains(link) || hit.closest('[data-action=compose]') !== null;
            })""")
        assert hits and all(hits), hits  # the middle of every subject is the subject's link
        first = phone.page.locator("tr.msg-row").first
        message_id = await first.get_attribute("data-id")
        for _ in range(2):  # the second tap comes after the first left the row "hovered"
            await phone.page.locator(f'tr.msg-row[data-id="{message_id}"] a[data-field=subject]').tap()
            await phone.page.wait_for_url(f"**/message/{message_id}")
            await phone.page.go_back()
            menu = phone.page.locator(f'tr.msg-row[data-id="{message_id}"] td.row-actions button')
            assert [await b.is_visible() for b in await menu.all()] in ([], [False] * await menu.count())
        folder = phone.app.db.scalar("SELECT folder FROM messages WHERE id = ?", (int(message_id or 0),))
        assert folder == "inbox"
