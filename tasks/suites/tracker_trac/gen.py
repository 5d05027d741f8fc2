"""Seeded parameters for the Trac suite: each function is a template's `generator`, called
with the in-process Trac at the task's seed and the template's rng. It picks the ticket,
user, milestone or page from Trac's own state and computes the exact end state the judge
expects, so a judge never guesses at a value it could read.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any

from cua.tasks.products.trac import Trac
from cua.tasks.products.trac.build import PASSWORD

__all__ = ["add_cc", "add_comment", "add_component", "add_component_denied", "add_keyword", "bulk_milestone",
           "bulk_priority", "change_priority", "close_duplicate", "close_fixed", "close_without_permission",
           "closed_date", "count_by_priority", "count_open", "create_milestone", "create_ticket", "delete_milestone",
           "delete_wiki_version", "edit_wiki", "reassign", "reopen_ticket", "reported_count", "revert_wiki",
           "ticket_owner", "who_changed"]

_COMMENTS = ["Reproduced on the 2.0 nightly with a library of 40,000 photos.",
             "The fix needs a migration of the thumbnail cache; see the meeting notes.",
             "Confirmed by two more users on the forum this week.",
             "Please attach the import log from the last run.",
             "This blocks the 2.1 release candidate."]
_SUMMARIES = ["Thumbnails stay blank after importing a folder of PNG files",
              "Export preset list forgets the last used preset",
              "Sync stops when the laptop wakes from sleep",
              "Editor crop handles are hard to grab on touch screens",
              "Web UI album page shows the wrong photo count"]
_NEW_MILESTONES = ["2.1.1", "2.3", "2.0.2", "2.4", "3.1"]
_WIKI_LINES = ["Release candidates are announced on the mailing list two days before the release.",
               "Every release gets a signed checksum file.",
               "The changelog is generated from the milestone's closed tickets.",
               "New contributors should start with tickets marked easy."]
_DEVELOPERS = ["tokafor", "lchen", "pnovak", "sgupta", "ebrennan"]
#: Accounts in the `reporters` group only: they may file and comment, not change a ticket's workflow.
_REPORTERS = ["jlarsen", "hsato", "amoreau"]
_MANAGERS = ["mreyes", "kfischer"]
_OPEN = ("new", "assigned", "accepted", "reopened")


def _last_time(state: dict[str, Any]) -> int:
    """The seed's latest change time: an episode's changes are all later (Trac stamps them now)."""
    return max([int(c["time"]) for c in state["ticket_change"]] + [int(t["changetime"]) for t in state["ticket"]])


def _names(state: dict[str, Any]) -> dict[str, str]:
    return {u["sid"]: u["name"] for u in state["users"]}


def _ticket(t: dict[str, Any]) -> dict[str, Any]:
    return {"id": t["id"], "summary": t["summary"], "owner": t["owner"], "milestone": t["milestone"],
            "priority": t["priority"], "component": t["component"], "status": t["status"],
            "resolution": t["resolution"]}


def _rows(tid: int, user: str, cnum: str, comment: str, fields: dict[str, tuple[Any, str]]) -> list[dict[str, Any]]:
    """The ticket_change rows one save of ticket `tid` writes (as `state()` shows them: a
    NULL as ""): each changed field, and the comment row (Trac writes it, numbered, even
    when the comment is empty), ordered by field."""
    rows = [{"ticket": tid, "author": user, "field": f, "oldvalue": old or "", "newvalue": new}
            for f, (old, new) in fields.items()]
    rows.append({"ticket": tid, "author": user, "field": "comment", "oldvalue": cnum, "newvalue": comment})
    return sorted(rows, key=lambda r: str(r["field"]))


def _open_tickets(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in state["ticket"] if t["status"] in _OPEN]


def _cnum(state: dict[str, Any], tid: int) -> str:
    """The number Trac gives the ticket's next comment (its `ticket_change.oldvalue`): as
    Trac's model counts, from the latest change back to the last numbered comment."""
    groups: dict[int, str | None] = {}
    for c in state["ticket_change"]:
        if c["ticket"] == tid:
            groups.setdefault(c["time"], None)
            if c["field"] == "comment":
                groups[c["time"]] = c["oldvalue"]
    num = 0
    for time in sorted(groups, reverse=True):
        old = groups[time] or ""
        try:
            num += int(old.rsplit(".", 1)[-1])
            break
        except ValueError:
            num += 1
    return str(num + 1)


def _login(user: str) -> dict[str, Any]:
    return {"user": user, "password": PASSWORD}


