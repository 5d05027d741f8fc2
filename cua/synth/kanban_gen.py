"""Templates for the kanban app (tasks/apps/kanban), described for the generator core.

A card is drawn among the top four of its column whose title is unique (visible without
scrolling, named unambiguously), opened from its board, edited in its dialog (`#save-card`),
moved with the dialog's Move form (not by dragging: a generated oracle acts by clicks and
keys alone) and deleted through its confirmation; the selectors are the hand-written kanban
suite's. Its app operations: add a card to a column, count a column's cards.
"""

from __future__ import annotations

from typing import Any

from cua.synth.schema import AppSchema, Description, Entity, Field, select_subgoal, values_sql

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 3  # 2: a move to a column goes to its top, and the judge reads the place
# 3: an edit that ends with a question (ask_chains)
_C = "{c.id}"
_BOARD_CARDS = "boards[id={c.board_id}].columns[*].cards"
#: every other card of the board, column by column, in order: a move or a deletion keeps them where they were
_OTHERS = ("SELECT COALESCE(group_concat(t, ' '), '') AS t FROM (SELECT c.column_id || ':' || c.id AS t FROM cards c "
           "WHERE c.board_id = ? AND c.id != ? ORDER BY (SELECT position FROM columns WHERE id = c.column_id), c.position)")

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("first_column", "AND col.position = (SELECT MIN(position) FROM columns WHERE board_id = c.board_id)"),
    ("later_column", "AND col.position > (SELECT MIN(position) FROM columns WHERE board_id = c.board_id)"),
    ("dated", "AND c.due IS NOT NULL"),
    ("undated", "AND c.due IS NULL"),
    ("tagged", "AND EXISTS (SELECT 1 FROM card_tags t WHERE t.card_id = c.id)"),
    ("assigned", "AND EXISTS (SELECT 1 FROM card_assignees a WHERE a.card_id = c.id)"),
    ("top", "AND c.position = 0"),
)

FIELDS = (
    Field("title", "title", "title",
          values_sql(["Update the onboarding doc", "Fix the login timeout", "Review Q3 roadmap", "Clean up old branches"]),
          lambda p: [{"fill": {"selector": "#card-title", "text": "{" + p + ".v}"}}],
          "SELECT title FROM cards WHERE id = ?", lambda p: {"op": "text", "value": "{" + p + ".v}"},
          (f"cards[id={_C}].title",),
          checkpoint=lambda p: {"check": "the title field holds the new title",
                                "get": {"kind": "dom", "selector": "#card-title", "prop": "value"},
                                "expect": {"op": "text", "value": "{" + p + ".v}"}}),
    Field("due", "due date", "due", values_sql(["2026-03-20", "2026-04-15", "2026-05-04", "2026-06-30"]),
          lambda p: [{"fill": {"selector": "#due", "text": "{" + p + ".v}"}}],
          "SELECT due FROM cards WHERE id = ?", lambda p: {"op": "date", "value": "{" + p + ".v}"},
          (f"cards[id={_C}].due",), shown="due", answer_op="date",
          checkpoint=lambda p: {"check": "the due field holds the new date",
                                "get": {"kind": "dom", "selector": "#due", "prop": "value"},
                                "expect": {"op": "text", "value": "{" + p + ".v}"}}),
    Field("column", "column", "column_id",
          "SELECT id, name AS v FROM columns WHERE board_id = ? AND id NOT IN ({not_in}) ORDER BY position",
          lambda p: [{"select": {"selector": "#move-column", "option": "{" + p + ".v}"}},
                     {"fill": {"selector": "#move-position", "text": "1"}}, {"click": "#move-card"}],
          # the column and the place in it: the top (with the place unjudged, a card alone in its new column
          # could sit at position 1 and pass: judge QA's collateral probe, version 1)
          "SELECT column_id || ':' || position FROM cards WHERE id = ?",
          lambda p: {"op": "equals", "value": "{" + p + ".id}:0"},
          (f"cards[id={_C}].column_id", f"cards[id={_C}].column_name", f"cards[id={_C}].position",
           "cards[board_id={c.board_id}].position", _BOARD_CARDS),
          key="id", commits=True, extra_params=("{c.board_id}",), shown="col", guarded=True,
          phrasings=('Move {label} to the top of the "{value}" column.',
                     'Put {label} first in the "{value}" column.',
                     '{Label} belongs at the top of "{value}": move it there.'),
          checkpoint=lambda p: select_subgoal("#move-column", "{" + p + ".v}")),
)

