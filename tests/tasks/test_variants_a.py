"""Layouts and locales of bank, chat, drive and review (issue 32, item 2): a de-DE page reads
German with German dates, numbers and money; en-US pages keep the formats their tasks were
written against; a second layout moves a landmark in real Chromium; the first frames of one
task under two variants differ."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from _apps_common import open_app

from cua.episode.local import LocalSandbox, open_local
from cua.observation import Size
from cua.tasks.apps.bank import Refused, parse_amount
from cua.tasks.registry import get_template
from cua.variant import DEFAULT, Variant

GERMAN = {"seed": 0, "variant": {"locale": "de-DE"}}
DE_DATE = re.compile(r"\b\d\d\.\d\d\.20\d\d\b")
ISO_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _german(app: str) -> tuple[Any, Any, Any]:
    handle, page, control = open_app(app)
    assert control.post("/__cua/reset", json=GERMAN).status_code == 200
    return handle, page, control


# --- the locale, in process ---

def test_bank_in_german_writes_euros_and_dates_the_german_way() -> None:
    app, page, control = _german("bank")
    balance = app.db.scalar("SELECT balance_cents FROM accounts WHERE id = 2")
    assert balance >= 100_000  # a balance with a thousands separator
    whole, cents = divmod(balance, 100)
    overview = page.get("/").text
    assert f"{whole // 1000}.{whole % 1000:03d},{cents:02d}\u00a0€" in overview
    assert ">Konten<" in overview and "Überweisung tätigen" in overview and "Letzte Umsätze" in overview
    assert DE_DATE.search(overview) and not ISO_DATE.search(overview.split("<main>")[1])
    statement = page.get("/accounts/1/statements").text
    assert "Kontoauszug 02.2026" in statement
    assert re.search(r"Gültig bis \d\d/20\d\d<", page.get("/cards").text)
    assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    english = page.get("/").text
    assert f"€{whole:,}.{cents:02d}" in english and ">Accounts<" in english and ISO_DATE.search(english)


def test_bank_refusals_read_in_german_and_amounts_typed_the_german_way_move_the_same_cents() -> None:
    app, page, control = _german("bank")
    refused = page.post("/transfer", data={"from": "1", "to": "account:2", "amount": "12,345", "reference": ""})
    assert refused.status_code == 400 and "Geben Sie einen Betrag wie 125,50 ein" in refused.text
    assert control.state()["transfers"] == []
    ok = page.post("/transfer", data={"from": "1", "to": "account:2", "amount": "1.234,50", "reference": ""})
    assert ok.status_code == 200 and "1.234,50\u00a0€ bestätigen und senden" in ok.text
    assert [t["amount_cents"] for t in control.state()["transfers"]] == [123450]
    over = page.post("/transfer", data={"from": "1", "to": "account:2", "amount": "999999,00", "reference": ""})
    assert over.status_code == 400 and "Deckung nicht ausreichend" in over.text
    # what an English instruction types (`125.50`) is read the same in either locale; a German
    # `12,345` is never read the English way (12345 euros)
    assert parse_amount("125.50", "Amount", "de-DE") == parse_amount("125.50") == 12550
    assert parse_amount("1.234", "Amount", "de-DE") == 123400 and parse_amount("125,5", "Amount", "de-DE") == 12550
    for bad in ("12,345", "1,234.56", "12.345,678", "0,00"):
        with pytest.raises(Refused, match="Amount"):
            parse_amount(bad, "Amount", "de-DE")


def test_chat_in_german() -> None:
    _, page, _ = _german("chat")
    channel = page.get("/c/2").text
    assert "Kanäle" in channel and "Direktnachrichten" in channel and "Mitglieder" in channel and "Senden" in channel
    assert DE_DATE.search(channel) and 'data-region="sidebar"' in channel
    assert "Antworten" in channel and "Anheften" in channel
    assert "Kein solcher Kanal." in page.get("/c/999").text


def test_drive_in_german_writes_sizes_and_dates_the_german_way() -> None:
    _, page, control = _german("drive")
    listing = page.get("/folders/1").text
    assert "Meine Ablage" in listing and "Geändert" in listing and "Größe" in listing and "Neuer Ordner" in listing
    assert re.search(r"\d{1,2}\. (Januar|Februar|März|April|Mai|Juni|Juli|August|September|Oktober|November|Dezember) 20\d\d", listing)
    assert re.search(r"\d+,\d\d GB von \d+,\d\d GB belegt", listing)
    recent = page.get("/recent").text
    assert re.search(r">\d+,\d (KB|MB)<", recent)
    assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    english = page.get("/folders/1").text
    assert "My Drive" in english and re.search(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{1,2}, 20\d\d", english)
    assert re.search(r"\d+\.\d\d GB of \d+\.\d\d GB used", english)


def test_review_in_german() -> None:
    app, page, _ = _german("review")
    repo, number = app.db.one("SELECT r.name, p.number FROM pulls p JOIN repos r ON r.id = p.repo_id WHERE p.status = 'open' "
                              "ORDER BY p.id LIMIT 1").values()
    pull = page.get(f"/r/{repo}/pull/{number}").text
    assert "Unterhaltung" in pull and "Geänderte Dateien" in pull and "Prüfer" in pull and "eröffnet am" in pull
    assert DE_DATE.search(pull) and "Pull-Request schließen" in pull
    repos = page.get("/repos").text
    assert re.search(r"★ \d\.\d{3} · ", repos)  # a star count with a German thousands separator
    refused = page.post(f"/r/{repo}/pull/{number}/comment", data={"body": "  "})
    assert refused.status_code == 400 and "Der Kommentar ist leer" in refused.text


# --- the layouts, in real Chromium ---

LANDMARKS = """() => {
  const box = (sel) => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().toJSON() : null; };
  const all = (sel) => [...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect().toJSON());
  const avatar = document.querySelector('[data-message-id] .avatar');
  return {bar: box('header.appbar'), main: box('main'), accounts: all('[data-region=accounts] > li'),
          side: box('[data-region=side]'), content: box('[data-region=content]'),
          prSide: box('[data-region=pr-side]'), prMain: box('.pr-main-col'), channels: box('[data-region=sidebar]'),
          avatar: avatar ? getComputedStyle(avatar).display : null, lang: document.documentElement.lang,
          text: document.body.innerText};
}"""

SIDEBAR_DE = Variant(layout="sidebar", locale="de-DE", viewport=Size(width=1280, height=720))
DENSE_DE = Variant(theme="dark", layout="dense", locale="de-DE", viewport=Size(width=1280, height=720))


async def _facts(handle: LocalSandbox, url: str, variant: Variant) -> tuple[dict[str, Any], bytes]:
    obs = await handle.reset(seed=0, options={"start_url": url, "variant": variant.model_dump(mode="json")})
    assert obs.screenshot is not None
    facts = dict(await handle.sandbox.page.evaluate(LANDMARKS))  # type: ignore[attr-defined]
    return facts, obs.screenshot.data


def _run(template: str, url: str, check: Any) -> None:
    instance = get_template(template).instantiate(0)

    async def go() -> None:
        async with open_local("browser", {**instance.sandbox_config, "isolation": "shared"}) as handle:
            plain, plain_frame = await _facts(handle, url, DEFAULT)
            side, side_frame = await _facts(handle, url, SIDEBAR_DE)
            dense, dense_frame = await _facts(handle, url, DENSE_DE)
            assert len({plain_frame, side_frame, dense_frame}) == 3  # the first frames differ
            assert plain["lang"] == "en-US" and side["lang"] == dense["lang"] == "de-DE"
            assert plain["main"]["top"] >= plain["bar"]["bottom"]  # top: the bar above the page
            assert side["main"]["left"] >= side["bar"]["right"] and side["bar"]["height"] > side["bar"]["width"]
            check(plain, side, dense)

    asyncio.run(go())


@pytest.mark.slow
def test_bank_layouts_list_the_accounts_as_tiles_rows_or_a_strip() -> None:
    def check(plain: dict[str, Any], side: dict[str, Any], dense: dict[str, Any]) -> None:
        top_row = plain["accounts"]
        assert len(top_row) == 3 and top_row[0]["top"] == top_row[1]["top"]  # tiles side by side
        rows = side["accounts"]
        assert rows[1]["top"] >= rows[0]["bottom"] and rows[0]["left"] == rows[1]["left"]  # a ledger list, one per row
        assert rows[0]["width"] > 2 * top_row[0]["width"]
        strip = dense["accounts"]
        assert {round(a["top"]) for a in strip} == {round(strip[0]["top"])} and strip[0]["height"] < top_row[0]["height"]
        assert "Konten" in side["text"] and "€" in side["text"] and DE_DATE.search(side["text"])
    _run("bank.move_to_savings@1", "/", check)


@pytest.mark.slow
def test_chat_layouts_rail_the_workspace_and_drop_avatars_when_dense() -> None:
    def check(plain: dict[str, Any], side: dict[str, Any], dense: dict[str, Any]) -> None:
        assert side["bar"]["width"] < 100 and side["channels"]["left"] >= side["bar"]["right"]  # a narrow workspace rail
        assert plain["channels"]["top"] >= plain["bar"]["bottom"]
        assert plain["avatar"] != "none" and dense["avatar"] == "none"  # IRC-like transcript
        assert dense["channels"]["width"] < plain["channels"]["width"]
        assert "Kanäle" in dense["text"] and DE_DATE.search(dense["text"])
    _run("chat.post_in_channel@1", "/c/2", check)


@pytest.mark.slow
def test_drive_sidebar_layout_moves_the_folder_tree_to_the_right() -> None:
    def check(plain: dict[str, Any], side: dict[str, Any], dense: dict[str, Any]) -> None:
        assert plain["side"]["right"] <= plain["content"]["left"]  # the tree left of the files
        assert side["side"]["left"] >= side["content"]["right"]  # a details pane right of them
        assert dense["side"]["width"] < plain["side"]["width"]
        assert "Meine Ablage" in side["text"] and re.search(r"\d+,\d\d GB", side["text"])
    _run("drive.rename_file@1", "/folders/1", check)


@pytest.mark.slow
def test_review_sidebar_layout_puts_the_details_before_the_conversation() -> None:
    def check(plain: dict[str, Any], side: dict[str, Any], dense: dict[str, Any]) -> None:
        assert plain["prSide"]["left"] >= plain["prMain"]["right"]
        assert side["prSide"]["right"] <= side["prMain"]["left"]
        assert dense["prSide"]["width"] < plain["prSide"]["width"]
        assert "Unterhaltung" in side["text"] and DE_DATE.search(side["text"])
    _run("review.approve@1", "/r/authd/pull/202", check)
