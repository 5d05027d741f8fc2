"""Layouts and locales of forum, travel, settings and sheets (issue 32), in real Chromium: a
de-DE page shows German UI with German dates, numbers and money; a second layout moves a
landmark of the page; the first frames of one task under two variants differ. The data
stay the same in every variant, so the page's records are the same."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from typing import Any

import pytest
from _apps_common import open_app

from cua.episode.local import LocalSandbox, open_local
from cua.tasks.registry import get_template
from cua.variant import DEFAULT, Variant

GERMAN_SIDEBAR = Variant(layout="sidebar", locale="de-DE")
DENSE = Variant(layout="dense")


@dataclass(frozen=True)
class Case:
    template: str
    start_url: str
    english: str  # UI text the en-US page shows and the de-DE one does not
    german: str  # its translation
    localised: str  # a regex only the de-DE page matches: a German date, number or price
    #: JS returning {a, b}: two landmarks' boxes whose arrangement each layout changes
    landmarks: str


def _boxes(first: str, second: str) -> str:
    return (f"() => ({{a: document.querySelector({first!r}).getBoundingClientRect().toJSON(),"
            f" b: document.querySelector({second!r}).getBoundingClientRect().toJSON()}})")


def _travel_results() -> str:
    app, _, _ = open_app("travel")
    f = app.db.one("SELECT origin, dest, substr(depart, 1, 10) AS day FROM flights "
                   "GROUP BY origin, dest, day HAVING COUNT(*) > 2 ORDER BY MAX(price) DESC LIMIT 1")
    return f"/flights?from={f['origin']}&to={f['dest']}&date={f['day']}"


CASES = {
    "forum": Case("forum.add_comment@1", "/posts/1", "Add a comment", "Kommentar schreiben",
                  r"\d{2}\.\d{2}\.20\d{2}, \d{2}:\d{2}", _boxes("section.feed", "aside.sidebar")),
    "travel": Case("travel.cheapest_price@1", "", "Modify search", "Suche ändern",
                   r"\d,\d{2}\s\$", _boxes(".results-layout > .filters", ".results-layout > ul.results")),
    "settings": Case("settings.open_users@1", "/users", "Invite user", "Benutzer einladen",
                     r"\d{2}\.\d{2}\.20\d{2}, \d{2}:\d{2}", _boxes("nav.side", "section.content")),
    "sheets": Case("sheets.open_sheet@1", "/sheets/3", "Sort range", "Bereich sortieren",
                   r"^\d+,\d$", _boxes(".tabs", ".grid-wrap")),
}


async def _facts(handle: LocalSandbox, landmarks: str) -> dict[str, Any]:
    page = handle.sandbox.page  # type: ignore[attr-defined]
    boxes = await page.evaluate(landmarks)
    return {
        "lang": await page.evaluate("document.documentElement.lang"),
        "text": await page.evaluate("document.body.innerText"),
        "cells": await page.evaluate("[...document.querySelectorAll('td.cell.num')].map((td) => td.textContent)"),
        "bar": await page.evaluate("document.querySelector('header.appbar').getBoundingClientRect().toJSON()"),
        "a": boxes["a"], "b": boxes["b"],
    }


async def _show(handle: LocalSandbox, url: str, variant: Variant, landmarks: str) -> tuple[bytes, dict[str, Any]]:
    obs = await handle.reset(seed=0, options={"start_url": url, "variant": variant.model_dump(mode="json")})
    assert obs.screenshot is not None
    return obs.screenshot.data, await _facts(handle, landmarks)


@pytest.mark.slow
@pytest.mark.parametrize("app", sorted(CASES))
def test_german_and_a_second_layout_change_the_page(app: str) -> None:
    case = CASES[app]
    url = case.start_url or _travel_results()
    config = {**get_template(case.template).instantiate(0).sandbox_config, "isolation": "shared"}

    async def run() -> None:
        async with open_local("browser", config) as handle:
            plain_shot, plain = await _show(handle, url, DEFAULT, case.landmarks)
            german_shot, german = await _show(handle, url, GERMAN_SIDEBAR, case.landmarks)
            _, dense = await _show(handle, url, DENSE, case.landmarks)
        # the first frames differ, and the page reads German only in de-DE
        assert plain_shot != german_shot
        assert (plain["lang"], german["lang"]) == ("en-US", "de-DE")
        assert case.english in plain["text"] and case.english not in german["text"]
        assert case.german in german["text"] and case.german not in plain["text"]
        shown = "\n".join(german["cells"]) if app == "sheets" else german["text"]
        plain_shown = "\n".join(plain["cells"]) if app == "sheets" else plain["text"]
        assert re.search(case.localised, shown, re.M) and not re.search(case.localised, plain_shown, re.M)
        # sidebar: the app bar is a rail left of the page, and the app's own landmarks move
        assert plain["bar"]["width"] > plain["bar"]["height"]
        assert german["bar"]["height"] > german["bar"]["width"]
        _check_layouts(app, plain["a"], plain["b"], german["a"], german["b"], dense["a"], dense["b"])

    asyncio.run(run())


def _check_layouts(app: str, *boxes: dict[str, float]) -> None:
    """Each app's landmarks, top (its own look) → sidebar → dense."""
    (ta, tb), (sa, sb), (da, db) = boxes[0:2], boxes[2:4], boxes[4:6]
    if app == "forum":  # the community column: right of the feed → left of it → a strip above it
        assert ta["right"] <= tb["left"] + 1 and sb["right"] <= sa["left"] + 1 and db["bottom"] <= da["top"] + 1
    elif app == "travel":  # the filters: left of the results → right of them → a narrower left column
        assert ta["right"] <= tb["left"] + 1 and sa["left"] >= sb["right"] - 1 and da["width"] < ta["width"]
    elif app == "settings":  # the sections: a column left of the page → tabs above it → a narrower column
        assert ta["right"] <= tb["left"] + 1 and sa["bottom"] <= sb["top"] + 1 and sa["width"] > sa["height"]
        assert da["width"] < ta["width"] and da["right"] <= db["left"] + 1
    else:  # sheets' tabs: below the grid → a column left of it → below it again, with smaller cells
        assert ta["top"] >= tb["bottom"] - 1 and sa["right"] <= sb["left"] + 1 and sa["height"] > sa["width"]
        assert da["top"] >= db["bottom"] - 1 and da["height"] < ta["height"] + 1


def test_a_variant_changes_how_the_pages_read_never_what_the_apps_hold() -> None:
    """The same seed in en-US and de-DE: the same state; the German page shows German text
    for the same records (no Chromium needed: the pages' HTML)."""
    for app_name, url in (("forum", "/u/morgan_k"), ("travel", "/trips"), ("settings", "/users"), ("sheets", "/sheets/1")):
        app, page, control = open_app(app_name)
        assert control.post("/__cua/reset", json={"seed": 3}).status_code == 200
        english, state = page.get(url).text, control.state()
        assert control.post("/__cua/reset", json={"seed": 3, "variant": GERMAN_SIDEBAR.model_dump(mode="json")}).status_code == 200
        german = page.get(url).text
        assert control.state() == state, app_name
        assert '<html lang="de-DE"' in german and '<html lang="en-US"' in english
        record = {"forum": "morgan_k", "travel": "data-ref=", "settings": "data-user=", "sheets": 'data-ref="A1"'}[app_name]
        assert english.count(record) == german.count(record) > 0, app_name
        bad = control.post("/__cua/reset", json={"seed": 3, "variant": {"locale": "fr-FR"}})
        assert bad.status_code == 400 and bad.json()["field"] == "variant.locale"
