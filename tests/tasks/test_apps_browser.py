"""The bundled apps in a real browser: hostile text renders as text, shared modals work.

Escaping: each case writes a string that would run script if any page pasted it unescaped (into
element content, a quoted attribute, the <title>, or a JSON <script> block) into one text
column of every row of a table, serves the app as a sandbox does (TCP for the pages), and
loads a page that shows those rows in Chromium. Nothing may run, no injected element may
appear, and the string must read back as the text it is. Apps write records through the
one escaper, `cua.tasks.apps.base.esc`; this proves that path, page by page.

Modals: the apps that share `/static/cua/modal.js` open a dialog from its opener, and
close it with its Cancel button and with Escape.
"""

from __future__ import annotations

import pytest
from _app_server import start_server, stop_server
from playwright.async_api import Browser

from cua.tasks.apps import app_names, load_app, own_server
from cua.tasks.apps.base import build_asgi, esc

#: Closes the title, a quoted attribute and a script block, then tries to run script twice.
HOSTILE = """</title></script>"'><script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">"""

#: (app, table, column, page that lists those rows). Two cases reach a JSON data block.
CASES = [
    ("todo", "todos", "title", "/lists/1"),
    ("todo", "lists", "name", "/"),
    ("mail", "messages", "subject", "/folder/inbox"),
    ("mail", "messages", "body", "/message/1"),
    ("contacts", "contacts", "first_name", "/contacts"),
    ("contacts", "companies", "name", "/companies/1"),
    ("kanban", "cards", "title", "/b/1"),
    ("forum", "posts", "title", "/posts/1"),
    ("forum", "comments", "body", "/posts/1"),
    ("notes", "notes", "title", "/"),
    ("shop", "products", "name", "/c/laptops"),
    ("calendar", "events", "title", "/event/1"),
    ("settings", "users", "name", "/users"),
    ("sheets", "cells", "raw", "/sheets/1"),
    ("travel", "flights", "airline", "/flights/1"),
    ("travel", "airports", "city", "/"),
    ("dialer", "contacts", "name", "/contacts"),
    ("dialer", "calls", "number", "/recents"),
    ("messages", "messages", "body", "/threads/1"),
    ("messages", "contacts", "name", "/new"),
    ("clock", "alarms", "label", "/alarms"),
    ("clock", "timers", "label", "/timers"),
    ("gallery", "albums", "name", "/albums"),
    ("gallery", "photos", "caption", "/trash"),
    ("phone_settings", "networks", "ssid", "/wifi"),
    ("phone_settings", "bt_devices", "name", "/bluetooth"),
    ("chat", "messages", "body", "/"),
    ("chat", "channels", "topic", "/channels"),
    ("bank", "transactions", "description", "/accounts/1"),
    ("bank", "payees", "name", "/transfer"),
    ("drive", "items", "name", "/folders/1"),
    ("drive", "people", "name", "/shared"),
    ("review", "pulls", "title", "/pulls"),
    ("review", "reviews", "body", "/r/authd/pull/202"),
    ("hr", "reports", "title", "/expenses"),
    ("hr", "lines", "merchant", "/expenses/48"),
    ("hr", "employees", "name", "/people"),
    ("health", "providers", "name", "/care"),
    ("health", "messages", "body", "/messages/1"),
    ("maps", "places", "name", "/search?cat=pharmacy"),
    ("maps", "lists", "name", "/lists"),
    ("social", "posts", "body", "/"),
    ("social", "accounts", "bio", "/u/ines_duarte/following"),
]


def test_the_cases_cover_every_app() -> None:
    assert {app for app, *_ in CASES} == {app for app in app_names() if not own_server(app)}  # products escape their own


def test_the_escaper_leaves_no_markup() -> None:
    out = esc(HOSTILE)
    assert "<" not in out and ">" not in out and '"' not in out and "'" not in out
    assert esc(3) == "3"


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("app_name", "table", "column", "page"), CASES)
async def test_hostile_text_in_a_record_renders_as_text(browser: Browser, app_name: str, table: str, column: str,
                                                        page: str) -> None:
    app = load_app(app_name)
    app.reset(0)
    changed = app.db.execute(f"UPDATE {table} SET {column} = ? || ' #' || rowid", (HOSTILE,)).rowcount
    assert changed > 0
    server, task, port = await start_server(build_asgi(app))
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        response = await tab.goto(f"http://127.0.0.1:{port}{page}", wait_until="load")
        assert response is not None and response.ok, (page, response and response.status)
        await tab.wait_for_load_state("networkidle")
        assert await tab.evaluate("window.__pwned") is None, f"{app_name} {page}: injected script ran"
        injected = await tab.evaluate("[...document.images].filter(i => i.getAttribute('src') === 'x').length")
        assert injected == 0, f"{app_name} {page}: an injected <img> became an element"
        shown = await tab.evaluate("document.title + '\\n' + document.body.innerText")
        assert HOSTILE in shown or HOSTILE[:40] in shown, f"{app_name} {page}: the record's text is not shown as text"
        assert not errors, errors
    finally:
        await context.close()
        await stop_server(server, task)


#: (app, SQL giving the id of a record whose page has a modal, page pattern, modal id).
MODALS = [
    ("mail", "SELECT id FROM messages WHERE folder = 'trash' ORDER BY id LIMIT 1", "/message/{}", "purge-modal"),
    ("contacts", "SELECT id FROM contacts ORDER BY id LIMIT 1", "/contacts/{}", "delete-modal"),
    ("calendar", "SELECT id FROM events WHERE organizer_id IS NULL ORDER BY id LIMIT 1", "/event/{}", "delete-modal"),
]


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize(("app_name", "query", "page", "modal"), MODALS)
async def test_shared_modal_opens_and_closes(browser: Browser, app_name: str, query: str, page: str, modal: str) -> None:
    app = load_app(app_name)
    app.reset(0)
    record = app.db.scalar(query)
    assert record is not None
    server, task, port = await start_server(build_asgi(app))
    context = await browser.new_context()
    try:
        tab = await context.new_page()
        await tab.goto(f"http://127.0.0.1:{port}{page.format(record)}", wait_until="load")
        dialog = tab.locator(f"#{modal}")
        assert await dialog.is_hidden()
        for close in ("cancel", "escape"):
            await tab.locator(f"[data-open='{modal}']").click()
            await dialog.wait_for(state="visible", timeout=5000)
            if close == "cancel":
                await dialog.locator(f"[data-close='{modal}']").click()
            else:
                await tab.keyboard.press("Escape")
            await dialog.wait_for(state="hidden", timeout=5000)
    finally:
        await context.close()
        await stop_server(server, task)
