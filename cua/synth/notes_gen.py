"""Templates for the notes app (tasks/apps/notes), described for the generator core.

A note is drawn among those whose title is unique (the search finds one), opened through
Search, renamed in its title field (saved by `#save`), moved with its Move form, pinned
with its Pin button and deleted through its confirmation; the selectors are the hand-written
notes suite's. Its app operations: pin a note, count the notes of a folder.
"""

from __future__ import annotations

from typing import Any

from cua.synth.schema import AppSchema, Description, Entity, Field, select_subgoal, values_sql

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 2  # 2: an edit that ends with a question (ask_chains)
_N = "{note.id}"

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("pinned", "AND n.pinned = 1"),
    ("unpinned", "AND n.pinned = 0"),
    ("top_folder", "AND f.parent_id IS NULL"),
    ("subfolder", "AND f.parent_id IS NOT NULL"),
    ("edited", "AND substr(n.updated, 1, 10) != substr(n.created, 1, 10)"),
    ("unedited", "AND substr(n.updated, 1, 10) = substr(n.created, 1, 10)"),
)

FIELDS = (
    Field("title", "title", "title",
          values_sql(["Weekly sync notes", "Old draft - keep", "Shopping list", "Ideas (2026)", "Final version"]),
          lambda p: [{"fill": {"selector": "input.title-input", "text": "{" + p + ".v}"}}, {"click": "#save"},
                     {"wait_for": ".flash"}],
          "SELECT title FROM notes WHERE id = ?", lambda p: {"op": "text", "value": "{" + p + ".v}"},
          (f"notes[id={_N}].title", f"notes[id={_N}].updated"), commits=True,
          checkpoint=lambda p: {"check": "the title field holds the new title",
                                "get": {"kind": "dom", "selector": "input.title-input", "prop": "value"},
                                "expect": {"op": "text", "value": "{" + p + ".v}"}}),
    Field("folder", "folder", "folder_id", "SELECT id, name AS v FROM folders WHERE id NOT IN ({not_in}) ORDER BY id",
          lambda p: [{"select": {"selector": "#move-to", "option": "{" + p + ".id}"}},
                     {"click": {"selector": "button", "text": "Move"}}],
          "SELECT folder_id FROM notes WHERE id = ?", lambda p: {"op": "equals", "value": "{" + p + ".id}"},
          (f"notes[id={_N}].folder_id", f"notes[id={_N}].folder", f"notes[id={_N}].updated"), key="id",
          commits=True, checkpoint=lambda p: select_subgoal("#move-to", "{" + p + ".id}"), shown="folder"),
)

NOTE = Entity(
    name="note", param="note", table="notes", alias="n",
    rows_sql="SELECT n.id, n.title, n.folder_id, f.name AS folder, n.pinned FROM notes n "
             "JOIN folders f ON f.id = n.folder_id WHERE (SELECT COUNT(*) FROM notes x WHERE x.title = n.title) = 1 "
             "AND (SELECT COUNT(*) FROM folders y WHERE y.name = f.name) = 1 {where} ORDER BY n.id",
    label='the note "{note.title}"',
    open=({"click": {"selector": "header nav a", "text": "Search"}},
          {"fill": {"selector": "input[name=q]", "text": "{note.title}", "submit": True}},
          {"click": '.note-item[data-id="{note.id}"] a'}),
    save=(),
    path="^/notes/{note.id}(/|$)",
    fields=FIELDS,
    delete=({"click": "#delete-open"}, {"wait_for": "#delete-confirm"}, {"click": "#delete-confirm"}),
    cancel_delete=({"click": "#delete-open"}, {"wait_for": "#delete-confirm"}, {"click": "#delete-cancel"}),
    skills=("search", "form"),
)


def pin(scope: str) -> dict[str, Any] | None:
    """Pin one unpinned note; the near miss pins another note of its folder."""
    if "pinned = 1" in scope:
        return None
    open_other = [{"click": {"selector": "header nav a", "text": "Search"}},
                  {"fill": {"selector": "input[name=q]", "text": "{other.title}", "submit": True}},
                  {"click": '.note-item[data-id="{other.id}"] a'}]
    return {
        "phrasings": ['Pin the note "{note.title}".', 'Keep "{note.title}" at the top of its folder: pin it.',
                      'The note "{note.title}" should be pinned; pin it and nothing else.'],
        "params": {"note": NOTE.rows(scope, "AND n.pinned = 0"),
                   "other": {"type": "rows", "sql": "SELECT id, title FROM notes WHERE pinned = 0 AND id != ? "
                                                    "AND (SELECT COUNT(*) FROM notes x WHERE x.title = notes.title) = 1 "
                                                    "ORDER BY id", "params": ["{note.id}"]}},
        "judge": {"subgoals": [{"check": "the record is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/notes/{note.id}(/|$)"}}],
                  "checks": [{"check": "the note is pinned", "get": {"kind": "app_state", "path": f"notes[id={_N}].pinned"},
                              "expect": {"op": "equals", "value": True}}],
                  "expected_changes": [f"notes[id={_N}].pinned"]},
        "oracle": [*NOTE.open, {"click": {"selector": "button", "text": "Pin"}}],
        "near_miss": [*open_other, {"click": {"selector": "button", "text": "Pin"}}],
        "tags": {"skills": ["search", "button"], "tier": 2},
    }


#: What a count's scope says, for the scopes a folder's count can honour (the others have none).
_COUNT_WORDS = {"": "", "AND n.pinned = 1": "pinned ", "AND n.pinned = 0": "unpinned "}


def count(scope: str) -> dict[str, Any] | None:
    """How many notes (of the scope) a folder holds directly; the near miss counts them all."""
    if scope not in _COUNT_WORDS:
        return None
    what = _COUNT_WORDS[scope]
    n = "(SELECT COUNT(*) FROM notes n WHERE n.folder_id = f.id"
    return {
        "phrasings": [f"How many {what}notes are directly in the {{folder.name}} folder (not in its subfolders)? "
                      "Answer with just the number.",
                      f"Count the {what}notes filed right in {{folder.name}}, subfolders left out. Reply with the number.",
                      f"What is the number of {what}notes in the {{folder.name}} folder itself? A number only."],
        "params": {"folder": {"type": "rows", "sql": f"SELECT f.id, f.name, {n} {scope}) AS n, {n}) + 1 AS n_wrong "
                                                     "FROM folders f WHERE (SELECT COUNT(*) FROM folders y "
                                                     "WHERE y.name = f.name) = 1 ORDER BY f.id"}},
        "judge": {"subgoals": [{"check": "the folder is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/folders/{folder.id}(/|$)"}}],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{folder.n}"}}]},
        "oracle": [{"click": 'a.folder[data-folder="{folder.name}"]'}, {"done": {"answer": "{folder.n}"}}],
        "near_miss": [{"click": 'a.folder[data-folder="{folder.name}"]'}, {"done": {"answer": "{folder.n_wrong}"}}],
        "tags": {"skills": ["navigate", "read", "count"], "tier": 2},
    }


DESCRIPTION = Description(app="notes", version=GENERATOR_VERSION, scopes=SCOPES, entities=(NOTE,),
                          extra={"pin": pin, "count": count},
                          test_chains=frozenset({"edit:title+folder", "pin"}), chain_sizes=(2,),
                          ask_chains=(("title", "folder"),))
SCHEMA: AppSchema = DESCRIPTION.schema()
