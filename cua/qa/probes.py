"""Adversarial end states for judge QA, generated from the oracle's own changes.

The oracle's run tells QA what the task is about: the rows of the app's database that
it changed, added or removed, and the columns it wrote. From that diff (read through the
app's read-only SQL control endpoint, so no sandbox needs a special door) QA builds end
states that a correct judge must FAIL:

- `over_reach`: the oracle's end state plus the same change on a row the oracle left
  alone (a bulk action: "select all", then the change);
- `wrong_target`: the change moved to a sibling record (same parent, same name or same
  table), the target left as it was;
- `collateral`: the oracle's end state with another field of the target damaged;
- `partial`: one of the fields the oracle wrote on an existing row written with another
  value (a compound value judged by one of its parts; the wrong value);
- `duplicate`: every row the oracle added, added a second time;

- `answer_for_method`: every formula the oracle wrote replaced by the value it computes
  (the answer typed where the instruction asked for the method);

and one it must PASS:

- `equivalent`: the oracle's end state with a value it wrote spelled differently (a
  number as "971.00", a phone number grouped otherwise, rich text with other markup,
  a formula with other spacing and case, free text in other case or spacing, a street
  abbreviated, recipients in another order), or link rows added in another order.

Each probe is a list of SQL writes on a copy of the oracle's final database. The copy
lives in an in-process instance of the same bundled app, which answers the judge's
`app_state` and `sql` queries with its own code; a mirror check first proves that the
copy answers exactly as the live app did. Queries of the page (dom, url, title) keep
the oracle's values, since the page is not re-rendered for a probe.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from cua.judges.values.variants import equivalents as typed_equivalents
from cua.qa.db_image import (
    DUMP_PAGE,
    DbDiff,
    DbImage,
    ProbeMirror,
    RowChange,
    TableInfo,
    count_queries,
    dump_queries,
    table_infos,
)

__all__ = [
    "DUMP_PAGE",
    "DbImage",
    "DbDiff",
    "MUST_FAIL",
    "Probe",
    "ProbeMirror",
    "RowChange",
    "TableInfo",
    "answer_for_method",
    "bundled_app_of",
    "bundled_apps_of",
    "bundled_services_of",
    "computed_values",
    "count_queries",
    "dump_queries",
    "equivalent_spellings",
    "generate_probes",
    "table_infos",
]

#: The probes whose end state a correct judge fails.
MUST_FAIL = ("over_reach", "wrong_target", "collateral", "partial", "duplicate", "answer_for_method")
#: Columns an app keeps for itself (timestamps): no agent controls them, so no probe damages them.
_BOOKKEEPING = re.compile(r"^(created|updated|modified|changed|sent|received|joined|last_seen|last_login|viewed|placed|"
                         r"rotated)(_at|_on)?$|_at$")
#: Columns that only order rows on screen; a new row's place is the app's choice.
_ORDER = re.compile(r"^(position|sort|sort_order|rank|ord|order_index|seq)$")
#: At most this many collateral probes per target row.
MAX_COLLATERAL = 6
#: At most this many equivalent-spelling probes per table the oracle changed.
MAX_EQUIVALENT = 4


def bundled_app_of(sandbox_config: dict[str, Any], service: str = "app") -> str | None:
    """The bundled app a sandbox runs as `service`: the app its spec names on the bundled
    app host, or, for a spec without one, the app its argv serves as its own process
    (`python -m cua.tasks.apps.serve NAME`)."""
    for spec in sandbox_config.get("services") or []:
        if spec.get("name") != service:
            continue
        host = spec.get("app_host") or {}
        if host.get("host") == "bundled" and host.get("app"):
            return str(host["app"])
        argv = spec.get("argv") or []
        if len(argv) >= 4 and argv[1:3] == ["-m", "cua.tasks.apps.serve"]:  # a real product adds its options
            return str(argv[3])
    return None


def bundled_services_of(sandbox_config: dict[str, Any]) -> list[tuple[str, str]]:
    """(service, bundled app) of every service of a sandbox that runs one, in the config's
    order: a workflow runs several, and its judge reads every one."""
    names = [str(spec.get("name")) for spec in sandbox_config.get("services") or [] if spec.get("name")]
    return [(name, app) for name in names if (app := bundled_app_of(sandbox_config, name))]


def bundled_apps_of(sandbox_config: dict[str, Any]) -> list[str]:
    """Every bundled app a sandbox runs, its first service's first: a workflow's judge reads
    them all, so a change to any of them must rerun its QA."""
    return list(dict.fromkeys(app for _, app in bundled_services_of(sandbox_config)))


# ---------------------------------------------------------------- probes

@dataclass
class Probe:
    kind: str
    description: str
    #: (sql, params) run in order on the copy of the oracle's final database.
    writes: list[tuple[str, list[Any]]] = field(default_factory=list)


def _where(info: TableInfo, row: dict[str, Any]) -> tuple[str, list[Any]]:
    if info.pk:
        return " AND ".join(f'"{c}" IS ?' for c in info.pk), [row[c] for c in info.pk]
    return "rowid = ?", [row["__rowid"]]


def _update(info: TableInfo, row: dict[str, Any], values: dict[str, Any]) -> tuple[str, list[Any]]:
    where, params = _where(info, row)
    sets = ", ".join(f'"{c}" = ?' for c in values)
    return f'UPDATE "{info.name}" SET {sets} WHERE {where}', [*values.values(), *params]


def _delete(info: TableInfo, row: dict[str, Any]) -> tuple[str, list[Any]]:
    where, params = _where(info, row)
    return f'DELETE FROM "{info.name}" WHERE {where}', params


def _insert(info: TableInfo, row: dict[str, Any]) -> tuple[str, list[Any]]:
    cols = [c for c in info.columns if c in row]
    blob = {c for c, ty in zip(info.columns, info.types) if "BLOB" in ty}
    values = [bytes.fromhex(row[c]) if c in blob and isinstance(row[c], str) else row[c] for c in cols]
    return (f'INSERT INTO "{info.name}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) '
            f'VALUES ({", ".join("?" for _ in cols)})', values)


def _perturbed(value: Any, others: Sequence[Any]) -> Any:
    """A different value of the same kind: another row's value when there is one."""
    for other in others:
        if other != value and other is not None and (value is None or type(other) is type(value)):
            return other
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return 0 if value == 1 else 1 if value == 0 else value + 1
    if isinstance(value, float):
        return value + 1.5
    if isinstance(value, str):
        return value + " (x)" if value else "x"
    if value is None:
        return "x"
    return None


