"""Smoke and behaviour tests for the group-A bundled apps: mail, shop, calendar, kanban, contacts.

Each app runs in process behind Starlette's TestClient. Its requests carry a `client`
address, which the framework treats as TCP (the page's side); the control endpoints are
called without a client address, as the unix socket does.
"""

from __future__ import annotations

import gc
import re
import warnings
from typing import Any

import pytest
from _apps_common import Control, open_app  # tests/'s own helpers, as pytest puts tests/ on sys.path
from starlette.testclient import TestClient

from cua.tasks.apps.calendar import occurrences

APPS = ["mail", "shop", "calendar", "kanban", "contacts"]

PAGES: dict[str, list[str]] = {
    "mail": ["/folder/inbox", "/folder/inbox?page=2", "/folder/starred", "/folder/sent", "/folder/drafts", "/folder/archive",
             "/folder/trash", "/label/1", "/search?q=invoice", "/search?q=is:unread+has:attachment", "/search?q=from:gmail",
             "/message/1", "/compose", "/compose?reply=1&all=1", "/compose?forward=2", "/contacts"],
    "shop": ["/", "/c/laptops", "/c/books?sort=price_desc&brand=Lantern&in_stock=1", "/c/toys?min=10&max=50&page=2",
             "/search?q=pro", "/p/1", "/cart", "/orders", "/orders/1"],
    "calendar": ["/month/2026-03", "/month/2026-04", "/week/2026-03-02", "/day/2026-03-02", "/invites", "/event/1",
                 "/event/new?date=2026-03-10", "/event/1/edit"],
    "kanban": ["/", "/b/1", "/b/2", "/b/3", "/b/1?card=1", "/b/1?q=bug"],
    "contacts": ["/contacts", "/contacts?sort=company&dir=desc&page=3", "/contacts?q=abbott&per=50", "/contacts?tag=vip&status=customer",
                 "/contacts/1", "/contacts/1/edit", "/contacts/new", "/companies", "/companies/1", "/deals", "/deals?stage=won"],
}
MIN_ROWS = {"mail": ("messages", 300), "shop": ("products", 400), "calendar": ("events", 200), "kanban": ("cards", 150),
            "contacts": ("contacts", 500)}


@pytest.fixture(scope="module", params=APPS)
def app_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def running(app_name: str) -> tuple[Any, TestClient, Control]:
    return open_app(app_name)


