"""The seeded data of calendar and kanban reads like a real account (issue 32 item 3): a busy
person's calendar (weekly series, a daily one, invitations answered and waiting, all-day days,
travel with the other zone's times, work in work hours and personal life in the evenings and at
weekends) and a team's workspace (boards of different kinds and sizes, uneven columns, people
from several locales); deterministic per seed; never a title the suites have an agent create."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from typing import Any

import pytest
from _apps_common import open_app

from cua.tasks.apps.calendar.seed import NAMES as CAL_NAMES
from cua.tasks.apps.calendar.seed import RESERVED as CAL_RESERVED
from cua.tasks.apps.kanban.seed import RESERVED as KANBAN_RESERVED
from cua.tasks.registry import list_templates

SEEDS = (0, 3, 7)


def _minutes(hhmm: str) -> int:
    return int(hhmm[:2]) * 60 + int(hhmm[3:])


@pytest.fixture(scope="module")
def calendars() -> dict[int, dict[str, Any]]:
    _, _, ctl = open_app("calendar")
    out = {}
    for seed in SEEDS:
        ctl.reset(seed)
        out[seed] = ctl.state()
    ctl.reset(SEEDS[0])
    assert ctl.state() == out[SEEDS[0]], "same seed, same calendar"
    assert out[SEEDS[0]] != out[SEEDS[1]]
    return out


@pytest.fixture(scope="module")
def workspaces() -> dict[int, dict[str, Any]]:
    _, _, ctl = open_app("kanban")
    out = {}
    for seed in SEEDS:
        ctl.reset(seed)
        out[seed] = ctl.state()
    ctl.reset(SEEDS[0])
    assert ctl.state() == out[SEEDS[0]], "same seed, same workspace"
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_calendar_reads_like_a_busy_persons(calendars: dict[int, dict[str, Any]], seed: int) -> None:
    state = calendars[seed]
    today = dt.date.fromisoformat(state["today"])
    events, people = state["events"], state["people"]
    assert 200 <= len(events) <= 300
    titles = [e["title"] for e in events]
    assert not any(re.search(r"#\d", t) for t in titles)
    assert min(map(len, titles)) <= 12 and max(map(len, titles)) >= 40
    assert len(set(titles)) >= 0.55 * len(titles)
    assert sum(any(ord(c) > 127 for c in t) for t in titles) >= 10  # accents, dashes
    # people from many locales, few repeated first names, company and personal addresses
    locales = {loc for p in people for loc, (firsts, lasts) in CAL_NAMES.items()
               if p["name"].split()[0] in firsts and p["name"].split()[-1] in lasts}
    assert len(locales) >= 6
    assert len({p["name"].split()[0] for p in people}) >= 0.75 * len(people)
    assert len({p["email"].split("@")[1] for p in people}) >= 5
    # recurring patterns, all-day days, invitations: answered in the past, some waiting ahead
    weekly = [e for e in events if e["recur"] == "weekly"]
    assert len(weekly) >= 12 and any(e["recur"] == "daily" for e in events)
    assert sum(e["all_day"] for e in events) >= 12
    pending = [e for e in events if e["organizer"] != "me" and e["my_status"] == "pending"]
    assert len(pending) >= 5 and all(dt.date.fromisoformat(e["date"]) >= today for e in pending)
    # varied lengths; work meetings on weekdays in work hours, life in the evenings and at weekends
    timed = [e for e in events if not e["all_day"]]
    assert all(_minutes(e["end"]) > _minutes(e["start"]) for e in timed)
    assert len({_minutes(e["end"]) - _minutes(e["start"]) for e in timed}) >= 8
    work = [e for e in timed if e["calendar"] == "Work" and e["recur"] == "none" and "Flight" not in e["title"]]
    assert all(dt.date.fromisoformat(e["date"]).weekday() < 5 for e in work)
    assert sum(8 * 60 <= _minutes(e["start"]) <= 18 * 60 + 30 for e in work) >= 0.85 * len(work)
    life = [e for e in timed if e["calendar"] != "Work" and e["recur"] == "none"]
    assert sum(dt.date.fromisoformat(e["date"]).weekday() >= 5 or _minutes(e["start"]) >= 17 * 60 for e in life) >= 0.6 * len(life)
    # another zone's times where they matter: a flight's local arrival, a call set from Tokyo or the US
    assert any(re.search(r"\b(WET|WEST|GMT|BST|CET|CEST)\b", e["description"]) for e in events if e["title"].startswith("Flight"))
    assert any(re.search(r"\b\d\d:\d\d (PT|ET|JST|IST)\b", e["description"]) for e in events)
    # one line, no edge spaces: the edit form posts a description back as it came (a textarea sends CRLF; it strips)
    assert all("\n" not in e["description"] and e["description"] == e["description"].strip() for e in events)


def _created_titles(apps: set[str]) -> set[str]:
    """Every title a template using these apps has an agent create (its string `title` param)."""
    out: set[str] = set()
    for t in list_templates(where=lambda t: t.tags.app in apps or bool(set(t.tags.apps or ()) & apps)):
        for seed in range(4):
            title = t.instantiate(seed).params.get("title")
            if isinstance(title, str):
                out.add(title.lower())
    return out


def test_seeds_never_hold_a_title_an_agent_creates(calendars: dict[int, dict[str, Any]],
                                                   workspaces: dict[int, dict[str, Any]]) -> None:
    created_events = _created_titles({"calendar"})
    created_cards = _created_titles({"kanban"})
    assert created_events and created_cards
    assert created_events <= CAL_RESERVED, created_events - CAL_RESERVED
    assert created_cards <= KANBAN_RESERVED, created_cards - KANBAN_RESERVED
    for state in calendars.values():
        assert not {e["title"].lower() for e in state["events"]} & CAL_RESERVED
    for ws in workspaces.values():
        assert not {c["title"].lower() for c in ws["cards"]} & KANBAN_RESERVED


@pytest.mark.parametrize("seed", SEEDS)
def test_kanban_reads_like_a_teams_workspace(workspaces: dict[int, dict[str, Any]], seed: int) -> None:
    state = workspaces[seed]
    cards, boards = state["cards"], state["boards"]
    assert 150 <= len(cards) <= 250 and len(boards) >= 5
    per_board = Counter(c["board_id"] for c in cards)
    assert max(per_board.values()) >= 3 * min(per_board.values())  # a big sprint board, a small office board
    per_column = [len(col["cards"]) for b in boards for col in b["columns"]]
    assert min(per_column) >= 1 and max(per_column) >= 15
    titles = [c["title"] for c in cards]
    assert len(set(titles)) == len(titles) and not any(re.search(r"#\d", t) for t in titles)
    assert min(map(len, titles)) <= 20 and max(map(len, titles)) >= 50
    assert sum(any(ord(ch) > 127 for ch in t) for t in titles) >= 10
    descriptions = [c["description"] for c in cards]
    assert "" in descriptions and max(map(len, descriptions)) >= 100
    # one line, no edge spaces: the card dialog posts a description back as it came (a textarea sends CRLF)
    assert all("\n" not in d and d == d.strip() for d in descriptions)
    comments = [com["body"] for c in cards for com in c["comments"]]
    assert len(comments) >= 60 and len(set(comments)) >= 15
    assert len({len(b["columns"]) for b in boards}) >= 2  # boards of 3 and of 5 columns