def _siblings(info: TableInfo, image: DbImage, target: dict[str, Any], exclude: set[tuple[Any, ...]],
              rng: random.Random) -> list[dict[str, Any]]:
    """Rows of the target's table the oracle left alone, nearest kin first: same name,
    then same parent (a shared foreign key), then the rest."""
    rows = [r for k, r in image.tables.get(info.name, {}).items() if k not in exclude]
    rng.shuffle(rows)
    names = [c for c in ("name", "title", "subject", "email") if c in info.columns]

    def kin(row: dict[str, Any]) -> int:
        score = 0
        if any(target.get(c) is not None and row.get(c) == target.get(c) for c in names):
            score += 4
        score += sum(1 for c in info.foreign if target.get(c) is not None and row.get(c) == target.get(c))
        return -score

    return sorted(rows, key=kin)


def _values_of(image: DbImage, table: str, column: str, exclude: Any = None) -> list[Any]:
    seen: list[Any] = []
    for row in image.tables.get(table, {}).values():
        v = row.get(column)
        if v != exclude and v not in seen:
            seen.append(v)
    return seen


def _free_columns(info: TableInfo, change: RowChange) -> list[str]:
    """The target's columns a probe may damage: not its key, not the app's bookkeeping."""
    written = set(change.columns) if change.kind == "changed" else set()
    out = []
    for c in info.columns:
        if c in info.pk or c in written or _BOOKKEEPING.search(c):
            continue
        if change.kind == "added" and c in info.assigned:
            continue
        if change.kind == "added" and (c in info.foreign or _ORDER.match(c) or c == "id"):
            continue
        out.append(c)
    return out


