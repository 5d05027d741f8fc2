"""Seeded parameters for the MediaWiki suite: each function is a template's `generator`,
called with the in-process MediaWiki at the task's seed and the template's rng. It picks
the page, user or revision from the wiki's own state and computes the exact end state
the judge expects (the page's whole new wikitext, its categories, a user's watched list),
so a judge never guesses at text it could read.
"""

from __future__ import annotations

import random
import re
from typing import Any

from cua.tasks.products.mediawiki import MediaWiki
from cua.tasks.products.mediawiki.content import PASSWORD

__all__ = ["add_category", "add_see_also", "category_count", "count_editors", "create_page", "history_paragraph",
           "infobox_field", "move_page", "open_talk", "page_creator", "protect_page", "protect_without_rights",
           "redirect_target", "remove_category", "revert_vandalism", "talk_section", "unwatch_page", "watch_page",
           "who_edited", "who_protected"]

_SENTENCES = ["A new footbridge linked it to the towpath in 2019.",
              "The council listed it as a heritage asset in 2021.",
              "Its centenary was marked with a street party in 2023.",
              "Volunteers restored the original gate posts in 2018.",
              "A storm in 2020 brought down two of its oldest trees."]
_NEW_TITLES = ["Riverbend Allotments", "Quayside Lighthouse", "Heron Lane Library", "Millbrook Bandstand",
               "Old Ferry Steps", "Saltmarsh Boardwalk", "Kingsmead Lido", "Tanner's Row Market"]
_NEW_TEXT = ["It is a well-loved corner of the town, looked after by volunteers.",
             "It opened to the public in the spring of 2024.",
             "Local schools use it for nature walks and open-air lessons."]
_SUBJECTS = ["Opening hours", "Photo request", "Source for the founding date", "Accessibility"]
_MESSAGES = ["Does anyone know whether this has changed since last year?",
             "Could someone add a photo taken from the river side?",
             "The date in the history section needs a citation."]
_CATEGORIES = ["Parks", "Restaurants", "Historic buildings", "People", "Events", "Neighbourhoods"]
_EDITORS = ["Priya Natarajan", "Jonas Berg", "Aiko Tanaka", "Samuel Okafor", "Grace Liu"]
_ADMINS = ["Elena Ruiz", "Tom Whitaker", "Lena Fischer"]


def _state(app: MediaWiki) -> dict[str, Any]:
    return app.state()


def _articles(state: dict[str, Any], *, editable: bool = True) -> list[dict[str, Any]]:
    """Full articles (main namespace, no redirect, with a See also section); `editable`:
    not protected, so anyone may edit and move them."""
    return [p for p in state["pages"] if p["namespace"] == 0 and not p["is_redirect"] and "== See also ==" in p["text"]
            and not (editable and p["protection"])]


def _page(p: dict[str, Any]) -> dict[str, Any]:
    return {"id": p["id"], "title": p["title"]}


def _category_regex(text: str, category: str) -> str:
    """The old text, then the category tag (any spacing, an optional sort key), and nothing else."""
    return (r"^" + re.escape(text) + r"\s*\[\[\s*[Cc]ategory\s*:\s*" + re.escape(category).replace(r"\ ", r"[ _]")
            + r"\s*(\|[^\]]*)?\]\]\s*$")


def _section_end(text: str, heading: str) -> int:
    start = text.index(f"== {heading} ==")
    nxt = text.find("\n\n== ", start + 1)
    return nxt if nxt >= 0 else len(text)