def test_every_page_renders_without_network(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, web, ctl = running
    ctl.reset(0)
    for path in PAGES[app_name]:
        resp = web.get(path)
        assert resp.status_code == 200, (path, resp.text[:300])
        assert "<main>" in resp.text
        assert not re.search(r"(src|href)=[\"']https?://", resp.text), f"{path} references an external URL"
    for asset in ("/static/app/app.css", "/static/cua/base.css"):
        assert web.get(asset).status_code == 200


def test_seeded_volume(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, _, ctl = running
    ctl.reset(0)
    key, n = MIN_ROWS[app_name]
    assert len(ctl.state()[key]) >= n


def test_reset_is_deterministic_and_seed_dependent(running: tuple[Any, TestClient, Control]) -> None:
    app, web, ctl = running
    ctl.reset(3)
    first = ctl.state()
    ctl.reset(4)
    other = ctl.state()
    ctl.reset(3)
    assert ctl.state() == first
    assert other != first
    fresh = type(app)()
    fresh.reset(3)
    assert fresh.state() == first, "a new process must seed identically"


def test_snapshot_restore_round_trip(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, _, ctl = running
    ctl.reset(1)
    before = ctl.state()
    image = ctl.client.get("/__cua/snapshot").content
    table = MIN_ROWS[app_name][0]
    ctl.reset(2)
    assert ctl.state() != before
    assert ctl.client.post("/__cua/restore", content=image).status_code == 200
    assert ctl.state() == before
    assert len(ctl.sql(f"SELECT * FROM {table} LIMIT 5").json()["rows"]) == 5


def test_sql_is_read_only(running: tuple[Any, TestClient, Control]) -> None:
    _, _, ctl = running
    ctl.reset(0)
    tables = [r["name"] for r in ctl.sql("SELECT name FROM sqlite_master WHERE type='table'").json()["rows"]]
    assert tables
    for query in (f"DELETE FROM {tables[0]}", f"DROP TABLE {tables[0]}", f"UPDATE {tables[0]} SET id = id"):
        resp = ctl.sql(query)
        assert resp.status_code == 400 and "error" in resp.json()
    assert ctl.sql("SELEC nonsense").status_code == 400


def test_control_endpoints_are_refused_on_tcp(running: tuple[Any, TestClient, Control]) -> None:
    _, web, _ = running
    assert web.get("/__cua/state").status_code == 404
    assert web.post("/__cua/reset", json={"seed": 1}).status_code == 404


# --- behaviour, per app ---


@pytest.fixture()
def mail() -> tuple[TestClient, Control]:
    _, web, ctl = open_app("mail")
    return web, ctl


def test_mail_send_with_attachment_reply_and_row_actions(mail: tuple[TestClient, Control]) -> None:
    web, ctl = mail
    inbox = [m for m in ctl.state()["messages"] if m["folder"] == "inbox"]
    target = inbox[0]
    stored = len(ctl.state()["messages"])
    resp = web.post("/compose", data={"to": "not-an-address", "subject": "x", "body": "y", "action": "send"})
    assert "Invalid address" in resp.text
    assert len(ctl.state()["messages"]) == stored, "a rejected message must not be stored"
    resp = web.post("/compose", data={"to": target["from_email"], "subject": "Re: " + target["subject"], "body": "Thanks!",
                                      "in_reply_to": str(target["id"]), "action": "send"},
                    files=[("files", ("notes.txt", b"hello world", "text/plain"))])
    assert resp.status_code == 200
    sent = ctl.state()["messages"][-1]
    assert sent["folder"] == "sent" and sent["to"] == [target["from_email"]] and sent["in_reply_to"] == target["id"]
    assert sent["thread_id"] == target["thread_id"]
    assert sent["attachments"] == [{"id": sent["attachments"][0]["id"], "filename": "notes.txt", "content_type": "text/plain", "size": 11}]
    web.post(f"/message/{target['id']}/archive", data={"back": "/folder/inbox"})
    web.post(f"/message/{inbox[1]['id']}/star", data={"back": "/folder/inbox"})
    by_id = {m["id"]: m for m in ctl.state()["messages"]}
    assert by_id[target["id"]]["folder"] == "archive"
    assert by_id[inbox[1]["id"]]["starred"] is not inbox[1]["starred"]
    page = web.get("/folder/inbox").text
    assert f'data-id="{target["id"]}"' not in page and 'class="row-actions"' in page


def test_mail_purge_confirm_is_named_for_oracles(mail: tuple[TestClient, Control]) -> None:
    """The delete-forever modal's confirm button carries its own data-action, so an oracle
    selects it in every variant without its English text or its position in the form."""
    web, ctl = mail
    trashed = next(m for m in ctl.state()["messages"] if m["folder"] == "trash")
    page = web.get(f"/message/{trashed['id']}").text
    modal = page[page.index('id="purge-modal"'):]
    assert re.search(r'<form method="post" action="/message/\d+/purge"[^>]*><button type="submit"[^>]*'
                     r'data-action="confirm-purge"', modal)
    web.post(f"/message/{trashed['id']}/purge")
    assert trashed["id"] not in {m["id"] for m in ctl.state()["messages"]}


def test_mail_closes_the_temporary_files_of_an_upload(mail: tuple[TestClient, Control]) -> None:
    """An attachment's upload is read, then its temporary file closed by the app, not left to
    the collector (a ResourceWarning per upload, and a file on disk past 1 MB)."""
    web, ctl = mail
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        resp = web.post("/compose", data={"to": "ada@example.com", "subject": "s", "body": "b", "action": "draft"},
                        files=[("files", ("a.txt", b"a" * 100, "text/plain")), ("files", ("b.txt", b"b", "text/plain"))])
        gc.collect()
    assert resp.status_code == 200 and ctl.state()["messages"][-1]["folder"] == "drafts"
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_mail_forward_keeps_attachments_and_drafts_round_trip(mail: tuple[TestClient, Control]) -> None:
    web, ctl = mail
    src = next(m for m in ctl.state()["messages"] if m["attachments"])
    form = web.get(f"/compose?forward={src['id']}").text
    keep = re.findall(r'name="keep_attachment" value="(\d+)"', form)
    assert keep
    web.post("/compose", data={"to": "ava.adams@example.com", "subject": "Fwd", "body": "fyi", "forward_of": str(src["id"]),
                               "keep_attachment": keep, "action": "draft"})
    draft = ctl.state()["messages"][-1]
    assert draft["folder"] == "drafts" and [a["filename"] for a in draft["attachments"]] == [a["filename"] for a in src["attachments"]]
    draft_form = web.get(f"/compose?draft={draft['id']}").text
    keep_draft = re.findall(r'name="keep_attachment" value="(\d+)"', draft_form)
    assert sorted(keep_draft) == sorted(str(a["id"]) for a in draft["attachments"])
    web.post("/compose", data={"to": "ava.adams@example.com", "subject": "Fwd", "body": "fyi", "draft_id": str(draft["id"]),
                               "keep_attachment": keep_draft, "action": "send"})
    sent = next(m for m in ctl.state()["messages"] if m["id"] == draft["id"])
    assert sent["folder"] == "sent" and len(sent["attachments"]) == len(src["attachments"])


def test_shop_checkout_needs_an_explicit_card(tmp_path: Any) -> None:
    _, web, ctl = open_app("shop")
    leftover = ctl.state()["cart"]
    assert len(leftover) == 1, "the seeded cart holds one item left over from an earlier visit"
    product = next(p for p in ctl.state()["products"] if p["stock"] > 3 and p["id"] != leftover[0]["product_id"])
    web.post(f"/cart/remove/{leftover[0]['product_id']}")
    web.post("/cart/add", data={"product_id": str(product["id"]), "qty": "2"})
    assert [(c["product_id"], c["qty"]) for c in ctl.state()["cart"]] == [(product["id"], 2)]
    resp = web.post("/checkout", data={"address": "1", "shipping": "standard"})
    assert "Choose a payment method" in resp.text and ctl.state()["orders"][-1]["status"] != "placed"
    resp = web.post("/checkout", data={"address": "1", "shipping": "express", "card": "new", "card_number": "4242 4242 4242 4241",
                                       "card_exp": "01/30", "card_cvc": "123", "card_holder": "A"})
    assert "card number is not valid" in resp.text
    resp = web.post("/checkout", data={"address": "1", "shipping": "express", "card": "2"})
    assert "Thank you! Your order is placed." in resp.text
    state = ctl.state()
    order = state["orders"][-1]
    assert order["card_last4"] == "5454" and order["items"] == [
        {"product_id": product["id"], "name": product["name"], "qty": 2, "price_cents": product["price_cents"]}]
    assert order["total_cents"] == 2 * product["price_cents"] + 1499
    assert state["cart"] == []
    assert next(p for p in state["products"] if p["id"] == product["id"])["stock"] == product["stock"] - 2


def test_shop_listing_filters_and_sort() -> None:
    _, web, ctl = open_app("shop")
    html = web.get("/c/laptops?sort=price_asc&brand=Zentek").text
    names = re.findall(r'class="product card" data-id="\d+" data-name="([^"]+)"', html)
    laptops = sorted((p for p in ctl.state()["products"] if p["category"] == "Laptops" and p["brand"] == "Zentek"),
                     key=lambda p: (p["price_cents"], p["id"]))
    assert names == [p["name"] for p in laptops][: len(names)] and names
    assert 'role="listbox"' in html and 'aria-selected="true">Zentek' in html


def test_calendar_recurring_event_and_validation() -> None:
    app, web, ctl = open_app("calendar")
    bad = web.post("/event/new", data={"title": "Gym", "date": "2026-03-10", "start": "10:00", "end": "09:00", "calendar": "Personal",
                                       "recur": "none"})
    assert "end time must be after" in bad.text
    bad = web.post("/event/new", data={"title": "Gym", "date": "2026-03-10", "start": "25:00", "end": "26:00", "calendar": "Personal"})
    assert "must be HH:MM" in bad.text
    web.post("/event/new", data={"title": "Gym", "date": "2026-03-10", "start": "930", "end": "10:15", "calendar": "Personal"})
    assert (ctl.state()["events"][-1]["start"], ctl.state()["events"][-1]["title"]) == ("09:30", "Gym")
    resp = web.post("/event/new", data={"title": "Spanish class", "date": "2026-03-03", "start": "18:00", "end": "19:30",
                                        "calendar": "Personal", "recur": "weekly", "recur_until": "2026-03-31", "guests": ["1", "2"]})
    assert resp.status_code == 200 and "Spanish class" in resp.text
    event = ctl.state()["events"][-1]
    assert event["occurrences"] == ["2026-03-03", "2026-03-10", "2026-03-17", "2026-03-24", "2026-03-31"]
    assert [a["status"] for a in event["attendees"]] == ["pending", "pending"]
    week = web.get("/week/2026-03-16").text
    assert f'data-id="{event["id"]}" data-date="2026-03-17"' in week
    assert f'data-id="{event["id"]}"' not in web.get("/week/2026-04-06").text
    invite = next(e for e in ctl.state()["events"] if e["organizer"] != "me" and e["my_status"] == "pending")
    web.post(f"/event/{invite['id']}/rsvp", data={"status": "declined"})
    assert next(e for e in ctl.state()["events"] if e["id"] == invite["id"])["my_status"] == "declined"


def test_calendar_occurrence_expansion() -> None:
    daily = {"date": "2026-03-01", "recur": "daily", "recur_until": "2026-03-05"}
    assert [d.isoformat() for d in occurrences(daily, *map(__import__("datetime").date.fromisoformat, ("2026-03-03", "2026-03-31")))] == [
        "2026-03-03", "2026-03-04", "2026-03-05"]


def test_kanban_moves_keep_positions_dense() -> None:
    _, web, ctl = open_app("kanban")
    board = ctl.state()["boards"][0]
    src, dst = board["columns"][0], board["columns"][3]
    card = src["cards"][2]
    resp = web.post(f"/api/cards/{card}/move", json={"column_id": dst["id"], "after_id": dst["cards"][0]})
    assert resp.status_code == 200 and resp.json()["card"]["position"] == 1
    after = ctl.state()
    cols = {c["id"]: c["cards"] for c in after["boards"][0]["columns"]}
    assert cols[dst["id"]] == [dst["cards"][0], card, *dst["cards"][1:]]
    assert cols[src["id"]] == [c for c in src["cards"] if c != card]
    for c in after["cards"]:
        assert cols.get(c["column_id"], [None] * 999)[c["position"]] == c["id"] or c["board_id"] != 1
    # within a column, downwards, after a later card
    col = cols[src["id"]]
    web.post(f"/api/cards/{col[0]}/move", json={"column_id": src["id"], "after_id": col[3]})
    assert {c["id"]: c["cards"] for c in ctl.state()["boards"][0]["columns"]}[src["id"]][:4] == [col[1], col[2], col[3], col[0]]
    assert web.post(f"/api/cards/{card}/move", json={"column_id": 999, "position": 0}).status_code == 404
    assert web.post(f"/api/cards/{card}/move", json={"nope": 1}).status_code == 400
    other_board_col = ctl.state()["boards"][1]["columns"][0]["id"]
    assert web.post(f"/api/cards/{card}/move", json={"column_id": other_board_col, "position": 0}).status_code == 404


def test_contacts_bulk_edit_and_validation() -> None:
    _, web, ctl = open_app("contacts")
    before = {c["id"]: c for c in ctl.state()["contacts"]}
    resp = web.post("/contacts/bulk", data={"ids": ["3", "7", "9"], "op": "owner", "owner_id": "4", "back": "/contacts?page=1"})
    assert "Owner set to Lena Weber for 3 contact(s)." in resp.text
    resp = web.post("/contacts/bulk", data={"ids": ["3", "7"], "op": "add_tag", "tag": "vip", "back": "/contacts"})
    after = {c["id"]: c for c in ctl.state()["contacts"]}
    assert all(after[i]["owner"] == "Lena Weber" for i in (3, 7, 9)) and "vip" in after[7]["tags"]
    changed = {i for i in after if after[i] != before[i]}
    assert changed <= {3, 7, 9}
    bad = web.post("/contacts/5/edit", data={"first_name": "A", "last_name": "B", "email": "a@b", "phone": "12ab", "owner_id": "1",
                                             "status": "lead"})
    assert 'aria-invalid="true"' in bad.text and "valid email" in bad.text and "valid phone" in bad.text
    assert {c["id"]: c for c in ctl.state()["contacts"]}[5] == after[5]
    ok = web.post("/contacts/5/edit", data={"first_name": "Ann", "last_name": "Bee", "email": "ann@bee.io", "phone": "+44 20 7946 0958",
                                            "owner_id": "2", "status": "customer", "tags": ["partner"]})
    assert "Contact saved." in ok.text
    c5 = {c["id"]: c for c in ctl.state()["contacts"]}[5]
    assert (c5["name"], c5["email"], c5["owner"], c5["tags"]) == ("Ann Bee", "ann@bee.io", "Priya Patel", ["partner"])
    sorted_page = web.get("/contacts?sort=name&dir=asc").text
    names = re.findall(r'<a href="/contacts/\d+">([^<]+)</a>', sorted_page)
    assert len(names) == 25