def generate_probes(infos: Sequence[TableInfo], initial: DbImage, final: DbImage, diff: DbDiff,
                    seed: int = 0, free: Sequence[str] = ()) -> tuple[list[Probe], dict[str, str]]:
    """The probes for one oracle run, and for each probe kind that has none, why;
    `free`: `table.column` fields the instruction leaves to the agent (never damaged)."""
    rng = random.Random(f"probes#{seed}")
    by_name = {}
    for i in infos:  # a free field is, for the probes, one the app fills
        extra = tuple(f.split(".", 1)[1] for f in free if f.split(".", 1)[0] == i.name)
        by_name[i.name] = TableInfo(i.name, i.columns, i.types, i.pk, i.foreign, i.unique, (*i.assigned, *extra))
    probes: list[Probe] = []
    why: dict[str, str] = {}
    if not diff.changes:
        reason = "the oracle changes no row of the app (an answer or navigation task)"
        return [], {k: reason for k in (*MUST_FAIL, "equivalent")}
    # the subject of the task: the changes of the table with most of them, in order
    subjects = diff.changes

    for kind, make in (("over_reach", _over_reach), ("wrong_target", _wrong_target), ("collateral", _collateral),
                       ("partial", _partial), ("duplicate", _duplicate), ("equivalent", _equivalent)):
        made: list[Probe] = []
        reasons: list[str] = []
        for table in sorted({c.table for c in subjects}):
            info = by_name.get(table)
            if info is None:
                continue
            changes = [c for c in subjects if c.table == table]
            got, reason = make(info, initial, final, diff, changes, rng)
            made += got
            if reason:
                reasons.append(f"{table}: {reason}")
        if made:
            probes += made
        else:
            why[kind] = "; ".join(reasons) or "nothing to change"
    return probes, why


Maker = Any


def _primary(changes: list[RowChange]) -> RowChange:
    """The change a table's probes start from: the row the task is about, not one the app
    renumbered as a consequence (most columns written other than ordering ones)."""
    return max(changes, key=lambda c: (len([k for k in c.columns if not _ORDER.match(k)]), c.kind != "changed",
                                       len(c.columns)))


def _over_reach(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
                rng: random.Random) -> tuple[list[Probe], str]:
    touched = diff.touched(info.name)
    change = _primary(changes)
    target = change.after or change.before or {}
    siblings = _siblings(info, final, target, touched, rng)
    if not siblings:
        return [], "no row the oracle left alone"
    out: list[Probe] = []
    if change.kind == "changed":
        values = {c: change.after[c] for c in change.columns}  # type: ignore[index]
        for sib in siblings:
            if any(sib.get(c) != v for c, v in values.items()):
                out.append(Probe("over_reach", f"also {info.name}{list(info.key(sib))}: {_fmt(values)}",
                                 [_update(info, sib, values)]))
                break
    elif change.kind == "removed":
        sib = siblings[0]
        out.append(Probe("over_reach", f"also delete {info.name}{list(info.key(sib))}", [_delete(info, sib)]))
    else:  # an added row: the bulk action damages an untouched row of the same table
        sib = siblings[0]
        cols = [c for c in info.columns if c not in info.pk and c not in info.foreign and not _BOOKKEEPING.search(c)
                and not _ORDER.match(c) and c not in info.assigned]
        for c in cols:
            new = _perturbed(sib.get(c), _values_of(final, info.name, c, sib.get(c)))
            if new is not None and new != sib.get(c) and not (c in info.unique and new in _values_of(final, info.name, c)):
                out.append(Probe("over_reach", f"also {info.name}{list(info.key(sib))}.{c}: {sib.get(c)!r} -> {new!r}",
                                 [_update(info, sib, {c: new})]))
                break
        # the relation half kept: the addition made, a neighbour of the new row removed
        out.append(Probe("over_reach", f"also delete {info.name}{list(info.key(sib))}", [_delete(info, sib)]))
    return out, "" if out else "no untouched row differs in the changed columns"