def history_paragraph(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    page = rng.choice(_articles(_state(app)))
    text, sentence = page["text"], rng.choice(_SENTENCES)
    end = _section_end(text, "History")
    # a new paragraph (any number of blank lines before it, as the edit box leaves them), nothing else changed
    expected = r"^" + re.escape(text[:end]) + r"\s*\n\s*" + re.escape(sentence) + r"\s*" + re.escape(text[end:]) + r"$"
    heading = re.findall(r"\n== ([^=]+) ==\n", text)
    after = heading[heading.index("History") + 1]  # the section after History (the near miss edits it)
    return {"page": _page(page), "sentence": sentence, "expected": expected, "next_section": after.replace(" ", "_"),
            "section_index": 1, "next_index": 2}


def _next_page_id(app: MediaWiki) -> int:
    """The id MediaWiki gives the next page it creates (its table's AUTOINCREMENT)."""
    return int(app.db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'page'")) + 1


def _logs(state: dict[str, Any], title: str, *new: dict[str, str]) -> list[dict[str, str]]:
    """The log entries about `title` (type, action, user), with `new` ones after them."""
    return [{"type": r["type"], "action": r["action"], "user": r["user"]} for r in state["logs"]
            if r["title"] == title] + list(new)


def create_page(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    taken = {p["title"] for p in state["pages"]}
    title = rng.choice([t for t in _NEW_TITLES if t not in taken])
    category, other = rng.sample(_CATEGORIES, 2)
    text = rng.choice(_NEW_TEXT)
    return {"title": title, "url_title": title.replace(" ", "_"), "category": category, "other": other,
            "text": text, "text_regex": _category_regex(text, category), "new_id": _next_page_id(app),
            "logs": [{"type": "create", "action": "create"}]}


def move_page(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    page = rng.choice(_articles(state))
    new = f"{page['title']} (Riverbend)"
    user = rng.choice(_EDITORS)
    return {"page": _page(page), "url_title": page["title"].replace(" ", "_"), "new_title": new,
            "wrong_title": f"{page['title']} (Riverbed)", "user": user, "password": PASSWORD,
            "redirect_id": _next_page_id(app),
            "redirect_regex": r"^\s*#[Rr][Ee][Dd][Ii][Rr][Ee][Cc][Tt]\s*\[\[" + re.escape(new) + r"\]\]\s*$",
            "logs": _logs(state, page["title"], {"type": "move", "action": "move", "user": user})}


def add_category(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    page = rng.choice(_articles(_state(app)))
    category, other = rng.sample([c for c in _CATEGORIES if c not in page["categories"]], 2)
    return {"page": _page(page), "category": category, "other": other,
            "categories": sorted([*page["categories"], category]), "text_regex": _category_regex(page["text"], category)}


def _revision_texts(app: MediaWiki, page_id: int) -> list[dict[str, Any]]:
    return app.db.all(
        "SELECT r.rev_id AS id, r.rev_parent_id AS parent, a.actor_name AS user, t.old_text AS text "
        "FROM revision r JOIN actor a ON a.actor_id = r.rev_actor "
        "JOIN slots s ON s.slot_revision_id = r.rev_id AND s.slot_role_id = 1 "
        "JOIN content c ON c.content_id = s.slot_content_id JOIN text t ON 'tt:' || t.old_id = c.content_address "
        "WHERE r.rev_page = ? ORDER BY r.rev_id", (page_id,))


def revert_vandalism(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    candidates = []
    for p in _articles(state, editable=True):
        revs = _revision_texts(app, p["id"])
        if len(revs) >= 3 and revs[-1]["user"] in ("Quickfix 77", "Marek Novak") and revs[-1]["text"] != revs[-2]["text"] \
                and revs[0]["text"] != revs[-2]["text"]:
            candidates.append((p, revs))
    page, revs = rng.choice(candidates)
    return {"page": _page(page), "vandal": revs[-1]["user"], "bad_rev": revs[-1]["id"], "expected": revs[-2]["text"],
            "first_rev": revs[0]["id"]}


def watch_page(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    user = rng.choice(_EDITORS)
    mine = {w["title"] for w in state["watched"] if w["user"] == user}
    page, other = rng.sample([p for p in _articles(state, editable=False) if p["title"] not in mine], 2)
    rows = app.db.all("SELECT w.wl_namespace AS ns, w.wl_title AS key FROM watchlist w JOIN user u "
                      "ON u.user_id = w.wl_user WHERE u.user_name = ?", (user,))
    key = page["title"].replace(" ", "_")
    pairs = sorted({(int(r["ns"]), str(r["key"])) for r in rows} | {(0, key), (1, key)})
    from cua.tasks.products.mediawiki import full_title

    expected = [{"id": f"{user}|{t}", "user": user, "title": t} for ns, k in pairs for t in [full_title(ns, k)]]
    return {"page": _page(page), "other": _page(other), "user": user, "password": PASSWORD, "expected": expected}


def count_editors(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    by_page: dict[int, list[str]] = {}
    for r in state["revisions"]:
        by_page.setdefault(r["page_id"], []).append(r["user"])
    pages = [p for p in _articles(state, editable=False) if len(set(by_page.get(p["id"], []))) >= 2
             and len(set(by_page[p["id"]])) != len(by_page[p["id"]])]
    page = rng.choice(pages)
    users = by_page[page["id"]]
    return {"page": _page(page), "n": len(set(users)), "wrong": len(users)}


def who_edited(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    by_page: dict[int, list[dict[str, Any]]] = {}
    for r in state["revisions"]:
        by_page.setdefault(r["page_id"], []).append(r)
    choices = []
    for p in _articles(state, editable=False):
        revs = by_page.get(p["id"], [])
        summaries = [r["summary"] for r in revs]
        for i, r in enumerate(revs[:-1]):
            if r["summary"] and summaries.count(r["summary"]) == 1 and r["user"] != revs[-1]["user"]:
                choices.append((p, r, revs[-1]["user"]))
    page, rev, latest_user = rng.choice(choices)
    return {"page": _page(page), "summary": rev["summary"], "user": rev["user"], "wrong": latest_user}


def talk_section(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    talks = {p["title"]: p for p in state["pages"] if p["namespace"] == 1}
    page = rng.choice([p for p in _articles(state) if f"Talk:{p['title']}" in talks
                       and not talks[f"Talk:{p['title']}"]["protection"]])
    talk = talks[f"Talk:{page['title']}"]
    subject, other = rng.sample(_SUBJECTS, 2)
    message = rng.choice(_MESSAGES)
    regex = (r"^" + re.escape(talk["text"]) + r"\s*==\s*" + re.escape(subject) + r"\s*==\s*" + re.escape(message)
             + r"\s*$")
    return {"page": _page(page), "talk": _page(talk), "subject": subject, "other_subject": other, "message": message,
            "text_regex": regex}


def protect_page(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    page = rng.choice(_articles(state))
    user = rng.choice(_ADMINS)
    return {"page": _page(page), "url_title": page["title"].replace(" ", "_"), "user": user, "password": PASSWORD,
            "logs": _logs(state, page["title"], {"type": "protect", "action": "protect", "user": user})}


def open_talk(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    talks = {p["title"] for p in state["pages"] if p["namespace"] == 1}
    page, other = rng.sample([p for p in _articles(state, editable=False) if f"Talk:{p['title']}" in talks], 2)
    return {"page": _page(page), "other": _page(other)}


def protect_without_rights(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    """An editor without administrator rights asked to protect a page: MediaWiki refuses it."""
    page = rng.choice(_articles(_state(app)))
    return {"page": _page(page), "url_title": page["title"].replace(" ", "_"), "user": rng.choice(_EDITORS),
            "password": PASSWORD, "admin": rng.choice(_ADMINS)}


def category_count(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    """A category and how many pages it lists (pages only, as its page counts them)."""
    counts = {str(r["cat"]).replace("_", " "): int(r["n"]) for r in app.db.all(
        "SELECT cl_to AS cat, count(*) AS n FROM categorylinks WHERE cl_type = 'page' GROUP BY cl_to")}
    category, other = rng.sample(sorted(c for c in counts if c in _CATEGORIES), 2)
    return {"category": category, "url_category": category.replace(" ", "_"), "n": counts[category],
            "wrong": counts[other]}


def who_protected(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    protected = [r for r in state["logs"] if r["type"] == "protect" and r["action"] == "protect"]
    entry = rng.choice(protected)
    page = next(p for p in state["pages"] if p["title"] == entry["title"])
    editors = [r["user"] for r in state["revisions"] if r["page_id"] == page["id"] and r["user"] != entry["user"]]
    return {"page": _page(page), "user": entry["user"], "wrong": editors[0] if editors else "Admin"}


def redirect_target(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    page = rng.choice([p for p in state["pages"] if p["is_redirect"] and p["namespace"] == 0])
    return {"page": _page(page), "target": page["redirect_to"]}


def add_see_also(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    page = rng.choice(_articles(state))
    text = page["text"]
    linked = set(re.findall(r"\[\[([^\]|]+)", text))
    target = rng.choice([p["title"] for p in _articles(state, editable=False) if p["title"] not in linked
                         and p["id"] != page["id"]])
    end = _section_end(text, "See also")
    expected = (r"^" + re.escape(text[:end]) + r"\s*\n\*\s*\[\[\s*" + re.escape(target) + r"\s*\]\]\s*"
                + re.escape(text[end:]) + r"$")
    return {"page": _page(page), "target": target, "expected": expected}


def unwatch_page(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    user = rng.choice(_EDITORS)
    mine = [w for w in state["watched"] if w["user"] == user]
    subjects = [w["title"] for w in mine if not w["title"].startswith(("Talk:", "User talk:", "Category talk:",
                                                                       "Template talk:", "Riverbend Wiki talk:"))]
    title, other = rng.sample(subjects, 2)
    talk = next(w["title"] for w in mine if w["title"].endswith(f":{title}") and w["title"] != title)
    expected = [w for w in mine if w["title"] not in (title, talk)]
    return {"title": title, "other": other, "user": user, "password": PASSWORD, "expected": expected}


def page_creator(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    state = _state(app)
    by_page: dict[int, list[dict[str, Any]]] = {}
    for r in state["revisions"]:
        by_page.setdefault(r["page_id"], []).append(r)
    pages = [p for p in _articles(state, editable=False)
             if by_page[p["id"]][0]["user"] != by_page[p["id"]][-1]["user"]]
    page = rng.choice(pages)
    revs = by_page[page["id"]]
    return {"page": _page(page), "user": revs[0]["user"], "wrong": revs[-1]["user"]}


def _last_section(text: str) -> tuple[int, str]:
    """Where the See also section starts, and its text as the section editor shows it."""
    start = text.index("== See also ==")
    return start, text[start:]


def remove_category(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    """A page in two categories; the one to remove is its neighbourhood category."""
    state = _state(app)
    page = rng.choice([p for p in _articles(state) if len(p["categories"]) == 2])
    drop, keep = page["categories"][1], page["categories"][0]
    text = page["text"]
    start, section = _last_section(text)
    tag = f"[[Category:{drop}]]"
    new_section = section.replace("\n" + tag, "", 1)
    at = text.index("\n" + tag)
    # the text without the tag, whatever blank line its removal leaves
    expected = r"^" + re.escape(text[:at].rstrip()) + r"\s*" + re.escape(text[at + 1 + len(tag):].lstrip()) + r"$"
    return {"page": _page(page), "drop": drop, "keep": keep, "section": new_section,
            "wrong_section": section.replace("\n" + f"[[Category:{keep}]]", "", 1),
            "expected": expected, "categories": [keep]}


def infobox_field(app: MediaWiki, rng: random.Random) -> dict[str, Any]:
    """An infobox value to change: the intro section (section 0) holds the infobox."""
    state = _state(app)
    page = rng.choice([p for p in _articles(state) if re.search(r"^\| (opened|built|founded) = \d{4}$", p["text"], re.M)])
    text = page["text"]
    found = re.search(r"^\| (opened|built|founded) = (\d{4})$", text, re.M)
    assert found is not None
    field, old = found.group(1), found.group(2)
    new = str(int(old) + rng.choice([-7, -3, 2, 5, 11]))
    intro_end = text.index("\n\n== ")
    intro = text[:intro_end]
    new_intro = intro.replace(f"| {field} = {old}", f"| {field} = {new}", 1)
    return {"page": _page(page), "url_title": page["title"].replace(" ", "_"), "field": field, "old": old,
            "new": new, "intro": new_intro, "wrong_intro": intro.replace(f"| {field} = {old}", f"| {field} = {old}0", 1),
            "expected": new_intro + text[intro_end:]}