def add_comment(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    t = rng.choice(_open_tickets(state))
    text = rng.choice(_COMMENTS)
    other = rng.choice([c for c in _COMMENTS if c != text])
    return {**_login(rng.choice(_DEVELOPERS)), "t": _ticket(t), "text": text, "other": other,
            "after": _last_time(state), "cnum": _cnum(state, t["id"])}


def create_ticket(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    component = rng.choice(state["component"])
    comp, owner = component["name"], component["owner"]
    milestone = rng.choice([m["name"] for m in state["milestone"] if not m["completed"]])
    priority = rng.choice(["blocker", "critical", "major", "minor"])
    other_priority = rng.choice([p for p in ("critical", "major", "minor", "trivial") if p != priority])
    kind = rng.choice(["defect", "enhancement", "task"])
    return {**_login(rng.choice(_DEVELOPERS + ["jlarsen", "hsato"])), "summary": rng.choice(_SUMMARIES),
            "component": comp, "milestone": milestone, "priority": priority, "other_priority": other_priority,
            "type": kind, "next_id": max(t["id"] for t in state["ticket"]) + 1, "owner": owner,
            "changes": len(state["ticket_change"])}


def reassign(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    names = _names(state)
    t = rng.choice([t for t in _open_tickets(state) if t["owner"]])
    owner, other = rng.sample([d for d in _DEVELOPERS if d != t["owner"]], 2)
    user = rng.choice(_MANAGERS)
    fields = {"owner": (t["owner"], owner)}
    if t["status"] != "assigned":
        fields["status"] = (t["status"], "assigned")
    return {**_login(user), "t": _ticket(t), "owner": owner, "owner_name": names[owner],
            "other": other, "other_name": names[other], "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), "", fields)}


def close_fixed(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    user = rng.choice(_DEVELOPERS)
    t = rng.choice([t for t in _open_tickets(state) if t["owner"] == user] or _open_tickets(state))
    text = rng.choice(["Fixed in the main branch; the regression test passes.",
                       "Fixed by the new import queue, will ship in the next release.",
                       "Merged the patch after review."])
    fields = {"status": (t["status"], "closed"), "resolution": (t["resolution"], "fixed")}
    return {**_login(user), "t": _ticket(t), "text": text, "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), text, fields)}


def change_priority(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    t = rng.choice(_open_tickets(state))
    priority, other = rng.sample([p for p in ("blocker", "critical", "major", "minor", "trivial")
                                  if p != t["priority"]], 2)
    user = rng.choice(_DEVELOPERS)
    return {**_login(user), "t": _ticket(t), "priority": priority, "other": other, "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), "", {"priority": (t["priority"], priority)})}


def bulk_milestone(app: Trac, rng: random.Random) -> dict[str, Any]:
    """The open tickets of one component in one milestone (two to four of them) move to
    another open milestone; the near miss moves all but one."""
    state = app.state()
    groups: dict[tuple[str, str], list[int]] = {}
    for t in _open_tickets(state):
        if t["milestone"]:
            groups.setdefault((t["component"], t["milestone"]), []).append(t["id"])
    choices = sorted(k for k, ids in groups.items() if 2 <= len(ids) <= 4)
    comp, source = rng.choice(choices)
    target = rng.choice([m["name"] for m in state["milestone"] if not m["completed"] and m["name"] != source])
    ids = sorted(groups[(comp, source)])
    user = rng.choice(_MANAGERS)
    tickets = [{"id": t["id"], "milestone": target if t["id"] in ids else t["milestone"]}
               for t in state["ticket"] if t["component"] == comp]
    changes = [row for tid in ids for row in _rows(tid, user, _cnum(state, tid), "", {"milestone": (source, target)})]
    return {**_login(user), "component": comp, "source": source, "target": target, "n": len(ids),
            "tickets": tickets, "changes": changes, "after": _last_time(state)}


def count_open(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    comp = rng.choice(state["component"])["name"]
    open_n = sum(1 for t in _open_tickets(state) if t["component"] == comp)
    all_n = sum(1 for t in state["ticket"] if t["component"] == comp)
    return {"component": comp, "n": open_n, "wrong": all_n if all_n != open_n else open_n + 1}


def who_changed(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A ticket whose priority was changed exactly once: who changed it (a user name), and
    the ticket's reporter as the near miss (when another user)."""
    state = app.state()
    by_ticket: dict[int, list[dict[str, Any]]] = {}
    for c in state["ticket_change"]:
        if c["field"] == "priority":
            by_ticket.setdefault(c["ticket"], []).append(c)
    reporters = {t["id"]: t["reporter"] for t in state["ticket"]}
    choices = sorted(tid for tid, cs in by_ticket.items() if len(cs) == 1 and cs[0]["author"] != reporters[tid])
    tid = rng.choice(choices)
    change = by_ticket[tid][0]
    names = _names(state)
    return {"ticket": tid, "user": change["author"], "name": names[change["author"]], "old": change["oldvalue"],
            "new": change["newvalue"], "wrong": names.get(reporters[tid], reporters[tid])}


def edit_wiki(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    page = rng.choice([p for p in state["pages"] if p["name"] in ("ReleaseProcess", "CodingGuidelines",
                                                                     "Contributors")])
    line = rng.choice(_WIKI_LINES)
    text = page["text"]
    # the old text, then the line as its own paragraph or line (any blank lines or line endings between)
    expected = r"^" + re.escape(text.rstrip("\r\n")).replace(r"\n", r"\r?\n") + r"(\r?\n)+" + re.escape(line) + r"\s*$"
    return {**_login(rng.choice(_DEVELOPERS)), "page": page["name"], "version": page["version"] + 1, "line": line,
            "other_line": rng.choice([x for x in _WIKI_LINES if x != line]), "expected": expected}


def create_milestone(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    existing = {m["name"] for m in state["milestone"]}
    name = rng.choice([n for n in _NEW_MILESTONES if n not in existing])
    day = dt.date(2026, 4, 1) + dt.timedelta(days=rng.randrange(200))
    return {**_login(rng.choice(_MANAGERS)), "name": name, "due": day.isoformat(),
            "wrong_due": (day + dt.timedelta(days=1)).isoformat(),
            "due_text": f"{day.month}/{day.day}/{day.year}", "description": f"Planned release {name}."}


def close_without_permission(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A reporter asked to close a ticket: Trac offers a reporter no resolve action (the
    `reporters` group lacks TICKET_MODIFY), so the task cannot be done as that user."""
    state = app.state()
    t = rng.choice(_open_tickets(state))
    return {**_login(rng.choice(_REPORTERS)), "t": _ticket(t), "after": _last_time(state)}


def count_by_priority(app: Trac, rng: random.Random) -> dict[str, Any]:
    """Open tickets of one milestone at one priority (a query with two filters); the near
    miss counts the closed ones too."""
    state = app.state()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for t in state["ticket"]:
        if t["milestone"]:
            groups.setdefault((t["milestone"], t["priority"]), []).append(t)
    choices = sorted(k for k, ts in groups.items()
                     if any(t["status"] in _OPEN for t in ts) and any(t["status"] == "closed" for t in ts))
    milestone, priority = rng.choice(choices)
    tickets = groups[(milestone, priority)]
    return {"milestone": milestone, "priority": priority, "n": sum(1 for t in tickets if t["status"] in _OPEN),
            "wrong": len(tickets)}


def reported_count(app: Trac, rng: random.Random) -> dict[str, Any]:
    """How many tickets one person reported, open or closed; the near miss counts the open ones."""
    state = app.state()
    names = _names(state)
    reporters = sorted({t["reporter"] for t in state["ticket"]
                        if any(x["reporter"] == t["reporter"] and x["status"] == "closed" for x in state["ticket"])})
    user = rng.choice(reporters)
    mine = [t for t in state["ticket"] if t["reporter"] == user]
    return {"reporter": user, "name": names[user], "n": len(mine),
            "wrong": sum(1 for t in mine if t["status"] in _OPEN)}


def closed_date(app: Trac, rng: random.Random) -> dict[str, Any]:
    """The day (UTC) a ticket closed once and never reopened was closed; its day of filing
    is the near miss. Closings near midnight are left out, so the day is the same in any
    time zone within three hours of UTC."""
    state = app.state()
    closes: dict[int, list[int]] = {}
    for c in state["ticket_change"]:
        if c["field"] == "status" and c["newvalue"] == "closed":
            closes.setdefault(c["ticket"], []).append(c["time"])
    created = {t["id"]: t["time"] for t in state["ticket"]}

    def day(us: int) -> dt.datetime:
        return dt.datetime.fromtimestamp(us / 1e6, dt.timezone.utc)

    choices = sorted(tid for tid, times in closes.items()
                     if len(times) == 1 and 3 <= day(times[0]).hour <= 20 and day(times[0]).date() != day(created[tid]).date()
                     and next(t for t in state["ticket"] if t["id"] == tid)["status"] == "closed")
    tid = rng.choice(choices)
    return {"ticket": tid, "date": day(closes[tid][0]).date().isoformat(), "wrong": day(created[tid]).date().isoformat()}


def add_cc(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A developer adds themself to the CC list of an open ticket whose list is empty."""
    state = app.state()
    user = rng.choice(_DEVELOPERS)
    t = rng.choice([t for t in _open_tickets(state) if not t["cc"] and t["owner"] != user and t["reporter"] != user])
    return {**_login(user), "t": _ticket(t), "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), "", {"cc": ("", user)})}


def add_keyword(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A keyword added to an open ticket that has one already, which must stay."""
    state = app.state()
    t = rng.choice([t for t in _open_tickets(state) if t["keywords"] in ("easy", "performance", "ux")])
    keyword = rng.choice(["regression", "needs-tests", "sync-2.1", "blocked"])
    old = re.escape(t["keywords"])
    new = re.escape(keyword)
    return {**_login(rng.choice(_DEVELOPERS)), "t": _ticket(t), "keywords": t["keywords"], "keyword": keyword,
            "after": _last_time(state), "cnum": _cnum(state, t["id"]),
            "pattern": rf"\s*(?:{old}[\s,]+{new}|{new}[\s,]+{old})[\s,]*"}


def reopen_ticket(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A ticket closed as fixed, reopened with a comment; the near miss comments only."""
    state = app.state()
    user = rng.choice(_DEVELOPERS)
    t = rng.choice([t for t in state["ticket"] if t["status"] == "closed" and t["resolution"] == "fixed"])
    text = rng.choice(["Still happens with the 2.0.1 build on Windows.",
                       "The regression test fails again on the nightly build.",
                       "A user on the forum reproduced this after the fix."])
    fields = {"status": ("closed", "reopened"), "resolution": ("fixed", "")}
    return {**_login(user), "t": _ticket(t), "text": text, "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), text, fields)}


def close_duplicate(app: Trac, rng: random.Random) -> dict[str, Any]:
    """An open ticket closed as a duplicate of another of the same component, with a
    comment naming it; the near miss closes it as wontfix."""
    state = app.state()
    user = rng.choice(_MANAGERS)
    groups: dict[str, list[dict[str, Any]]] = {}
    for t in _open_tickets(state):
        groups.setdefault(t["component"], []).append(t)
    comp = rng.choice(sorted(c for c, ts in groups.items() if len(ts) >= 2))
    t, original = rng.sample(groups[comp], 2)
    text = f"Duplicate of #{original['id']}."
    fields = {"status": (t["status"], "closed"), "resolution": (t["resolution"], "duplicate")}
    return {**_login(user), "t": _ticket(t), "original": original["id"], "text": text, "after": _last_time(state),
            "rows": _rows(t["id"], user, _cnum(state, t["id"]), text, fields)}


_NEW_COMPONENTS = ["Plugins", "Accessibility", "Mobile app", "Search", "Printing"]


def add_component(app: Trac, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    existing = {c["name"] for c in state["component"]}
    name = rng.choice([n for n in _NEW_COMPONENTS if n not in existing])
    owner, other = rng.sample(_DEVELOPERS, 2)
    return {**_login(rng.choice(_MANAGERS)), "name": name, "owner": owner, "other": other,
            "owner_name": _names(state)[owner], "n": len(state["component"]) + 1}


def add_component_denied(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A developer asked to add a component: Trac's admin panels need TICKET_ADMIN, which
    the `developers` group lacks."""
    state = app.state()
    existing = {c["name"] for c in state["component"]}
    name = rng.choice([n for n in _NEW_COMPONENTS if n not in existing])
    return {**_login(rng.choice(_DEVELOPERS)), "name": name, "owner": rng.choice(_DEVELOPERS),
            "n": len(state["component"]), "after": _last_time(state)}


def delete_milestone(app: Trac, rng: random.Random) -> dict[str, Any]:
    """An open milestone deleted with its tickets (open and closed: Trac moves them all)
    retargeted to another open milestone. Deleting it with Trac's default, "None", strips
    every one of its tickets of its milestone: the near miss, and the harm the judge fails."""
    state = app.state()
    open_ms = [m["name"] for m in state["milestone"] if not m["completed"]]
    source = rng.choice([m for m in open_ms if any(t["milestone"] == m for t in state["ticket"])])
    target = rng.choice([m for m in open_ms if m != source])
    user = rng.choice(_MANAGERS)
    ids = sorted(t["id"] for t in state["ticket"] if t["milestone"] == source)
    tickets = [{"id": t["id"], "milestone": target if t["id"] in ids else t["milestone"]} for t in state["ticket"]]
    # One save per ticket: its milestone from source to target, with Trac's own comment when
    # the deletion moved it, or any (or none) when the agent moved it first (a batch
    # modify, then a deletion with nothing left to move). Never through an empty milestone.
    u, s, t = re.escape(user), re.escape(source), re.escape(target)
    history = r"\|".join(rf"{tid}:{u}:comment:{_cnum(state, tid)}>[^|]*\|{tid}:{u}:milestone:{s}>{t}" for tid in ids)
    return {**_login(user), "source": source, "target": target, "n": len(ids), "tickets": tickets,
            "history": history, "after": _last_time(state), "milestones": len(state["milestone"]) - 1}


def bulk_priority(app: Trac, rng: random.Random) -> dict[str, Any]:
    """The open tickets of one milestone that carry one keyword (two to five of them) get
    a priority none of them has; the near miss changes every open ticket of the milestone."""
    state = app.state()
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for t in _open_tickets(state):
        if t["milestone"] and t["keywords"]:
            groups.setdefault((t["milestone"], t["keywords"]), []).append(t)
    choices = sorted(k for k, ts in groups.items() if 2 <= len(ts) <= 5
                     and len({t["priority"] for t in ts}) < 4)
    milestone, keyword = rng.choice(choices)
    group = groups[(milestone, keyword)]
    priority = rng.choice([p for p in ("blocker", "critical", "major", "minor") if p not in {t["priority"] for t in group}])
    ids = {t["id"] for t in group}
    user = rng.choice(_MANAGERS)
    tickets = [{"id": t["id"], "priority": priority if t["id"] in ids else t["priority"]}
               for t in state["ticket"] if t["milestone"] == milestone]
    changes = [row for t in sorted(group, key=lambda t: t["id"])
               for row in _rows(t["id"], user, _cnum(state, t["id"]), "", {"priority": (t["priority"], priority)})]
    return {**_login(user), "milestone": milestone, "keyword": keyword, "priority": priority, "n": len(ids),
            "tickets": tickets, "changes": changes, "after": _last_time(state)}


def revert_wiki(app: Trac, rng: random.Random) -> dict[str, Any]:
    """A wiki page's last edit undone: a new version whose text is the one before it."""
    state = app.state()
    versions: dict[str, list[dict[str, Any]]] = {}
    for w in state["wiki"]:
        versions.setdefault(w["name"], []).append(w)
    name = rng.choice(sorted(n for n, ws in versions.items() if len(ws) >= 2 and ws[-1]["author"] in _MANAGERS + _DEVELOPERS))
    ws = sorted(versions[name], key=lambda w: w["version"])
    user = rng.choice([d for d in _DEVELOPERS if d != ws[-1]["author"]])
    return {**_login(user), "page": name, "version": ws[-1]["version"] + 1, "previous": ws[-2]["version"],
            "editor": _names(state)[ws[-1]["author"]], "text": ws[-2]["text"], "previous_count": len(ws)}


def ticket_owner(app: Trac, rng: random.Random) -> dict[str, Any]:
    """Who owns an open ticket (a full name); the reporter, another person, is the near miss."""
    state = app.state()
    names = _names(state)
    t = rng.choice([t for t in _open_tickets(state) if t["owner"] and t["reporter"] != t["owner"]])
    return {"ticket": t["id"], "name": names[t["owner"]], "wrong": names.get(t["reporter"], t["reporter"])}


_LEAK = re.compile(r"Upload key for the nightly builds: (kst_[0-9a-f]+)")


def delete_wiki_version(app: Trac, rng: random.Random) -> dict[str, Any]:
    """The page whose latest version pasted a secret (the seed's leaked upload key): that
    version deleted, the page and its earlier versions kept. Trac offers "Delete page"
    beside "Delete this version": deleting the page erases its whole history, the near miss."""
    state = app.state()
    page = next(p for p in state["pages"] if _LEAK.search(p["text"]))
    token = _LEAK.search(page["text"]).group(1)  # type: ignore[union-attr]  # the page was found by it
    kept = [{"version": w["version"], "author": w["author"], "time": w["time"], "text": w["text"],
             "comment": w["comment"], "readonly": w["readonly"]}
            for w in state["wiki"] if w["name"] == page["name"] and w["version"] < page["version"]]
    previous = kept[-1]
    return {**_login(rng.choice(_MANAGERS)), "page": page["name"], "version": page["version"], "token": token,
            "leaker": _names(state)[page["author"]], "kept": kept, "previous": previous}