def _wrong_target(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
                  rng: random.Random) -> tuple[list[Probe], str]:
    touched = diff.touched(info.name)
    change = _primary(changes)
    if change.kind == "changed":
        assert change.before is not None and change.after is not None
        values = {c: change.after[c] for c in change.columns}
        revert = {c: change.before[c] for c in change.columns}
        for sib in _siblings(info, final, change.before, touched, rng):
            if any(sib.get(c) != v for c, v in values.items()):
                return [Probe("wrong_target", f"the change on {info.name}{list(info.key(sib))} instead of "
                                              f"{change.describe()}: {_fmt(values)}",
                              [_update(info, change.after, revert), _update(info, sib, values)])], ""
        return [], "no sibling row to move the change to"
    if change.kind == "removed":
        assert change.before is not None
        for sib in _siblings(info, final, change.before, touched, rng):
            return [Probe("wrong_target", f"deletes {info.name}{list(info.key(sib))} instead of {change.describe()}",
                          [_insert(info, change.before), _delete(info, sib)])], ""
        return [], "no sibling row to delete instead"
    assert change.after is not None
    parents = [c for c in info.foreign if (c not in info.pk or len(info.pk) > 1) and c not in info.assigned]
    for c in parents:
        others = _values_of(initial, info.name, c, change.after.get(c))
        others = [v for v in others if v is not None]
        if others:
            new = rng.choice(others)
            probe = Probe("wrong_target", f"the new {info.name} row under {c}={new!r} instead of {change.after.get(c)!r}",
                          [_update(info, change.after, {c: new})])
            return [probe], ""
    return [], "the added row has no parent to move it to"


def _collateral(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
                rng: random.Random) -> tuple[list[Probe], str]:
    out: list[Probe] = []
    for change in changes:
        if change.kind == "removed" or change.after is None:
            continue
        row = change.after
        for c in _free_columns(info, change):
            new = _perturbed(row.get(c), _values_of(final, info.name, c, row.get(c)))
            if new is None or new == row.get(c):
                continue
            if c in info.unique and new in _values_of(final, info.name, c):
                new = f"{row.get(c)} (x)" if isinstance(row.get(c), str) else None
                if new is None:
                    continue
            out.append(Probe("collateral", f"{change.describe()}.{c}: {row.get(c)!r} -> {new!r}",
                             [_update(info, row, {c: new})]))
            if len(out) >= MAX_COLLATERAL:
                return out, ""
        if out:
            break  # one target row is enough
    return out, "" if out else "the target row has no other field"


def _partial(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
             rng: random.Random) -> tuple[list[Probe], str]:
    out: list[Probe] = []
    for change in changes:
        if change.kind != "changed" or change.after is None or change.before is None:
            continue
        written = [c for c in change.columns if not _BOOKKEEPING.search(c) and not _ORDER.match(c)
                   and c not in info.assigned]
        for c in written:
            before, after = change.before.get(c), change.after.get(c)
            others = [v for v in _values_of(final, info.name, c, after) if v != before]
            new = _perturbed(after, others)
            if new is None or new == after or new == before:
                continue  # leaving a field undone is what the prefix probe tries
            if c in info.unique and new in _values_of(final, info.name, c):
                continue
            out.append(Probe("partial", f"{change.describe()}.{c} written {new!r} instead of {after!r}",
                             [_update(info, change.after, {c: new})]))
            if len(out) >= MAX_COLLATERAL:
                return out, ""
        if out:
            break
    return out, "" if out else "no field of an existing row is written with a value that has an alternative"