CARD = Entity(
    name="card", param="c", table="cards", alias="c",
    rows_sql="SELECT c.id, c.title, c.board_id, b.name AS board, c.column_id, col.name AS col, c.position, "
             "COALESCE(c.due, '') AS due FROM cards c JOIN columns col ON col.id = c.column_id "
             "JOIN boards b ON b.id = c.board_id WHERE c.position < 4 "
             "AND c.title NOT IN (SELECT title FROM cards GROUP BY title HAVING COUNT(*) > 1) {where} ORDER BY c.id",
    label='the card "{c.title}" on the {c.board} board',
    open=({"click": 'a.board-tile[href="/b/{c.board_id}"]'}, {"click": '.kcard[data-id="{c.id}"]'}),
    save=({"click": "#save-card"},),
    path="^/b/{c.board_id}(/|$)",
    fields=FIELDS,
    delete=({"click": {"selector": ".kmodal button.danger", "text_contains": "Delete"}}, {"wait_for": "#delete-confirm"},
            {"click": "#delete-confirm"}),
    cancel_delete=({"click": {"selector": ".kmodal button.danger", "text_contains": "Delete"}},
                   {"wait_for": "#delete-confirm"}, {"click": {"selector": "#delete-modal button", "text": "Cancel"}}),
    delete_changes=("cards[board_id={c.board_id}][column_id={c.column_id}].position", _BOARD_CARDS),
    skills=("navigate", "modal"),
    guard_params=(("others", {"type": "rows", "sql": _OTHERS,
                              "params": ["{c.board_id}", "{c.id}"]}),),
    guard_checks=({"check": "every other card stays in its column, in its order",
                   "get": {"kind": "sql", "scalar": True, "query": _OTHERS, "params": ["{c.board_id}", "{c.id}"]},
                   "expect": {"op": "equals", "value": "{others.t}"}},),
)


#: The columns an added card goes to, per scope (the scopes on a card's column; the others have none).
_FIRST = "(SELECT MIN(y.position) FROM columns y WHERE y.board_id = columns.board_id)"
_ADD_WHERE = {"": "", SCOPES[1][1]: f"AND columns.position = {_FIRST}", SCOPES[2][1]: f"AND columns.position > {_FIRST}"}


