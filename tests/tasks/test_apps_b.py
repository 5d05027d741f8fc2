"""Smoke tests for the group-B bundled apps: notes, sheets, travel, settings, forum.

Each app runs in process behind Starlette's TestClient. The TestClient's requests carry
a `client` address, which the framework treats as TCP (page side); control endpoints
are exercised by calling the ASGI app without a client address, as the unix socket does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _apps_common import Control, open_app  # tests/'s own helpers, as pytest puts tests/ on sys.path
from starlette.testclient import TestClient

from cua.tasks.apps.sheets.formula import CellError, display, evaluate_sheet, shift_formula

APPS = ["notes", "sheets", "travel", "settings", "forum"]

PAGES: dict[str, list[str]] = {
    "notes": ["/", "/folders/1", "/folders/2", "/notes/1", "/notes/1/preview", "/search?q=plan"],
    "sheets": ["/", "/sheets/1", "/sheets/2", "/sheets/3", "/api/sheets/1/cells"],
    "travel": ["/", "/flights?from=New+York+(JFK)&to=LAX&date=2026-03-05", "/flights/1", "/trips"],
    "settings": ["/general", "/notifications", "/security", "/users", "/users?page=2&role=member", "/users/2",
                 "/users/new", "/api-keys", "/audit"],
    "forum": ["/", "/?sort=top", "/t/python", "/api/posts?offset=20", "/posts/1", "/submit", "/search?q=SQLite",
              "/u/morgan_k"],
}


@pytest.fixture(scope="module", params=APPS)
def app_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def running(app_name: str) -> tuple[Any, TestClient, Control]:
    return open_app(app_name)


def test_every_page_renders(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, web, ctl = running
    ctl.post("/__cua/reset", json={"seed": 0})
    for path in PAGES[app_name]:
        resp = web.get(path)
        assert resp.status_code == 200, (path, resp.text[:300])
        assert "http://" not in resp.text.replace("http://127.0.0.1", ""), f"{path} references an external URL"
        assert "https://" not in resp.text, f"{path} references an external URL"


def test_control_endpoints_are_not_on_tcp(running: tuple[Any, TestClient, Control]) -> None:
    _, web, _ = running
    assert web.get("/__cua/state").status_code == 404


def test_reset_is_deterministic_and_seeded(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, _, ctl = running
    ctl.post("/__cua/reset", json={"seed": 3})
    first = ctl.get("/__cua/state").json()
    ctl.post("/__cua/reset", json={"seed": 4})
    other = ctl.get("/__cua/state").json()
    ctl.post("/__cua/reset", json={"seed": 3})
    again = ctl.get("/__cua/state").json()
    assert first == again
    assert first != other
    assert ctl.get("/__cua/health").json() == {"ok": True, "app": app_name, "seed": 3}


def test_volume_of_data(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    _, _, ctl = running
    ctl.post("/__cua/reset", json={"seed": 0})
    sql = {"notes": "SELECT COUNT(*) AS n FROM notes", "sheets": "SELECT COUNT(*) AS n FROM cells",
           "travel": "SELECT COUNT(*) AS n FROM flights", "settings": "SELECT COUNT(*) AS n FROM users",
           "forum": "SELECT COUNT(*) AS n FROM posts"}[app_name]
    minimum = {"notes": 120, "sheets": 300, "travel": 500, "settings": 100, "forum": 400}[app_name]
    rows = ctl.post("/__cua/sql", json={"query": sql}).json()["rows"]
    assert rows[0]["n"] >= minimum


def test_sql_is_read_only(running: tuple[Any, TestClient, Control]) -> None:
    app, _, ctl = running
    table = app.db.tables()[0]
    resp = ctl.post("/__cua/sql", json={"query": f'DELETE FROM "{table}"'})
    assert resp.status_code == 400 and "error" in resp.json()
    assert ctl.post("/__cua/sql", json={"query": "SELECT nonsense FROM nowhere"}).status_code == 400
    assert app.db.scalar(f'SELECT COUNT(*) FROM "{table}"') > 0


def test_snapshot_restore_round_trip(app_name: str, running: tuple[Any, TestClient, Control]) -> None:
    app, web, ctl = running
    ctl.post("/__cua/reset", json={"seed": 1})
    before = ctl.get("/__cua/state").json()
    image = ctl.get("/__cua/snapshot").content
    _mutate(app_name, web)
    assert ctl.get("/__cua/state").json() != before, "the mutation should change state"
    assert ctl.post("/__cua/restore", content=image).json() == {"ok": True}
    assert ctl.get("/__cua/state").json() == before


def _mutate(app_name: str, web: TestClient) -> None:
    """One real user-visible change per app, through its pages or page APIs."""
    if app_name == "notes":
        assert web.post("/notes/1", data={"title": "Renamed", "body": "<p><b>hi</b><script>x()</script></p>"}).status_code == 200
    elif app_name == "sheets":
        assert web.post("/api/sheets/1/cells", json={"ref": "H1", "raw": "=SUM(D2:D5)"}).status_code == 200
    elif app_name == "travel":
        assert web.post("/trips/" + _first_ref(web) + "/cancel").status_code == 200
    elif app_name == "settings":
        assert web.post("/api/settings", json={"key": "notify_sms", "value": True}).status_code == 200
        assert web.post("/api/settings", json={"key": "notify_email", "value": False}).status_code == 200
        web.post("/general", data={"org_name": "Changed Org"})
    elif app_name == "forum":
        assert web.post("/api/vote", json={"kind": "post", "id": 1, "value": 1}).status_code == 200


def _first_ref(web: TestClient) -> str:
    import re

    match = re.search(r"data-ref='([A-Z0-9]{6})'", web.get("/trips").text)
    assert match
    return match.group(1)


# --- app behaviour ---


def test_notes_sanitizes_and_moves() -> None:
    app, web, _ = open_app("notes")
    web.post("/notes/2", data={"title": "T", "body": "<h2 onclick='x'>Head</h2><ul><li>a</li></ul><script>bad()</script>"})
    note = next(n for n in app.state()["notes"] if n["id"] == 2)
    assert note["body"] == "<h2>Head</h2><ul><li>a</li></ul>"
    assert note["text"] == "Head\na"
    archive = next(f["id"] for f in app.state()["folders"] if f["name"] == "Archive")
    web.post("/notes/2/move", data={"folder_id": str(archive)})
    assert next(n for n in app.state()["notes"] if n["id"] == 2)["folder"] == "Archive"
    web.post(f"/folders/{archive}/rename", data={"name": "Old stuff"})
    assert next(n for n in app.state()["notes"] if n["id"] == 2)["folder"] == "Old stuff"


def test_sheets_formulas() -> None:
    raws = {(1, 1): "5", (2, 1): "7", (3, 1): "=SUM(A1:A2)*2", (4, 1): "=A3/0", (5, 1): "=A5",
            (6, 1): "=AVERAGE(A1:A2)+MAX(A1,A2,100)-2^3", (7, 1): '=IF(A1>3,"big","small")', (8, 1): "=FOO(1)",
            (9, 1): "=1+", (10, 1): "=ROUND(2.345,2)", (11, 1): "=MIN(A1:A2)-COUNT(A1:A3)", (12, 1): "=__import__('os')"}
    values = evaluate_sheet(raws)
    assert [display(values[(r, 1)]) for r in range(1, 13)] == [
        "5", "7", "24", "#DIV/0!", "#CYCLE!", "98", "big", "#NAME?", "#ERROR!", "2.35", "2", "#ERROR!"]
    assert isinstance(values[(4, 1)], CellError)
    assert shift_formula("=D2*E2+$A$1+SUM(B2:B9)", 3) == "=D5*E5+$A$1+SUM(B5:B12)"


def test_sheets_edit_recalculates_and_sort_keeps_formulas_with_their_rows() -> None:
    app, web, _ = open_app("sheets")
    cells = web.post("/api/sheets/1/cells", json={"ref": "D2", "raw": "1000"}).json()["cells"]
    assert cells["F2"]["value"] == 1000 * cells["E2"]["value"]
    assert web.post("/api/sheets/1/cells", json={"ref": "ZZ99", "raw": "1"}).status_code == 400
    web.post("/sheets/1/sort", data={"range": "A2:F41", "column": "D", "order": "desc"})
    sheet = app.state()["sheets"][0]["cells"]
    units = [sheet[f"D{r}"]["value"] for r in range(2, 42)]
    assert units == sorted(units, reverse=True) and units[0] == 1000
    for r in range(2, 42):
        assert sheet[f"F{r}"]["raw"] == f"=D{r}*E{r}"
        assert sheet[f"F{r}"]["value"] == sheet[f"D{r}"]["value"] * sheet[f"E{r}"]["value"]


def test_travel_booking_validates_and_records() -> None:
    app, web, _ = open_app("travel")
    flight = app.db.one("SELECT * FROM flights WHERE origin = 'BOS' AND dest = 'SFO' ORDER BY id LIMIT 1")
    taken = sorted(app.taken_seats(flight["id"]))[0]
    form = {"flight_id": str(flight["id"]), "seat": taken, "first_name": "Ana", "last_name": "Lee",
            "email": "ana@example.org", "bags": "1", "card": "5454"}
    resp = web.post("/bookings", data=form)
    assert "already taken" in resp.text
    free = next(f"{r}{c}" for r in range(5, 25) for c in "ABCDEF" if f"{r}{c}" not in app.taken_seats(flight["id"]))
    resp = web.post("/bookings", data={**form, "seat": free})
    assert resp.status_code == 200 and "Booking confirmed" in resp.text
    booking = app.state()["bookings"][-1]
    assert (booking["seat"], booking["card_last4"], booking["total"]) == (free, "5454", flight["price"] + 35)
    assert free in app.taken_seats(flight["id"])


def test_settings_guards_dangerous_changes() -> None:
    app, web, _ = open_app("settings")
    user = app.db.one("SELECT * FROM users WHERE role = 'member' ORDER BY id LIMIT 1")
    web.post(f"/users/{user['id']}/delete", data={"confirm": "someone.else@northwind.io"})
    assert app.db.one("SELECT id FROM users WHERE id = ?", (user["id"],)) is not None
    web.post(f"/users/{user['id']}/delete", data={"confirm": user["email"]})
    assert app.db.one("SELECT id FROM users WHERE id = ?", (user["id"],)) is None
    owner = app.db.one("SELECT * FROM users WHERE role = 'owner'")
    web.post(f"/users/{owner['id']}/delete", data={"confirm": owner["email"]})
    assert app.db.one("SELECT id FROM users WHERE id = ?", (owner["id"],)) is not None
    assert web.post("/api/settings", json={"key": "org_name", "value": True}).status_code == 400
    key = app.state()["api_keys"][0]
    web.post(f"/api-keys/{key['id']}/reset")
    assert app.state()["api_keys"][0]["secret"] != key["secret"]


def test_forum_votes_toggle_and_paging() -> None:
    app, web, _ = open_app("forum")
    base = app.db.scalar("SELECT score FROM posts WHERE id = 5")
    assert web.post("/api/vote", json={"kind": "post", "id": 5, "value": 1}).json() == {"score": base + 1, "my_vote": 1}
    assert web.post("/api/vote", json={"kind": "post", "id": 5, "value": -1}).json() == {"score": base - 1, "my_vote": -1}
    assert web.post("/api/vote", json={"kind": "post", "id": 5, "value": -1}).json() == {"score": base, "my_vote": 0}
    seen: list[str] = []
    offset, more = 0, True
    while more:
        page = web.get(f"/api/posts?offset={offset}").json()
        seen += [m for m in json.dumps(page["html"]).split('data-id=\\"')[1:]]
        offset, more = offset + page["count"], page["more"]
    assert offset == app.db.scalar("SELECT COUNT(*) FROM posts")