def _duplicate(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
               rng: random.Random) -> tuple[list[Probe], str]:
    added = [c for c in changes if c.kind == "added" and c.after is not None]
    if not added:
        return [], "adds no row"
    if info.pk and len(info.pk) > 1:
        return [], "its primary key admits one copy"
    writes = []
    for change in added:
        assert change.after is not None
        row = {k: v for k, v in change.after.items() if k != "__rowid" and k not in info.pk}
        for c in info.unique:
            if c in row and isinstance(row[c], str):
                return [], f"column {c} is unique: the schema admits one copy"
        writes.append(_insert(info, row))
    return [Probe("duplicate", f"{len(added)} new {info.name} row(s) added twice", writes)], ""


_NUMBER = re.compile(r"^-?\d+(\.\d+)?$")
#: Columns that hold a quantity typed as text (a spreadsheet cell, an amount): "971" and
#: "971.00" are the same there. A digit string elsewhere (a card's last four, a zip code,
#: a setting the app writes itself) is a code, not a number.
_QUANTITY = re.compile(r"^(raw|amount|price|cost|budget|total|salary|fee|balance|quantity|qty|estimate|score_text)$")
_PHONE = re.compile(r"^\+?[\d\s().-]{7,}$")
_TAG = re.compile(r"<(/?)(b|strong|i|em|p|div)>")
#: Columns of short free text a person types (a title, a name, a subject): case and
#: inner whitespace are how it is written, not what it says. Choices (a priority, a
#: status, a colour), codes and keys are not free text: "High" may not be the app's
#: "high"; nor is a message or note body, whose case is its content.
_FREE_TEXT = re.compile(r"^(title|name|subject|description|notes|location|first_name|last_name|holder|ship_name|"
                        r"org_name|display_name|full_name)$")
#: Columns holding a street address (spelled "12 Oak Street" or "12 Oak St").
_STREET = re.compile(r"^(ship_)?(street|address|address1|street_address|addr)$")
#: Columns holding a comma-separated list of recipients: their order is free.
_RECIPIENTS = re.compile(r"^(to|cc|bcc)(_addrs|_emails|_list)?$")
#: Street words and their usual abbreviations (one direction each way).
_STREET_WORDS = {"street": "St", "avenue": "Ave", "road": "Rd", "boulevard": "Blvd", "drive": "Dr", "lane": "Ln",
                 "court": "Ct", "place": "Pl", "square": "Sq", "highway": "Hwy", "parkway": "Pkwy", "suite": "Ste",
                 "apartment": "Apt", "north": "N", "south": "S", "east": "E", "west": "W"}
_STREET_ABBR = {v.lower(): k.capitalize() for k, v in _STREET_WORDS.items()}


def _street_respelled(value: str) -> str:
    """Abbreviations spelled out and full words abbreviated ("12 Oak Street" <-> "12 Oak St.")."""
    def swap(m: re.Match[str]) -> str:
        word = m[0]
        low = word.lower().rstrip(".")
        if low in _STREET_WORDS:
            return _STREET_WORDS[low] + "."
        if low in _STREET_ABBR:
            return _STREET_ABBR[low]
        return word
    return re.sub(r"[A-Za-z]+\.?", swap, value)


#: A line of wikitext that is a heading (MediaWiki's, Trac's, DokuWiki's: "= Title =", "== History =="):
#: text that starts with "=" and is no formula.
_WIKI_HEADING = re.compile(r"=+[ \t]*[^=\n]+?[ \t]*=+[ \t]*$")


