"""The maps app (Waypoint): its data, its routing, its rules, and its main flows in Chromium.

Ratings sit near 4.2 with a long left tail, review counts are long-tailed, hours fit the kind
of place (24-hour hotels, bars past midnight, museums closed on Mondays). Directions are
deterministic on the street graph, and the cached travel times from home are the same numbers
the directions page computes. The rules (stars, phone numbers, hours, unknown places and
lists) are checked on the page side, where a hand-made request cannot get past them; the
flows drive the real pages in Chromium, selecting by role, label and `data-` attributes as
oracles do, and read `state()` as a judge does; a de-DE page reads German with German numbers.
"""

from __future__ import annotations

import json
import re
import statistics
from typing import Any

import pytest
from _app_server import open_tab
from _apps_common import Running, assert_refusals, check_reset_is_seeded, running_fixture, served_fixture
from playwright.async_api import Browser

from cua.tasks.apps.maps import MapsApp, parse_phone
from cua.tasks.apps.maps.city import edge_between, node_id
from cua.tasks.apps.maps.routing import Spot, route
from cua.tasks.apps.maps.seed import HOME
from cua.variant import LAYOUTS, LOCALES, Variant

running = running_fixture("maps")


def test_seeded_places_are_realistic(running: Running) -> None:
    _, _, ctl = running
    state = ctl.state()
    places = state["places"]
    assert 270 <= len(places) <= 330 and len({p["district"] for p in places}) == 8
    assert len({p["name"] for p in places}) == len(places)
    sizes = {c: sum(1 for p in places if p["category"] == c) for c in {p["category"] for p in places}}
    assert sizes["restaurant"] > 60 and sizes["cinema"] < 6 and len({p["cuisine"] for p in places if p["cuisine"]}) >= 12
    ratings = [p["rating"] for p in places]
    assert 4.0 <= statistics.median(ratings) <= 4.4 and min(ratings) < 3.3 and max(ratings) <= 5
    counts = sorted(p["review_count"] for p in places)
    assert counts[-1] > 20 * counts[len(counts) // 2]  # a long tail
    hours: dict[int, list[dict[str, Any]]] = {}
    for h in state["hours"]:
        hours.setdefault(h["place_id"], []).append(h)
    by_cat = {p["id"]: p["category"] for p in places}
    assert all(len(hours[p]) == 7 and hours[p][0]["closes"] == 1440 for p, c in by_cat.items() if c == "hotel")
    assert any(h["closes"] > 1440 for p, rows in hours.items() if by_cat[p] == "bar" for h in rows)  # past midnight
    assert all(not any(h["weekday"] >= 5 for h in hours[p]) for p, c in by_cat.items() if c == "bank")  # no weekend banking
    museums_closed_monday = [p for p, c in by_cat.items() if c == "museum" and not any(h["weekday"] == 0 for h in hours[p])]
    assert museums_closed_monday
    assert {p["status"] for p in places} == {"open", "temporarily_closed", "permanently_closed"}
    assert {lst["kind"] for lst in state["lists"]} == {"favourites", "want_to_go", "custom"}
    assert any(i["note"] for i in state["list_items"]) and any(r["mine"] for r in state["reviews"])
    assert "travel_times" not in state  # a cache no agent changes


def test_reset_is_deterministic_and_seeded(running: Running) -> None:
    check_reset_is_seeded(running[2])


def test_every_layout_and_locale_keeps_the_data(running: Running) -> None:
    app, web, ctl = running
    assert app.variant_axes.layouts == LAYOUTS and app.variant_axes.locales == LOCALES
    before = ctl.state()
    for layout in LAYOUTS:
        for locale in LOCALES:
            assert ctl.post("/__cua/reset", json={"seed": 0, "variant": {"layout": layout, "locale": locale}}).status_code == 200
            assert ctl.state() == before  # the variant is only the look
    page = web.get("/directions?from=home&to=9&mode=walk&depart=2026-03-03T18:05").text
    assert 'data-layout="dense"' in page and ">Route berechnen<" in page and "Di 18:05" in page
    assert re.search(r"\d,\d km", page) and not re.search(r"\d\.\d km", page)  # 2,4 km
    assert ctl.post("/__cua/reset", json={"seed": 0, "variant": {"locale": "fr-FR"}}).json()["field"] == "variant.locale"


def test_cached_travel_times_are_the_directions_pages_numbers(running: Running) -> None:
    _, web, ctl = running
    places = ctl.rows("SELECT id, edge, along FROM places ORDER BY id LIMIT 12")
    for p in places:
        for mode in ("drive", "transit", "walk", "bike"):
            trip = route(HOME, Spot(p["edge"], p["along"]), mode, weekday=0, minute=540)
            assert trip is not None
            cached = ctl.value("SELECT minutes FROM travel_times WHERE place_id = ? AND mode = ?", [p["id"], mode])
            assert trip.minutes == cached, (p, mode)
    far = ctl.rows("SELECT place_id, minutes FROM travel_times WHERE mode = 'transit' AND rides > 0 ORDER BY place_id LIMIT 1")[0]
    page = web.get(f"/directions?from=home&to={far['place_id']}&mode=transit").text
    assert f'data-route-minutes="{far["minutes"]}"' in page and 'data-leg="ride"' in page


def test_routing_options_and_departure_time_matter() -> None:
    west = Spot(0, 100.0)  # Northgate Road, the north-west corner
    east = Spot(edge_between(node_id(12, 8), node_id(13, 8)), 150.0)  # Quay Street, the south-east corner
    plain = route(west, east, "drive", weekday=2, minute=12 * 60)
    no_tolls = route(west, east, "drive", weekday=2, minute=12 * 60, avoid_tolls=True)
    rush = route(west, east, "drive", weekday=2, minute=8 * 60)
    assert plain and no_tolls and rush
    assert rush.duration_s > plain.duration_s  # rush hour
    assert not no_tolls.tolls
    night = route(west, east, "transit", weekday=2, minute=2 * 60)
    day = route(west, east, "transit", weekday=2, minute=12 * 60)
    assert night and day and night.duration_s > day.duration_s  # no trams at 2 AM: walk or wait
    walk = route(west, east, "walk", weekday=2, minute=0)
    bike = route(west, east, "bike", weekday=2, minute=0)
    assert walk and bike and walk.duration_s > bike.duration_s and not walk.highway


def test_rules_refuse_with_a_reason_and_change_nothing(running: Running) -> None:
    _, web, ctl = running
    before = ctl.state()
    pid = ctl.value("SELECT id FROM places WHERE status = 'open' AND id NOT IN (SELECT place_id FROM list_items) "
                    "AND id NOT IN (SELECT place_id FROM reviews WHERE mine = 1) ORDER BY id LIMIT 1")
    cases: list[tuple[str, dict[str, str], int, str]] = [
        (f"/places/{pid}/review", {"stars": "6", "body": "x"}, 400, "1 to 5 stars"),
        (f"/places/{pid}/review", {"stars": "", "body": "x"}, 400, "1 to 5 stars"),
        (f"/places/{pid}/suggest", {"field": "phone", "phone": "call me"}, 400, "10 digits"),
        (f"/places/{pid}/suggest", {"field": "phone", "phone": "12345"}, 400, "10 digits"),
        (f"/places/{pid}/suggest", {"field": "hours", "weekday": "9", "opens": "09:00", "closes": "17:00"}, 400, "Choose the day"),
        (f"/places/{pid}/suggest", {"field": "hours", "weekday": "1", "opens": "9am", "closes": "17:00"}, 400, "HH:MM"),
        (f"/places/{pid}/suggest", {"field": "name"}, 400, "hours or phone"),
        (f"/places/{pid}/share", {"channel": "email", "to": "not an address"}, 400, "email address"),
        (f"/places/{pid}/share", {"channel": "fax"}, 400, "Choose how to share"),
        (f"/places/{pid}/save", {"list": "999"}, 400, "No such list"),
        (f"/places/{pid}/save", {"new_list": "Favourites"}, 400, "exists already"),
        ("/lists", {"name": "   "}, 400, "a name"),
        ("/lists/1/delete", {}, 400, "cannot be deleted"),
        ("/lists/3/remove", {}, 400, "Select the places"),
        (f"/lists/3/note/{pid}", {"note": "x"}, 404, "not in this list"),
        ("/lists/99/remove", {"place": "1"}, 404, "No such list"),
        ("/places/99999/review", {"stars": "4"}, 404, "No such place"),
        (f"/places/{pid}/review/delete", {}, 404, "not reviewed"),
        ("/edits/999/withdraw", {}, 404, "No such edit"),
    ]
    assert_refusals(web, cases)
    for path, reason in (("/search?rating=9", "rating"), ("/search?cat=volcano", "category"), ("/search?q=x&near=abc", "home, work"),
                         ("/directions?from=home&to=Atlantis%20Diner", "No place called"), ("/directions?from=home&to=home", "same place"),
                         ("/directions?from=home&to=1&depart=tomorrow", "date and time")):
        resp = web.get(path)
        assert resp.status_code == 400 and reason in resp.text, (path, resp.status_code)
    assert ctl.state() == before  # a refusal changes nothing, the history included
    page = web.post("/places/99999/review").text
    assert "javascript:" not in page and 'href="/" data-action="back"' in page


def test_phone_and_hours_are_stored_in_one_form(running: Running) -> None:
    _, web, ctl = running
    assert parse_phone("(207) 555 0199") == parse_phone("+1-207-555-0199") == "+1 207-555-0199"
    pid = ctl.value("SELECT id FROM places WHERE category = 'bar' ORDER BY id LIMIT 1")
    assert web.post(f"/places/{pid}/suggest", data={"field": "hours", "weekday": "4", "opens": "18:00", "closes": "01:30",
                                                    "note": "  new   sign "}).status_code == 200
    assert web.post(f"/places/{pid}/suggest", data={"field": "phone", "phone": "207.555.0199"}).status_code == 200
    rows = ctl.rows("SELECT field, weekday, opens, closes, closed, phone, note, status FROM pending_edits WHERE place_id = ? ORDER BY id", [pid])
    assert rows[-2:] == [
        {"field": "hours", "weekday": 4, "opens": 1080, "closes": 1530, "closed": 0, "phone": None, "note": "new sign", "status": "pending"},
        {"field": "phone", "weekday": None, "opens": None, "closes": None, "closed": 0, "phone": "+1 207-555-0199", "note": "", "status": "pending"}]


def test_search_filters_and_history(running: Running) -> None:
    app, web, ctl = running
    page = web.get("/search?cat=pharmacy&open=1&sort=distance").text
    shown = [int(x) for x in re.findall(r'data-place-id="(\d+)" data-name="[^"]*" data-category="pharmacy"', page)]
    pharmacies = ctl.rows("SELECT id, x, y FROM places WHERE category = 'pharmacy' ORDER BY id")
    open_now = [p for p in pharmacies if app.open_at(p["id"], app.now())]
    hx, hy = HOME.xy
    assert shown == [p["id"] for p in sorted(open_now, key=lambda p: ((p["x"] - hx) ** 2 + (p["y"] - hy) ** 2, p["id"]))]
    assert 0 < len(open_now) < len(pharmacies)
    entries = json.loads(ctl.value("SELECT entries FROM history WHERE id = 1"))
    assert entries[0] == {"kind": "search", "q": "", "cat": "pharmacy"}
    web.post("/history/clear")
    assert ctl.value("SELECT entries FROM history WHERE id = 1") == "[]"


# --- in Chromium ---


served = served_fixture("maps", MapsApp)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_save_to_a_new_list_with_a_note_then_bulk_remove(browser: Browser, served: tuple[MapsApp, str]) -> None:
    app, base = served
    p = app.db.one("SELECT id, name FROM places WHERE status = 'open' AND id NOT IN (SELECT place_id FROM list_items) ORDER BY id LIMIT 1")
    assert p is not None
    tab = await open_tab(browser, f"{base}/search?q={p['name']}")
    await tab.locator(f'[data-place-id="{p["id"]}"] a.name').click()
    await tab.locator("[data-action=save]").click()
    await tab.get_by_label("New list").fill("  Tapas   crawl ")
    await tab.get_by_label("Note (for lists it is added to now)").fill("Go on a Thursday")
    await tab.locator("[data-action=confirm-save]").click()
    await tab.locator("[data-saved-in]").wait_for()
    lst = app.db.one("SELECT * FROM lists WHERE name = 'Tapas crawl'")
    assert lst is not None and lst["kind"] == "custom"
    assert app.db.all("SELECT place_id, note FROM list_items WHERE list_id = ?", (lst["id"],)) == [{"place_id": p["id"], "note": "Go on a Thursday"}]
    want = app.db.one("SELECT id FROM lists WHERE kind = 'want_to_go'")
    assert want is not None
    gone = [r["place_id"] for r in app.db.all("SELECT i.place_id FROM list_items i JOIN places p ON p.id = i.place_id "
                                              "WHERE i.list_id = ? AND p.status = 'permanently_closed'", (want["id"],))]
    assert gone
    await tab.goto(f"{base}/lists/{want['id']}")
    for pid in gone:
        await tab.locator(f'[data-select="{pid}"]').check()
    await tab.locator("[data-action=remove-selected]").click()
    await tab.locator(f'[data-list="{want["id"]}"]').wait_for()
    left = app.db.all("SELECT p.status FROM list_items i JOIN places p ON p.id = i.place_id WHERE i.list_id = ?", (want["id"],))
    assert left and all(r["status"] != "permanently_closed" for r in left)


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_write_edit_and_delete_my_review(browser: Browser, served: tuple[MapsApp, str]) -> None:
    app, base = served
    p = app.db.one("SELECT id FROM places WHERE id NOT IN (SELECT place_id FROM reviews WHERE mine = 1) ORDER BY id LIMIT 1")
    assert p is not None
    before = app.db.one("SELECT rating, review_count FROM places WHERE id = ?", (p["id"],))
    tab = await open_tab(browser, f"{base}/places/{p['id']}")
    await tab.locator("[data-action=review]").click()
    await tab.get_by_role("radio", name="4 stars").check()
    await tab.get_by_label("Your review").fill("Lovely courtyard, slow kitchen.")
    await tab.locator("[data-action=post-review]").click()
    await tab.locator("[data-mine='1'][data-stars='4']").wait_for()
    mine = app.db.one("SELECT stars, body, author FROM reviews WHERE place_id = ? AND mine = 1", (p["id"],))
    assert mine == {"stars": 4, "body": "Lovely courtyard, slow kitchen.", "author": "Maya Lindqvist"}
    assert app.db.one("SELECT rating, review_count FROM places WHERE id = ?", (p["id"],)) == before  # the daily aggregate
    await tab.locator("[data-action=edit-review]").click()
    await tab.get_by_role("radio", name="3 stars").check()
    await tab.locator("[data-action=post-review]").click()
    await tab.locator("[data-mine='1'][data-stars='3']").wait_for()
    await tab.locator("[data-action=delete-review]").click()
    await tab.get_by_role("alertdialog").wait_for()
    await tab.locator("[data-action=confirm-delete]").click()
    await tab.locator("[data-action=review]").wait_for()
    assert app.db.scalar("SELECT COUNT(*) FROM reviews WHERE place_id = ? AND mine = 1", (p["id"],)) == 0


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_directions_by_typed_names_and_modes_on_a_phone(browser: Browser, served: tuple[MapsApp, str]) -> None:
    app, base = served
    far = app.db.one("SELECT p.id, p.name, t.minutes FROM places p JOIN travel_times t ON t.place_id = p.id "
                     "WHERE t.mode = 'transit' AND t.rides > 0 ORDER BY p.id LIMIT 1")
    assert far is not None
    tab = await open_tab(browser, f"{base}/directions", width=390)
    await tab.get_by_label("To", exact=True).fill(far["name"].upper())  # a name matches whatever its case
    await tab.locator("[data-mode-pick=transit]").check()
    await tab.locator("[data-action=get-directions]").click()
    summary = tab.locator("[data-route]")
    await summary.wait_for()
    assert await summary.get_attribute("data-route-minutes") == str(far["minutes"])
    assert await tab.locator("[data-leg=ride]").count() >= 1
    assert await tab.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    await tab.get_by_role("tab", name="Bike", exact=False).click()
    await tab.locator("[data-route][data-mode=bike]").wait_for()
    entries = json.loads(app.db.scalar("SELECT entries FROM history WHERE id = 1"))
    assert entries[0] == {"kind": "directions", "from": "home", "to": str(far["id"]), "mode": "bike"}


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_german_page_reads_german_with_german_numbers(browser: Browser, served: tuple[MapsApp, str]) -> None:
    app, base = served
    app.set_variant(Variant(theme="dark", layout="dense", locale="de-DE"))
    try:
        p = app.db.one("SELECT id, rating FROM places WHERE review_count >= 1000 AND category = 'restaurant' ORDER BY id LIMIT 1")
        assert p is not None
        tab = await open_tab(browser, f"{base}/places/{p['id']}")
        assert await tab.locator("html").get_attribute("lang") == "de-DE"
        assert await tab.get_by_role("link", name="Route", exact=False).count() >= 1
        text = await tab.locator("main").inner_text()
        assert "Öffnungszeiten" in text and "Montag" in text and "Rezensionen" in text
        assert f"{p['rating']:.1f}".replace(".", ",") in text  # 4,3 not 4.3
        count = app.db.scalar("SELECT review_count FROM places WHERE id = ?", (p["id"],))
        assert f"{count:,}".replace(",", ".") in text  # 1.234 not 1,234
        assert "AM" not in text and "PM" not in text  # a 24-hour clock
        assert re.search(r"\b\d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember) 20\d\d", text)
        await tab.goto(f"{base}/search?cat=pharmacy")
        assert "Ergebnisse" in await tab.locator("[data-result-count]").inner_text()
    finally:
        app.set_variant(Variant())


@pytest.mark.slow  # Chromium
@pytest.mark.asyncio(loop_scope="module")
async def test_a_phone_gets_44_pixel_targets_and_the_map_first(browser: Browser, served: tuple[MapsApp, str]) -> None:
    _, base = served
    tab = await open_tab(browser, f"{base}/places/9", width=390)
    sizes = await tab.locator("nav.actions a, .appbar nav a").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [e.textContent.trim(), r.height]; })")
    assert sizes and all(height >= 44 for _, height in sizes), sizes
    await tab.goto(f"{base}/search?cat=cafe")
    map_top = await tab.locator(".mapbox").evaluate("e => e.getBoundingClientRect().top")
    results_top = await tab.get_by_role("list", name="Results").evaluate("e => e.getBoundingClientRect().top")
    assert map_top < results_top  # on a phone the map comes before the results
