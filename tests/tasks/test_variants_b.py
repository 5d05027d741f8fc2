"""Layouts and locales of calendar, contacts, notes and kanban (issue 32): German UI with the
locale's dates and money while the data and every value a form posts stay the same, a second
layout that moves a landmark of the page in real Chromium, and the first frames of one task
differing between two variants."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from _apps_common import open_app

from cua.episode.local import LocalSandbox, open_local
from cua.observation import Size
from cua.tasks.registry import get_template
from cua.variant import DEFAULT, LAYOUTS, LOCALES, Variant

APPS = ("calendar", "contacts", "notes", "kanban")
GERMAN = {"seed": 0, "variant": {"locale": "de-DE"}}
DE_DAY = r"\d{2}\.\d{2}\.20\d\d"  # 03.03.2026
DE_MONTHS = r"(Jan\.|Feb\.|März|Apr\.|Mai|Juni|Juli|Aug\.|Sept\.|Okt\.|Nov\.|Dez\.)"


@pytest.mark.parametrize("name", APPS)
def test_the_app_takes_every_layout_and_both_locales_and_keeps_its_data(name: str) -> None:
    app, _, control = open_app(name)
    assert app.variant_axes.layouts == LAYOUTS and app.variant_axes.locales == LOCALES
    before = control.state()
    for layout in LAYOUTS:
        for locale in LOCALES:
            reset = control.post("/__cua/reset", json={"seed": 0, "variant": {"layout": layout, "locale": locale}})
            assert reset.status_code == 200, reset.text
            assert control.state() == before  # the variant is only the look
    assert control.post("/__cua/reset", json={"seed": 0, "variant": {"locale": "fr-FR"}}).json()["field"] == "variant.locale"


def test_calendar_in_german_names_days_and_months_and_keeps_values() -> None:
    _, page, control = open_app("calendar")
    assert control.post("/__cua/reset", json=GERMAN).status_code == 200
    month = page.get("/month/2026-03").text
    assert "<h1>März 2026</h1>" in month and ">Heute<" in month and "<div class='wd'>Mo</div>" in month
    assert ">Monat<" in month and "Neuer Termin am 03.03.2026" in month and ">Today<" not in month
    assert "<h1>Dienstag, 3. März 2026</h1>" in page.get("/day/2026-03-03").text
    assert "Woche vom 2. März 2026" in page.get("/week/2026-03-04").text
    form = page.get("/event/new").text
    assert '<option value="Work">Arbeit</option>' in form and '<option value="weekly">Wöchentlich</option>' in form
    invites = page.get("/invites").text
    assert re.search(DE_DAY, invites) and ">Zusagen<" in invites and 'value="accepted"' in invites
    assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    english = page.get("/month/2026-03").text
    assert "<h1>March 2026</h1>" in english and "New event on 2026-03-03" in english
    assert "<h1>Tuesday, March 3, 2026</h1>" in page.get("/day/2026-03-03").text


def test_contacts_in_german_writes_money_and_dates_as_germans_do() -> None:
    app, page, control = open_app("contacts")
    big = app.db.scalar("SELECT MAX(amount_cents) FROM deals")
    assert big >= 100_000  # a deal worth a thousands separator
    whole = big // 100
    assert control.post("/__cua/reset", json=GERMAN).status_code == 200
    deals = page.get("/deals").text
    assert f"{whole // 1000}.{whole % 1000:03d}\u00a0$" in deals and ">Phase<" in deals
    assert '<option value="won">Gewonnen</option>' in deals or '<option value="won" selected>Gewonnen</option>' in deals
    listing = page.get("/contacts").text
    assert re.search(f">{DE_DAY}</td>", listing) and ">Anwenden<" in listing and 'data-template="{n} ausgewählt"' in listing
    assert '<option value="customer">Kunde</option>' in listing  # the filter still posts the status's value
    form = page.get("/contacts/new").text
    assert 'name="status" value="lead"' in form and "Vorname" in form
    invalid = page.post("/contacts/new", data={"first_name": "", "last_name": "X", "email": "nope", "owner_id": "1",
                                               "status": "lead"}, follow_redirects=False)
    assert "Der Vorname fehlt." in invalid.text and "gültige E-Mail-Adresse" in invalid.text
    assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    assert f"${whole // 1000},{whole % 1000:03d}" in page.get("/deals").text


def test_notes_and_kanban_in_german_show_german_dates() -> None:
    _, notes, notes_control = open_app("notes")
    _, kanban, kanban_control = open_app("kanban")
    for control in (notes_control, kanban_control):
        assert control.post("/__cua/reset", json=GERMAN).status_code == 200
    index = notes.get("/").text
    assert "<h1>Alle Notizen" in index and re.search(f'<span class="date">{DE_DAY}</span>', index)
    note = notes.get("/notes/1").text
    assert "Zuletzt bearbeitet am" in note and "data-action='pin'>Anheften<" in note
    assert re.search(f"Aktualisiert am {DE_DAY}", notes.get("/notes/1/preview").text)
    board = kanban.get("/b/1").text
    assert re.search(f">Fällig \\d{{2}}\\. {DE_MONTHS}<", board) and "+ Karte hinzufügen" in board
    assert 'data-moved="„{title}“ nach {column} verschoben, Position {position}."' in board  # the script's status line
    for control in (notes_control, kanban_control):
        assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    assert re.search(r">Due (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}<", kanban.get("/b/1").text)
    assert re.search(r'<span class="date">20\d\d-\d\d-\d\d</span>', notes.get("/").text)


# --- in real Chromium ---

#: per app: a task whose first page shows the landmark, the page to open, and the script that
#: measures the landmark: `stacked` true when the top layout's arrangement holds
CASES: dict[str, tuple[str, str, str]] = {
    "calendar": ("calendar.open_day@1", "/month/2026-03",
                 "(() => { const a = document.querySelector('aside.cal-side').getBoundingClientRect(),"
                 " m = document.querySelector('section.cal-main').getBoundingClientRect();"
                 " return {stacked: a.right <= m.left + 1, moved: a.left >= m.right - 1}; })()"),
    "contacts": ("contacts.find_phone@1", "/contacts",
                 "(() => { const f = document.getElementById('filters').getBoundingClientRect(),"
                 " t = document.querySelector('table.contacts').getBoundingClientRect();"
                 " return {stacked: f.bottom <= t.top + 1, moved: f.right <= t.left + 1 && f.top < t.top}; })()"),
    "notes": ("notes.open_folder@1", "/",
              "(() => { const items = Array.from(document.querySelectorAll('.note-item')).slice(0, 2)"
              ".map((e) => e.getBoundingClientRect());"
              " return {stacked: items[1].top >= items[0].bottom - 1, moved: Math.abs(items[1].top - items[0].top) < 1}; })()"),
    "kanban": ("kanban.open_card@1", "/",
               "(() => { const tiles = Array.from(document.querySelectorAll('a.board-tile')).slice(0, 2)"
               ".map((e) => e.getBoundingClientRect());"
               " return {stacked: Math.abs(tiles[1].top - tiles[0].top) < 1, moved: tiles[1].top >= tiles[0].bottom - 1}; })()"),
}
GERMAN_SIDEBAR = Variant(theme="dark", layout="sidebar", locale="de-DE", viewport=Size(width=1280, height=720))


async def _facts(handle: LocalSandbox, probe: str) -> dict[str, Any]:
    page = handle.sandbox.page  # type: ignore[attr-defined]
    landmark = await page.evaluate(probe)
    frame = await page.evaluate(
        "() => ({lang: document.documentElement.lang, layout: document.documentElement.dataset.layout,"
        " text: document.body.innerText, bar: document.querySelector('header.appbar').getBoundingClientRect().toJSON(),"
        " main: document.querySelector('main').getBoundingClientRect().toJSON()})")
    return {**frame, **landmark}


@pytest.mark.slow
@pytest.mark.parametrize("name", APPS)
def test_a_second_layout_and_locale_change_the_first_frame_and_the_page_structure(name: str) -> None:
    """The first frames of one task under the default look and under German in the sidebar
    layout differ; the sidebar puts the app bar in a rail and moves the app's own landmark to
    its other place; the German frame reads German, with German dates or money."""
    template, url, probe = CASES[name]
    config = {**get_template(template).instantiate(0).sandbox_config, "isolation": "shared"}

    async def run() -> None:
        async with open_local("browser", config) as handle:
            first = await handle.reset(seed=0, options={"start_url": url, "variant": DEFAULT.model_dump(mode="json")})
            plain = await _facts(handle, probe)
            second = await handle.reset(seed=0, options={"start_url": url, "variant": GERMAN_SIDEBAR.model_dump(mode="json")})
            german = await _facts(handle, probe)
            assert first.screenshot is not None and second.screenshot is not None
            assert first.screenshot.data != second.screenshot.data
            assert (plain["lang"], plain["layout"], german["lang"], german["layout"]) == ("en-US", "top", "de-DE", "sidebar")
            if name == "kanban":  # the board app's own look already has its navigation in a rail
                assert plain["main"]["left"] >= plain["bar"]["right"] - 1
            else:
                assert plain["main"]["top"] >= plain["bar"]["bottom"] - 1  # top: the bar above the page
            assert german["main"]["left"] >= german["bar"]["right"] - 1 and german["bar"]["height"] > german["bar"]["width"]
            assert plain["stacked"] and not plain["moved"], plain
            assert german["moved"] and not german["stacked"], german
            expected = {"calendar": ("Heute", "Today", r"März 2026"), "contacts": ("Anwenden", "Apply", DE_DAY),
                        "notes": ("Alle Notizen", "All notes", DE_DAY), "kanban": ("Mir zugewiesen", "Assigned to me", DE_DAY)}[name]
            assert expected[0] in german["text"] and expected[1] in plain["text"] and expected[1] not in german["text"]
            assert re.search(expected[2], german["text"]) and not re.search(expected[2], plain["text"])

    asyncio.run(run())