def equivalent_spellings(column: str, value: Any, rich: bool = False) -> list[tuple[str, Any]]:
    """Other ways to write `value` that mean the same, with what each shows. Every one is
    an end state an agent can reach through the app (apps trim what is typed, so the
    whitespace variant changes only the inside of the text). `rich`: the column holds
    rich text (HTML the app shows formatted), so plain text there is also a paragraph."""
    if not isinstance(value, str) or not value.strip():
        return []
    col = column.lower()
    out: list[tuple[str, Any]] = []
    # a formula: case and spacing do not change it (wikitext that opens with a heading, "= Title =" or
    # "== History ==", is none, nor is any text of several lines)
    if value.startswith("=") and len(value) > 1 and "\n" not in value and not _WIKI_HEADING.match(value):
        spaced = re.sub(r"([,+*/()-])", r" \1 ", value[1:]).strip()
        out.append(("formula in lower case, spaced", "=" + re.sub(r"\s+", " ", spaced).lower()))
    elif (_QUANTITY.match(col) and _NUMBER.match(value)
          and not (len(value) > 1 and value.lstrip("-").startswith("0") and "." not in value)):
        number = float(value)
        two = f"{number:.2f}"
        out.append(("the number written with other decimals", two if two != value else f"{number:f}".rstrip("0").rstrip(".")))
    elif "phone" in col and _PHONE.match(value) and sum(ch.isdigit() for ch in value) >= 7:
        digits = "".join(ch for ch in value if ch.isdigit())
        plus = "+" if value.strip().startswith("+") else ""
        head, tail = digits[:-7], digits[-7:]
        regrouped = f"{plus}{head + '.' if head else ''}{tail[:3]}.{tail[3:]}"
        out.append(("phone grouped differently", regrouped))
    elif "<" in value and _TAG.search(value):
        swap = {"b": "strong", "strong": "b", "i": "em", "em": "i"}
        rewritten = _TAG.sub(lambda m: f"<{m[1]}{swap.get(m[2], m[2])}>", value)
        rewritten = re.sub(r"</(p|div|li|h[1-3])>", r"</\1>\n", rewritten)
        out.append(("the same rich text in other markup", rewritten))
        plain = re.fullmatch(r"\s*<(p|div)>([^<>]*)</\1>\s*", value)
        if plain:
            out.append(("the same paragraph as plain text", plain[2]))
    elif rich and "<" not in value and "\n" not in value:
        out.append(("the same text as a rich-text paragraph", f"<p>{value}</p>"))
    elif _STREET.match(col) and re.search(r"[A-Za-z]", value):
        out.append(("the address with abbreviations spelled differently", _street_respelled(value)))
    elif ("email" in col or _RECIPIENTS.match(col)) and value.count("@") == 1:  # an address: its case is free
        out += [(f"the email address {what}", v) for what, v in typed_equivalents("email", value)[:1]]
    elif _RECIPIENTS.match(col) and "," in value:
        parts = [p.strip() for p in value.split(",") if p.strip()]
        out.append(("the recipients in another order", ", ".join(reversed(parts))))
    # Free text in other letter case is not the same end state: the app shows it as stored
    # ("WEEKLY PLAN" is another title), and stored text is judged with its case.
    if _FREE_TEXT.match(col) and re.search(r"[A-Za-z]", value) and "<" not in value:
        if " " in value.strip():
            out.append(("the free text with doubled inner spaces", re.sub(r"(?<=\S) (?=\S)", "  ", value)))
    return [(w, v) for w, v in out if v != value]


def _holds_rich_text(image: DbImage, table: str, column: str) -> bool:
    """Whether a column holds rich text: the app's own rows there carry markup."""
    return any(isinstance(v, str) and _TAG.search(v) for v in _values_of(image, table, column))


