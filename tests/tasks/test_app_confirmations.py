"""The bundled apps' confirmation dialogs in a real browser (issue 36, item 4).

A confirmation is a real modal: labelled, focus moves into it when it opens, Tab and Shift+Tab
stay inside it, Escape closes it and gives focus back to its opener (`/static/cua/modal.js`,
shared by mail, contacts, calendar and shop). Mail asks before sending to more people than its
threshold: nothing is sent until the user confirms, and Cancel sends nothing.
"""

from __future__ import annotations

import pytest
from _app_server import start_server, stop_server
from playwright.async_api import Browser, Page

from cua.tasks.apps import load_app
from cua.tasks.apps.base import build_asgi
from cua.tasks.apps.mail import MANY_RECIPIENTS


async def _focus_in(tab: Page, selector: str) -> bool:
    return bool(await tab.evaluate("(s) => document.querySelector(s).contains(document.activeElement)", selector))


#: (app, SQL giving a record whose page has a confirmation, page pattern, modal id).
CONFIRMATIONS = [
    ("mail", "SELECT id FROM messages WHERE folder = 'trash' ORDER BY id LIMIT 1", "/message/{}", "purge-modal"),
    ("contacts", "SELECT id FROM contacts ORDER BY id LIMIT 1", "/contacts/{}", "delete-modal"),
    ("calendar", "SELECT id FROM events WHERE organizer_id IS NULL ORDER BY id LIMIT 1", "/event/{}", "delete-modal"),
]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("app_name", "query", "page", "modal"), CONFIRMATIONS)
async def test_a_confirmation_holds_the_keyboard_while_open(browser: Browser, app_name: str, query: str, page: str,
                                                            modal: str) -> None:
    app = load_app(app_name)
    app.reset(0)
    record = app.db.scalar(query)
    assert record is not None
    server, task, port = await start_server(build_asgi(app))
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        await tab.goto(f"http://127.0.0.1:{port}{page.format(record)}", wait_until="load")
        assert await tab.locator(f"#{modal} [role=dialog]").get_attribute("aria-label") or \
            await tab.locator(f"#{modal} [role=dialog]").get_attribute("aria-labelledby")
        opener = tab.locator(f"[data-open='{modal}']")
        await opener.click()
        await tab.locator(f"#{modal}").wait_for(state="visible", timeout=5000)
        assert await _focus_in(tab, f"#{modal}"), "focus stayed outside the dialog it opened"
        n = await tab.locator(f"#{modal} button").count()
        for _ in range(n + 2):  # round the dialog and past its end: focus never leaves it
            await tab.keyboard.press("Tab")
            assert await _focus_in(tab, f"#{modal}"), "Tab left the open dialog"
        for _ in range(n + 2):
            await tab.keyboard.press("Shift+Tab")
            assert await _focus_in(tab, f"#{modal}"), "Shift+Tab left the open dialog"
        await tab.keyboard.press("Escape")
        await tab.locator(f"#{modal}").wait_for(state="hidden", timeout=5000)
        assert await tab.evaluate("(s) => document.activeElement === document.querySelector(s)", f"[data-open='{modal}']"), \
            "focus did not go back to the dialog's opener"
        assert app.db.scalar(query) == record, "closing the confirmation changed the record"
    finally:
        await context.close()
        await stop_server(server, task)


async def _compose(tab: Page, port: int, to: list[str], subject: str) -> None:
    await tab.goto(f"http://127.0.0.1:{port}/compose", wait_until="load")
    await tab.fill("input[name=to]", ", ".join(to))
    await tab.fill("input[name=subject]", subject)
    await tab.fill("textarea[name=body]", "Hello all.")
    await tab.click("button[name=action][value=send]")


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_mail_asks_before_sending_to_many_and_sends_nothing_until_confirmed(browser: Browser) -> None:
    app = load_app("mail")
    app.reset(0)
    people = [str(r["email"]) for r in app.db.all("SELECT email FROM people ORDER BY id LIMIT ?", (MANY_RECIPIENTS + 1,))]
    sent = "SELECT COUNT(*) FROM messages WHERE folder = 'sent' AND subject = ?"
    server, task, port = await start_server(build_asgi(app))
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        dialog = tab.locator("#send-many-modal")

        # A few recipients: no question asked.
        await _compose(tab, port, people[:2], "Few")
        await tab.wait_for_url("**/folder/sent")
        assert app.db.scalar(sent, ("Few",)) == 1

        # One more than the threshold: the dialog asks, and Cancel sends nothing.
        await _compose(tab, port, people, "Many")
        await dialog.wait_for(state="visible", timeout=5000)
        assert f"{MANY_RECIPIENTS + 1} people" in await dialog.inner_text()
        assert await _focus_in(tab, "#send-many-modal")
        await dialog.locator("#send-many-cancel").click()
        await dialog.wait_for(state="hidden", timeout=5000)
        assert app.db.scalar(sent, ("Many",)) == 0 and tab.url.endswith("/compose")

        # Asked again, then confirmed: sent once, to all of them.
        await tab.click("button[name=action][value=send]")
        await dialog.wait_for(state="visible", timeout=5000)
        await dialog.locator("#send-many-confirm").click()
        await tab.wait_for_url("**/folder/sent")
        rows = app.db.all("SELECT to_addrs FROM messages WHERE folder = 'sent' AND subject = 'Many'")
        assert [r["to_addrs"] for r in rows] == [", ".join(people)]

        # Saving a draft to as many never asks.
        await tab.goto(f"http://127.0.0.1:{port}/compose", wait_until="load")
        await tab.fill("input[name=to]", ", ".join(people))
        await tab.fill("input[name=subject]", "Draft to many")
        await tab.click("button[name=action][value=draft]")
        await tab.wait_for_url("**/folder/drafts")
        assert app.db.scalar("SELECT COUNT(*) FROM messages WHERE folder = 'drafts' AND subject = 'Draft to many'") == 1
    finally:
        await context.close()
        await stop_server(server, task)
