"""Messages in real Chromium with mobile emulation, driven by taps: a reply joins its
thread, a new chat picks its recipient from the address book (or a typed number) and
starts one thread per number, unread incoming messages are notifications until read
(opened, or marked), and deleting a conversation asks first."""

from __future__ import annotations

import pytest
from _phone_rig import open_phone
from playwright.async_api import Browser, expect

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]  # Chromium


async def test_opening_an_unread_conversation_reads_it_and_a_reply_joins_it(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        note = phone.app.state()["notifications"][0]
        thread = next(t for t in phone.app.state()["threads"] if f"/threads/{t['id']}" == note["link"])
        assert thread["unread"] > 0
        await phone.open("/")
        await phone.page.locator(f".conv[data-id='{thread['id']}'] .conv-link").tap()
        await phone.page.wait_for_url(f"**{note['link']}")
        state = phone.app.state()
        assert next(t for t in state["threads"] if t["id"] == thread["id"])["unread"] == 0
        assert note["id"] not in {n["id"] for n in state["notifications"]}
        await phone.page.get_by_role("textbox", name="Text message").fill("On my way — 10 minutes")
        await phone.page.get_by_role("button", name="Send").tap()
        await expect(phone.page.locator(".bubble.out").last).to_contain_text("On my way — 10 minutes")
        sent = phone.app.state()["messages"][-1]
        assert (sent["thread_id"], sent["direction"], sent["body"]) == (thread["id"], "out", "On my way — 10 minutes")


async def test_a_new_chat_picks_a_contact_and_reuses_their_thread(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        state = phone.app.state()
        with_thread = {t["contact_id"] for t in state["threads"]}
        fresh = next(c for c in state["contacts"] if c["id"] not in with_thread)
        known = next(c for c in state["contacts"] if c["id"] in with_thread)
        await phone.open("/")
        await phone.page.get_by_role("link", name="Start chat").tap()
        for person, text in ((fresh, "Hi, it's Sam from the book club"), (known, "See you at 8")):
            await phone.page.get_by_role("searchbox", name="To").fill(person["name"])
            await phone.page.get_by_role("searchbox", name="To").press("Enter")
            await phone.page.get_by_role("link", name=f"{person['name']} {person['number']}").tap()
            await phone.page.get_by_role("textbox", name="Text message").fill(text)
            await phone.page.get_by_role("button", name="Send").tap()
            await expect(phone.page.get_by_role("heading", name=person["name"])).to_be_visible()
            await phone.open("/new")
        after = phone.app.state()
        assert len(after["threads"]) == len(state["threads"]) + 1  # one new thread: the known person's is reused
        new_thread = after["threads"][-1]
        assert (new_thread["contact_id"], new_thread["number"]) == (fresh["id"], fresh["number"])
        last_two = after["messages"][-2:]
        assert [(m["name"], m["body"]) for m in last_two] == [(fresh["name"], "Hi, it's Sam from the book club"),
                                                               (known["name"], "See you at 8")]


async def test_a_typed_number_is_a_recipient(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        await phone.open("/new")
        await phone.page.get_by_role("searchbox", name="To").fill("+44 7911 123456")
        await phone.page.get_by_role("searchbox", name="To").press("Enter")
        await phone.page.get_by_role("link", name="Send to +44 7911 123456").tap()
        await phone.page.get_by_role("textbox", name="Text message").fill("Is the bike still for sale?")
        await phone.page.get_by_role("button", name="Send").tap()
        await expect(phone.page.get_by_role("heading", name="+44 7911 123456")).to_be_visible()
        thread = phone.app.state()["threads"][-1]
        assert (thread["number"], thread["contact_id"], thread["name"]) == ("+44 7911 123456", None, None)


async def test_mark_read_clears_the_badges_and_notifications(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        unread = [t for t in phone.app.state()["threads"] if t["unread"]]
        assert len(unread) >= 2
        await phone.open("/")
        first = unread[0]
        badge = phone.page.locator(f".conv[data-id='{first['id']}'] .badge")
        await expect(badge).to_have_text(str(first["unread"]))
        await phone.page.get_by_role("button", name=f"Mark conversation with {first['name'] or first['number']} as read").tap()
        await expect(badge).to_have_count(0)
        assert [t["id"] for t in phone.app.state()["threads"] if t["unread"]] == [t["id"] for t in unread[1:]]
        await phone.page.get_by_role("button", name="Mark all as read").tap()
        await expect(phone.page.locator(".badge")).to_have_count(0)
        assert phone.app.state()["notifications"] == []


async def test_delete_conversation_asks_first_and_search_finds_messages(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        thread = phone.app.state()["threads"][0]
        await phone.open(f"/threads/{thread['id']}")
        await phone.page.get_by_role("button", name="Delete conversation").tap()
        dialog = phone.page.get_by_role("dialog", name="Delete this conversation?")
        await dialog.get_by_role("button", name="Cancel").tap()
        await expect(dialog).to_be_hidden()
        assert phone.app.state()["threads"][0]["id"] == thread["id"]
        await phone.page.get_by_role("button", name="Delete conversation").tap()
        await dialog.get_by_role("button", name="Delete").tap()
        await phone.page.wait_for_url(phone.base + "/")
        state = phone.app.state()
        assert thread["id"] not in {t["id"] for t in state["threads"]}
        assert thread["id"] not in {m["thread_id"] for m in state["messages"]}

        body = state["messages"][5]["body"]
        await phone.page.get_by_role("link", name="Search messages").tap()
        await phone.page.get_by_role("searchbox", name="Search messages").fill(body[:12])
        await phone.page.get_by_role("searchbox", name="Search messages").press("Enter")
        await expect(phone.page.locator(".convs .conv").first).to_contain_text(body[:12])


async def test_shared_text_is_kept_while_the_recipient_is_picked(browser: Browser) -> None:
    async with open_phone(browser, "messages") as phone:
        person = phone.app.state()["contacts"][7]
        await phone.open("/new?body=Cat%20asleep%20(1%20March%202026)")  # where the shell's share sheet opens
        await expect(phone.page.locator(".shared")).to_contain_text("Cat asleep (1 March 2026)")
        await phone.page.get_by_role("searchbox", name="To").fill(person["name"])
        await phone.page.get_by_role("searchbox", name="To").press("Enter")
        await phone.page.get_by_role("link", name=f"{person['name']} {person['number']}").tap()
        await expect(phone.page.get_by_role("textbox", name="Text message")).to_have_value("Cat asleep (1 March 2026)")
        await phone.page.get_by_role("button", name="Send").tap()
        await expect(phone.page.get_by_role("heading", name=person["name"])).to_be_visible()
        sent = phone.app.state()["messages"][-1]
        assert (sent["name"], sent["body"], sent["direction"]) == (person["name"], "Cat asleep (1 March 2026)", "out")