def _equivalent(info: TableInfo, initial: DbImage, final: DbImage, diff: DbDiff, changes: list[RowChange],
                rng: random.Random) -> tuple[list[Probe], str]:
    """One probe per kind of respelling (case, spacing, number, phone, markup, ...) that a
    value the oracle wrote admits, on the change the task is about first."""
    out: list[Probe] = []
    kinds: set[str] = set()
    primary = _primary(changes)
    for change in sorted(changes, key=lambda c: c is not primary):
        if change.after is None:
            continue
        for c in change.columns:
            if c in info.pk or c in info.assigned or _BOOKKEEPING.search(c):
                continue
            for what, new in equivalent_spellings(c, change.after.get(c), _holds_rich_text(initial, info.name, c)):
                if what in kinds:
                    continue
                kinds.add(what)
                out.append(Probe("equivalent", f"{change.describe()}.{c}: {change.after.get(c)!r} -> {new!r} ({what})",
                                 [_update(info, change.after, {c: new})]))
                if len(out) >= MAX_EQUIVALENT:
                    return out, ""
    reordered = _reordered(info, changes)
    if reordered is not None and len(out) < MAX_EQUIVALENT:
        out.append(reordered)
    return out, "" if out else "no value the oracle wrote has another spelling (flags, ids, choices, codes)"


def _reordered(info: TableInfo, changes: list[RowChange]) -> Probe | None:
    """The rows the oracle added to a link table (a compound key and no id: tags of a
    contact, labels of a message), added in the opposite order: which one came first is
    no part of the end state."""
    added = [c.after for c in changes if c.kind == "added" and c.after is not None]
    if len(added) < 2 or len(info.pk) < 2 or "id" in info.columns:
        return None
    writes = [_delete(info, row) for row in added]
    writes += [_insert(info, {k: v for k, v in row.items() if k != "__rowid"}) for row in reversed(added)]
    return Probe("equivalent", f"{len(added)} new {info.name} rows added in the opposite order (order is free)", writes)


def computed_values(state: Any) -> dict[str, Any]:
    """What each formula in an app's state computes: every `{"raw": "=...", "value": v}`
    pair (a spreadsheet cell as the app shows it), formula text -> value."""
    out: dict[str, Any] = {}
    if isinstance(state, dict):
        raw = state.get("raw")
        if isinstance(raw, str) and raw.startswith("=") and "value" in state:
            out.setdefault(raw, state["value"])
        for v in state.values():
            for k, val in computed_values(v).items():
                out.setdefault(k, val)
    elif isinstance(state, list):
        for v in state:
            for k, val in computed_values(v).items():
                out.setdefault(k, val)
    return out


def answer_for_method(infos: Sequence[TableInfo], diff: DbDiff, computed: dict[str, Any]) -> list[Probe]:
    """Every formula the oracle wrote (a text value starting with "=") replaced by the
    value it computes, typed as a constant: one probe with all of them (the agent that
    did the sums itself), and one per formula when there are several."""
    by_name = {i.name: i for i in infos}
    writes: list[tuple[str, list[Any]]] = []
    names: list[str] = []
    for change in diff.changes:
        info = by_name.get(change.table)
        if change.after is None or info is None:
            continue
        for c in change.columns:
            raw = change.after.get(c)
            if not (isinstance(raw, str) and raw.startswith("=") and raw in computed):
                continue
            value = computed[raw]
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if value is None or isinstance(value, (dict, list)) or str(value).startswith("#"):
                continue  # an error value: nothing an agent would type
            writes.append(_update(info, change.after, {c: str(value)}))
            names.append(f"{change.describe()}.{c}: {raw!r} -> {str(value)!r}")
    if not writes:
        return []
    out = [Probe("answer_for_method", "formulas typed as their values: " + "; ".join(names)[:300], writes)]
    if len(writes) > 1:
        out += [Probe("answer_for_method", f"the formula typed as its value: {n}", [w]) for n, w in zip(names, writes)]
    return out


def _fmt(values: dict[str, Any]) -> str:
    text = ", ".join(f"{k}={v!r}" for k, v in values.items())
    return text if len(text) <= 100 else text[:97] + "..."