def add(scope: str) -> dict[str, Any] | None:
    """Create a card in a column (the scope's first or later column); the near miss adds it to another column."""
    where = _ADD_WHERE.get(scope)
    if where is None:
        return None
    return {
        "phrasings": ['Add a card "{title.v}" to the "{col.name}" column of the {col.board} board.',
                      'On the {col.board} board, create a new card "{title.v}" in "{col.name}".',
                      'Put a new card titled "{title.v}" into the {col.name} column ({col.board} board).'],
        "params": {"col": {"type": "rows", "sql": "SELECT columns.id, columns.name, columns.board_id, b.name AS board "
                                                  "FROM columns JOIN boards b ON b.id = columns.board_id "
                                                  f"WHERE 1 = 1 {where} ORDER BY columns.id"},
                   "wrong": {"type": "rows", "sql": "SELECT id, name FROM columns WHERE board_id = ? AND id != ? "
                                                    "ORDER BY position", "params": ["{col.board_id}", "{col.id}"]},
                   "title": {"type": "rows", "sql": values_sql(["Draft the release notes", "Call the vendor back",
                                                                "Book the demo room", "Archive last sprint"]).replace(
                       "{not_in}", "SELECT title FROM cards")}},
        "judge": {"subgoals": [{"check": "the board is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/b/{col.board_id}(/|$)"}}],
                  "checks": [{"check": "the card is in the column, with nothing else on it",
                              "get": {"kind": "sql", "query": "SELECT column_id, description, due, (SELECT COUNT(*) "
                                                              "FROM card_tags t WHERE t.card_id = cards.id) AS tags, "
                                                              "(SELECT COUNT(*) FROM card_assignees a WHERE a.card_id "
                                                              "= cards.id) AS assignees FROM cards WHERE same_text(title, ?)",
                                      "params": ["{title.v}"]},
                              "expect": {"op": "table", "rows": [{"column_id": "{col.id}", "description": "",
                                                                  "due": None, "tags": 0, "assignees": 0}]}},
                             {"check": "on that board, with no tags, people or comments",
                              "get": {"kind": "app_state", "path": "cards[title~={title.v}]"},
                              "expect": {"op": "json_subset", "value": {"board_id": "{col.board_id}", "tags": [],
                                                                        "assignees": [], "comments": []}}}],
                  "expected_changes": ["cards[title~={title.v}]", "boards[id={col.board_id}].columns[*].cards"],
                  "unjudged": {"cards.position": "the app puts a new card at the end of its column; the instruction "
                                                "names no place in it"}},
        "oracle": [{"click": 'a.board-tile[href="/b/{col.board_id}"]'},
                   {"click": '.kcol[data-column-id="{col.id}"] .addcard summary'},
                   {"fill": {"selector": '.kcol[data-column-id="{col.id}"] .addcard textarea', "text": "{title.v}"}},
                   {"click": '.kcol[data-column-id="{col.id}"] .addcard button'}],
        "near_miss": [{"click": 'a.board-tile[href="/b/{col.board_id}"]'},
                      {"click": '.kcol[data-column-id="{wrong.id}"] .addcard summary'},
                      {"fill": {"selector": '.kcol[data-column-id="{wrong.id}"] .addcard textarea', "text": "{title.v}"}},
                      {"click": '.kcol[data-column-id="{wrong.id}"] .addcard button'}],
        "tags": {"skills": ["navigate", "form"], "tier": 2},
    }


_COUNT_WORDS = {"": "", SCOPES[3][1]: "dated ", SCOPES[4][1]: "undated ", SCOPES[5][1]: "tagged ",
                SCOPES[6][1]: "assigned "}


def count(scope: str) -> dict[str, Any] | None:
    """How many cards (of the scope) a column holds; the near miss counts the whole column."""
    if scope not in _COUNT_WORDS:
        return None
    what = _COUNT_WORDS[scope]
    n = "(SELECT COUNT(*) FROM cards c WHERE c.column_id = col.id"
    return {
        "phrasings": [f'How many {what}cards are in the "{{col.name}}" column of the {{col.board}} board? '
                      "Answer with just the number.",
                      f'Count the {what}cards in {{col.name}} on the {{col.board}} board; reply with the number.',
                      f'On the {{col.board}} board, what is the number of {what}cards in "{{col.name}}"? A number only.'],
        "params": {"col": {"type": "rows", "sql": f"SELECT col.id, col.name, col.board_id, b.name AS board, {n} {scope}) "
                                                  f"AS n, {n}) + 1 AS n_wrong FROM columns col JOIN boards b ON "
                                                  "b.id = col.board_id WHERE (SELECT COUNT(*) FROM columns y WHERE "
                                                  "y.board_id = col.board_id AND y.name = col.name) = 1 ORDER BY col.id"}},
        "judge": {"subgoals": [{"check": "the board is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/b/{col.board_id}(/|$)"}}],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{col.n}"}}]},
        "oracle": [{"click": 'a.board-tile[href="/b/{col.board_id}"]'}, {"done": {"answer": "{col.n}"}}],
        "near_miss": [{"click": 'a.board-tile[href="/b/{col.board_id}"]'}, {"done": {"answer": "{col.n_wrong}"}}],
        "tags": {"skills": ["navigate", "read", "count"], "tier": 2},
    }


DESCRIPTION = Description(app="kanban", version=GENERATOR_VERSION, scopes=SCOPES, entities=(CARD,),
                          extra={"add": add, "count": count},
                          test_chains=frozenset({"edit:title+due", "count", "edit:column"}), chain_sizes=(2,),
                          chain_fields=("title", "due"),
                          ask_chains=(("title", "due"),))
SCHEMA: AppSchema = DESCRIPTION.schema()
