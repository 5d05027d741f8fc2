"""The seeded content of the MediaWiki product: a community wiki about a fictional river
town, Riverbend, written as a plan of actions that MediaWiki's own code carries out
(`seed.php`: users made and promoted, edits, moves, deletions, protections, watches), so
every table -- revisions, recent changes, the logs, category and link tables -- is what
the product itself writes.

`plan(seed)` is deterministic: the same seed gives the same plan, byte for byte, and the
same wiki. All names are invented; no text is copied from anywhere.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BASE_TIME", "PASSWORD", "Plan", "plan"]

#: The wiki's history starts here; each action is a few minutes to hours after the last.
BASE_TIME = dt.datetime(2025, 1, 6, 9, 0, 0, tzinfo=dt.timezone.utc)
#: Every seeded user's password (the tasks tell it to the agent where one must log in).
PASSWORD = "riverbend-2026"

_HOODS = ["Old Harbour", "Millbrook", "Cedar Heights", "Fennick Hill", "Lower Quay", "Brightwater", "Ashgrove",
          "Kingsmead", "Saltmarsh", "Hollins End", "Westbury", "North Ferry", "Tanner's Row", "Greystone"]
_SURNAMES = ["Fennick", "Albright", "Cardew", "Oduya", "Marchetti", "Thorne", "Halloran", "Voss", "Pemberton",
             "Ashcombe", "Delacroix", "Mbeki", "Lindqvist", "Okonkwo", "Harrow", "Quill", "Sato", "Brennan",
             "Castellane", "Rowe", "Iverson", "Kettering", "Nakamura", "Ellery", "Stroud", "Varga"]
_FIRST = ["Ada", "Tobias", "Miriam", "Edwin", "Leonora", "Silas", "Harriet", "Cornelius", "Beatrix", "Amos",
          "Florence", "Jasper", "Winifred", "Ezra", "Clara", "Ambrose", "Josephine", "Rufus"]
_TREES = ["Oak", "Willow", "Alder", "Rowan", "Elm", "Hazel", "Linden", "Birch", "Juniper", "Chestnut"]
_ADJ = ["Copper", "Blue", "Crooked", "Golden", "Silver", "Painted", "Quiet", "Salty", "Red", "Lantern"]
_NOUN = ["Kettle", "Anchor", "Heron", "Lantern", "Spoon", "Otter", "Barrel", "Compass", "Fig", "Sparrow"]
_FOODS = ["seafood", "Sichuan cooking", "wood-fired pizza", "Ethiopian dishes", "vegetarian food", "Basque tapas",
          "Korean barbecue", "Lebanese mezze", "fish and chips", "Oaxacan food"]
_FACILITIES = ["a bandstand", "tennis courts", "a splash pad", "a community orchard", "a skate park",
               "a dog run", "public toilets", "a café in the old lodge", "a wildflower meadow", "a rowing jetty"]
_EVENTS_KIND = ["Lantern Walk", "River Regatta", "Food Market", "Jazz Weekend", "Book Fair", "Harvest Fair",
                "Open Studios", "Kite Day"]

#: (name, groups, what they usually do)
USERS: list[tuple[str, list[str]]] = [
    ("Elena Ruiz", ["sysop", "bureaucrat"]), ("Tom Whitaker", ["sysop"]), ("Priya Natarajan", []),
    ("Jonas Berg", []), ("Aiko Tanaka", []), ("Samuel Okafor", []), ("Grace Liu", []),
    ("Marek Novak", []), ("Harbour Bot", ["bot"]), ("Quickfix 77", []), ("Lena Fischer", ["sysop"]),
]
_EDITORS = ["Elena Ruiz", "Tom Whitaker", "Priya Natarajan", "Jonas Berg", "Aiko Tanaka", "Samuel Okafor",
            "Grace Liu", "Marek Novak", "Lena Fischer"]
_VANDALS = ["Quickfix 77", "Marek Novak"]
_VANDAL_TEXT = ["THIS TOWN IS BORING LOL", "u all smell", "Buy cheap watches at the pier!!!",
                "nothing to see here", "asdfghjkl", "DELETED BECAUSE WRONG"]

_SUMMARIES_NEW = ["New page", "Start article", "Created page with basic facts", "Stub for now"]
_SUMMARIES_EXPAND = ["Expanded history section", "Added details from the town archive", "More on facilities",
                     "Copyedit and expansion", "Added see also links"]
_SUMMARIES_FIX = ["Typo", "fix link", "Categorised", "Minor wording", "Tidy infobox"]


@dataclass
class Plan:
    seed: int
    users: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "users": self.users, "actions": self.actions}


class _Clock:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.now = BASE_TIME

    def tick(self) -> int:
        self.now += dt.timedelta(minutes=self.rng.randint(7, 600))
        return int(self.now.timestamp())


def _sentence_pool(name: str, hood: str, rng: random.Random) -> list[str]:
    year = rng.randint(1840, 1990)
    return [
        f"The first records of {name} date from {year}, when the land was still used for grazing.",
        f"Local historian {rng.choice(_FIRST)} {rng.choice(_SURNAMES)} wrote that {name} was rebuilt after the flood of 1887.",
        f"By {year + rng.randint(5, 30)} the site had become a favourite meeting place for people from {hood}.",
        f"A volunteer group, the Friends of {name}, has looked after it since {rng.randint(1995, 2020)}.",
        f"The {rng.choice(_TREES).lower()} trees along its edge were planted by schoolchildren in {rng.randint(1950, 2010)}.",
        f"In {rng.randint(1960, 2015)} the town council renovated {name} at a cost of about "
        f"{rng.randint(2, 90) * 10000:,} pounds.",
        f"Residents of {hood} still call it by its old nickname, \"the {rng.choice(_NOUN).lower()}\".",
    ]


def _infobox(kind: str, name: str, fields: dict[str, str]) -> str:
    lines = [f"{{{{Infobox {kind}", f"| name = {name}"] + [f"| {k} = {v}" for k, v in fields.items()] + ["}}"]
    return "\n".join(lines)


def _article(kind: str, name: str, hood: str, rng: random.Random, see_also: list[str],
             categories: list[str]) -> tuple[str, str, str]:
    """(stub text, full text, full text with a fix): three revisions of one article."""
    pool = _sentence_pool(name, hood, rng)
    rng.shuffle(pool)
    if kind == "park":
        box = _infobox("place", name, {"type": "Park", "area": f"{rng.randint(5, 300) / 10} ha",
                                       "opened": str(rng.randint(1870, 1990)), "neighbourhood": f"[[{hood}]]"})
        lead = f"'''{name}''' is a public park in the [[{hood}]] neighbourhood of Riverbend."
        extra = ("Facilities", f"The park has {rng.choice(_FACILITIES)} and {rng.choice(_FACILITIES)}.")
    elif kind == "restaurant":
        box = _infobox("business", name, {"type": "Restaurant", "cuisine": rng.choice(_FOODS),
                                          "founded": str(rng.randint(1965, 2022)), "neighbourhood": f"[[{hood}]]"})
        lead = f"'''{name}''' is a restaurant in [[{hood}]] known for its {rng.choice(_FOODS)}."
        extra = ("Menu", f"Its best-known dish is the {rng.choice(_ADJ).lower()} {rng.choice(_NOUN).lower()} platter, "
                         f"served on {rng.choice(['Fridays', 'weekends', 'market days'])}.")
    elif kind == "building":
        box = _infobox("place", name, {"type": "Historic building", "built": str(rng.randint(1700, 1920)),
                                       "neighbourhood": f"[[{hood}]]", "listed": rng.choice(["Grade I", "Grade II"])})
        lead = f"'''{name}''' is a historic building in [[{hood}]], Riverbend."
        extra = ("Architecture", f"It is built of {rng.choice(['red brick', 'grey limestone', 'timber', 'flint'])} "
                                 f"with a {rng.choice(['slate', 'thatched', 'copper', 'tiled'])} roof.")
    elif kind == "person":
        born = rng.randint(1790, 1950)
        box = _infobox("person", name, {"born": str(born), "died": str(born + rng.randint(40, 90)),
                                        "occupation": rng.choice(["engineer", "mayor", "painter", "ferryman",
                                                                  "teacher", "brewer", "botanist"])})
        lead = f"'''{name}''' ({born}–) was a resident of [[{hood}]] remembered in Riverbend's local history."
        extra = ("Legacy", f"A plaque on {rng.choice(_SURNAMES)} Street marks the house where {name.split()[0]} lived.")
    elif kind == "event":
        box = _infobox("event", name, {"first held": str(rng.randint(1950, 2020)),
                                       "month": rng.choice(["May", "June", "August", "October"]),
                                       "venue": f"[[{hood}]]"})
        lead = f"The '''{name}''' is a yearly event held in [[{hood}]]."
        extra = ("Programme", f"It draws about {rng.randint(2, 40) * 500:,} visitors over {rng.randint(1, 4)} days.")
    else:  # neighbourhood
        box = _infobox("place", name, {"type": "Neighbourhood", "population": f"{rng.randint(8, 140) * 100:,}",
                                       "postcode": f"RB{rng.randint(1, 19)}"})
        bank = rng.choice(["north", "south", "east", "west"])
        lead = f"'''{name}''' is a neighbourhood of Riverbend on the {bank} bank of the river."
        extra = ("Transport", f"Bus routes {rng.randint(1, 12)} and {rng.randint(13, 30)} stop on its high street.")
    history = " ".join(pool[:2])
    history_more = " ".join(pool[2:4])
    cats = "\n".join(f"[[Category:{c}]]" for c in categories)
    links = "\n".join(f"* [[{s}]]" for s in see_also)
    stub = f"{{{{Stub}}}}\n{box}\n{lead}\n\n== History ==\n{history}\n\n[[Category:{categories[0]}]]"
    full = (f"{box}\n{lead} {pool[4]}\n\n== History ==\n{history}\n\n{history_more}\n\n"
            f"== {extra[0]} ==\n{extra[1]} {pool[5]}\n\n== See also ==\n{links}\n\n{cats}")
    fixed = full.replace(pool[5], pool[6], 1) if rng.random() < 0.5 else full + ""
    return stub, full, fixed


_TEMPLATES = {
    "Template:Infobox place": (
        '{| class="infobox" style="float:right; border:1px solid #aaa; background:#f8f9fa; margin:0 0 1em 1em; '
        'padding:0.3em; width:22em"\n|+ \'\'\'{{{name|{{PAGENAME}}}}}\'\'\'\n|-\n! Type\n| {{{type|}}}\n|-\n'
        '{{#if:{{{neighbourhood|}}}|! Neighbourhood\n{{!}} {{{neighbourhood}}}\n{{!-}}\n}}'
        '! Details\n| {{{area|}}}{{{opened|}}}{{{built|}}}{{{population|}}} {{{listed|}}}\n|}<noinclude>\n'
        'Infobox for places in Riverbend. [[Category:Infobox templates]]</noinclude>'),
    "Template:Infobox business": (
        '{| class="infobox" style="float:right; border:1px solid #aaa; background:#fdf6e3; width:22em"\n'
        '|+ \'\'\'{{{name|{{PAGENAME}}}}}\'\'\'\n|-\n! Type\n| {{{type|}}}\n|-\n! Cuisine\n| {{{cuisine|}}}\n|-\n'
        '! Founded\n| {{{founded|}}}\n|}<noinclude>[[Category:Infobox templates]]</noinclude>'),
    "Template:Infobox person": (
        '{| class="infobox" style="float:right; border:1px solid #aaa; width:20em"\n|+ \'\'\'{{{name}}}\'\'\'\n'
        '|-\n! Born\n| {{{born|}}}\n|-\n! Died\n| {{{died|}}}\n|-\n! Occupation\n| {{{occupation|}}}\n|}'
        '<noinclude>[[Category:Infobox templates]]</noinclude>'),
    "Template:Infobox event": (
        '{| class="infobox" style="float:right; border:1px solid #aaa; width:20em"\n|+ \'\'\'{{{name}}}\'\'\'\n'
        '|-\n! First held\n| {{{first held|}}}\n|-\n! Month\n| {{{month|}}}\n|-\n! Venue\n| {{{venue|}}}\n|}'
        '<noinclude>[[Category:Infobox templates]]</noinclude>'),
    "Template:Stub": (
        "''This article is a stub. You can help Riverbend Wiki by expanding it.''"
        "<includeonly>[[Category:Stubs]]</includeonly>"),
    "Template:Citation needed": "<sup>[''citation needed'']</sup>",
}

_CATEGORY_TEXT = {
    "Parks": "Public parks, gardens and commons of Riverbend.",
    "Restaurants": "Places to eat in Riverbend.",
    "Historic buildings": "Listed and otherwise notable old buildings.",
    "People": "People from Riverbend's history.",
    "Events": "Yearly events and festivals.",
    "Neighbourhoods": "The neighbourhoods of Riverbend.",
    "Stubs": "Articles that need expanding.",
    "Infobox templates": "Templates that draw an infobox.",
}


def _names(rng: random.Random) -> dict[str, list[str]]:
    used: set[str] = set(_HOODS)

    def unique(make: Any, n: int) -> list[str]:
        out: list[str] = []
        while len(out) < n:
            name = make()
            if name not in used:
                used.add(name)
                out.append(name)
        return out

    return {
        "neighbourhood": list(_HOODS),
        "park": unique(lambda: f"{rng.choice(_SURNAMES + _TREES)} {rng.choice(['Park', 'Gardens', 'Common', 'Green'])}", 24),
        "restaurant": unique(lambda: rng.choice([f"The {rng.choice(_ADJ)} {rng.choice(_NOUN)}",
                                                 f"{rng.choice(_SURNAMES)}'s Kitchen",
                                                 f"Café {rng.choice(_TREES)}"]), 30),
        "building": unique(lambda: rng.choice([f"{rng.choice(_SURNAMES)} Mill", f"{rng.choice(_TREES)} Chapel",
                                               f"Old {rng.choice(_NOUN)} House", f"{rng.choice(_SURNAMES)} Hall"]), 26),
        "person": unique(lambda: f"{rng.choice(_FIRST)} {rng.choice(_SURNAMES)}", 30),
        "event": unique(lambda: f"{rng.choice(_HOODS)} {rng.choice(_EVENTS_KIND)}", 20),
    }


_CATEGORY_OF = {"park": "Parks", "restaurant": "Restaurants", "building": "Historic buildings", "person": "People",
                "event": "Events", "neighbourhood": "Neighbourhoods"}


def plan(seed: int) -> Plan:
    """The whole seeded history of the wiki for `seed`."""
    rng = random.Random(f"mediawiki#{seed}")
    clock = _Clock(rng)
    out = Plan(seed)
    for name, groups in USERS:
        out.users.append({"name": name, "groups": groups, "time": clock.tick()})

    def act(op: str, **kw: Any) -> None:
        out.actions.append({"op": op, "time": clock.tick(), **kw})

    for title, text in _TEMPLATES.items():
        act("edit", user="Elena Ruiz", title=title, text=text, summary="Create template", minor=False)
    for cat, text in _CATEGORY_TEXT.items():
        act("edit", user=rng.choice(_EDITORS), title=f"Category:{cat}", text=text, summary="Describe category",
            minor=False)
    act("edit", user="Elena Ruiz", title="Main Page", summary="Welcome text", minor=False,
        text="'''Welcome to Riverbend Wiki''', the community encyclopedia of the town of Riverbend.\n\n"
             "== Browse ==\n" + "\n".join(f"* [[:Category:{c}]]" for c in _CATEGORY_OF.values()) +
             "\n\n== Help ==\nRead the [[Riverbend Wiki:Style guide|style guide]] before editing.")
    act("edit", user="Tom Whitaker", title="Riverbend Wiki:Style guide", summary="Guide", minor=False,
        text="== Style guide ==\nUse British spelling. Put every article in at least one category.\n\n"
             "== Vandalism ==\nRevert vandalism to the last good revision and warn the user on their talk page.")
    names = _names(rng)
    articles: list[tuple[str, str]] = []  # (kind, title)
    texts: dict[str, str] = {}
    for kind, titles in names.items():
        for title in titles:
            articles.append((kind, title))
    rng.shuffle(articles)
    all_titles = [t for _, t in articles]
    for kind, title in articles:
        hood = title if kind == "neighbourhood" else rng.choice(_HOODS)
        see = rng.sample([t for t in all_titles if t != title], 2)
        cats = [_CATEGORY_OF[kind]] + ([hood] if kind != "neighbourhood" and rng.random() < 0.3 else [])
        stub, full, fixed = _article(kind, title, hood, rng, see, cats)
        first = rng.choice(_EDITORS)
        act("edit", user=first, title=title, text=stub, summary=rng.choice(_SUMMARIES_NEW), minor=False)
        texts[title] = stub
        if rng.random() < 0.8:
            act("edit", user=rng.choice(_EDITORS), title=title, text=full, summary=rng.choice(_SUMMARIES_EXPAND),
                minor=False)
            texts[title] = full
            if rng.random() < 0.4 and fixed != full:
                act("edit", user=rng.choice(_EDITORS), title=title, text=fixed, summary=rng.choice(_SUMMARIES_FIX),
                    minor=True)
                texts[title] = fixed
        if rng.random() < 0.18:  # a talk page
            who = rng.sample(_EDITORS, 2)
            act("edit", user=who[0], title=f"Talk:{title}", summary="New section", minor=False,
                text=f"== Sources ==\nDoes anyone have a source for the dates in the history section? "
                     f"[[User:{who[0]}|{who[0]}]] 10:{rng.randint(10, 59)}, {rng.randint(1, 28)} March 2025 (UTC)\n"
                     f":I found them in the town archive, box {rng.randint(1, 80)}. "
                     f"[[User:{who[1]}|{who[1]}]] 12:{rng.randint(10, 59)}, {rng.randint(1, 28)} March 2025 (UTC)")
    # vandalism, reverted (the revert restores the text exactly)
    expanded = [t for _, t in articles if "== See also ==" in texts[t]]
    reverted = rng.sample(expanded, 8)
    for title in reverted:
        act("edit", user=rng.choice(_VANDALS), title=title, minor=False, summary="",
            text=texts[title].replace("== History ==", f"{rng.choice(_VANDAL_TEXT)}\n\n== History ==", 1))
        act("edit", user=rng.choice(["Elena Ruiz", "Tom Whitaker", "Lena Fischer"]), title=title, text=texts[title],
            summary="Reverted vandalism", minor=True)
    # vandalism nobody has reverted yet (the last revision of these pages)
    for title in rng.sample([t for t in expanded if t not in reverted], 4):
        act("edit", user=rng.choice(_VANDALS), title=title, minor=False, summary=rng.choice(["", "update", "fix"]),
            text=texts[title].replace("== History ==", f"{rng.choice(_VANDAL_TEXT)}\n\n== History ==", 1))
    # redirects, moves, deletions, protections
    for kind, title in rng.sample(articles, 14):
        if " " in title and kind != "person":
            short = title.replace("The ", "").replace(" Park", "").replace("'s Kitchen", "")
            if short != title and short not in all_titles:
                act("edit", user=rng.choice(_EDITORS), title=short, text=f"#REDIRECT [[{title}]]",
                    summary="Redirect", minor=False)
                all_titles.append(short)
    movable = [t for k, t in articles if k == "restaurant"]
    for old in rng.sample(movable, 3):
        new = f"{old} (restaurant)"
        act("move", user=rng.choice(["Elena Ruiz", "Tom Whitaker"]), title=old, to=new,
            reason="Disambiguate from the street of the same name", redirect=True)
        all_titles[all_titles.index(old)] = new
    for i in range(3):
        gone = f"{rng.choice(_ADJ)} {rng.choice(_NOUN)} Pub {i + 1}"
        act("edit", user=rng.choice(_VANDALS), title=gone, text="best pub ever!!! come drink", summary="", minor=False)
        act("delete", user="Lena Fischer", title=gone, reason="Spam: no content about Riverbend")
    for title in rng.sample([t for k, t in articles if k in ("neighbourhood", "building")], 4):
        act("protect", user="Elena Ruiz", title=title, edit="autoconfirmed", move="sysop",
            reason="Persistent vandalism")
    for name, _ in USERS[:8]:
        for title in rng.sample([t for t in all_titles], 4):
            act("watch", user=name, title=title)
        act("edit", user=name, title=f"User:{name}", summary="About me", minor=False,
            text=f"I am {name.split()[0]}, a Riverbend resident. I mostly edit pages about "
                 f"{rng.choice(list(_CATEGORY_TEXT))[:-1].lower()}s.")
    return out
