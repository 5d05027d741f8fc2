"""Templates for the todo app (tasks/apps/todo) composed from its entities and UI operations.

Each operation knows its judge (typed values plus exact `expected_changes`), its oracle
through the UI (data- attributes and roles only, like the hand-written todo suite) and a
near miss. A template is one operation (or a chain of two) with one phrasing and one
*scope*: a filter on the rows its parameters are drawn from, so two templates of one
operation still differ in what they judge. The generic parts (ids, splits, the seeded draw)
are the generator core's (`cua.synth.schema`); `generate(count, seed)` is deterministic: the
same GENERATOR_VERSION and seed give the same templates in the same order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cua.synth.schema import AppSchema, Generated
from cua.synth.schema import generate as core_generate

__all__ = ["GENERATOR_VERSION", "OPERATIONS", "SCHEMA", "SUITE", "TEST_CHAINS", "Generated", "generate"]

GENERATOR_VERSION = 4  # 4: rename>ask:list, a chain that ends with a question (version 3's operations unchanged)
APP = "todo"
SUITE = "synth_todo"

#: Filters on the todo rows a template draws (alias t); each gives other rows at one seed.
SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("high", "AND t.priority = 'high'"),
    ("low", "AND t.priority = 'low'"),
    ("normal", "AND t.priority = 'normal'"),
    ("tagged", "AND t.tags != ''"),
    ("untagged", "AND t.tags = ''"),
    ("dated", "AND t.due != ''"),
    ("undated", "AND t.due IS NULL"),
)

#: Operation chains held out of training: the test split holds compositions never trained on.
TEST_CHAINS = frozenset({"move", "rename+priority", "count"})

_TITLES = ["Call the dentist back", "Return the library books", "Order printer ink", "Draft the budget sheet",
           "Plan the team offsite", "Book the car service", "Renew the gym pass", "Sort the tax receipts"]

_OPEN = [{"click": 'a[data-nav="/search"]'},
         {"fill": {"selector": "input[name=q]", "text": "{todo.title}", "submit": True}},
         {"click": {"selector": "a[data-field=title]", "text": "{todo.title}"}}]
_RECORD_OPEN = {"check": "the record is open", "get": {"kind": "url", "part": "path"},
                "expect": {"op": "regex", "pattern": "^/todos/{todo.id}(/|$)"}}
_SAVE = {"click": "button[data-action=save]"}


def _todo_rows(scope: str, extra: str = "") -> dict[str, Any]:
    return {"type": "rows", "sql": "SELECT t.id, t.title, t.list_id, t.priority, l.name AS list FROM todos t "
                                   f"JOIN lists l ON l.id = t.list_id WHERE 1 = 1 {extra} {scope} ORDER BY t.id"}


def _select_subgoal(field: str, value: str) -> dict[str, Any]:
    return {"any": [
        {"check": f"{field} is {value}", "get": {"kind": "dom", "selector": f"select[name={field}]", "prop": "value"},
         "expect": {"op": "text", "value": value}},
        {"check": f"{field} shows {value}", "get": {"kind": "dom", "selector": f"select[name={field}] option:checked"},
         "expect": {"op": "text", "value": value}}]}


def mark_done(scope: str) -> dict[str, Any]:
    return {
        "phrasings": ['In the "{todo.list}" list, mark the todo "{todo.title}" as done.',
                      'Tick off "{todo.title}" in {todo.list}: it is finished.',
                      'Check "{todo.title}" (in the {todo.list} list) as completed.'],
        "params": {"todo": _todo_rows(scope, "AND t.done = 0"),
                   "other": {"type": "rows", "sql": "SELECT id FROM todos WHERE done = 0 AND list_id = ? AND id != ? "
                                                    "ORDER BY id", "params": ["{todo.list_id}", "{todo.id}"]}},
        "judge": {"subgoals": [{"check": "the list is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/lists/{todo.list_id}(/|$)"}}],
                  "checks": [{"check": "the todo is done", "get": {"kind": "app_state", "path": "todos[id={todo.id}].done"},
                              "expect": {"op": "equals", "value": True}}],
                  "expected_changes": ["todos[id={todo.id}].done"]},
        "oracle": [{"click": 'a[data-list="{todo.list}"]'},
                   {"click": 'tr[data-id="{todo.id}"] input[data-action=toggle]'}],
        "near_miss": [{"click": 'a[data-list="{todo.list}"]'},
                      {"click": 'tr[data-id="{other.id}"] input[data-action=toggle]'}],
        "tags": {"skills": ["navigate", "checkbox"], "tier": 2},
    }


def rename(scope: str) -> dict[str, Any]:
    return {
        "phrasings": ['Rename the todo "{todo.title}" to "{new_title}".',
                      'Change the title of "{todo.title}" so it reads "{new_title}".',
                      'The todo "{todo.title}" should be called "{new_title}" from now on.'],
        "params": {"todo": _todo_rows(scope), "new_title": {"type": "string", "values": _TITLES}},
        "judge": {"subgoals": [_RECORD_OPEN],
                  "checks": [{"check": "the title is the new one",
                              "get": {"kind": "app_state", "path": "todos[id={todo.id}].title"},
                              "expect": {"op": "text", "value": "{new_title}"}}],
                  "expected_changes": ["todos[id={todo.id}].title"]},
        "oracle": [*_OPEN, {"fill": {"selector": "input[name=title]", "text": "{new_title}"}}, _SAVE],
        "near_miss": [*_OPEN, {"click": "input[name=title]"}, {"press": "End"}, {"type_text": " {new_title}"}, _SAVE],
        "tags": {"skills": ["search", "form"], "tier": 3},
    }


def set_priority(scope: str) -> dict[str, Any]:
    return {
        "phrasings": ['Set the priority of "{todo.title}" to {priority}.',
                      'Make "{todo.title}" a {priority}-priority todo.',
                      'Give the todo "{todo.title}" {priority} priority.'],
        "params": {"priority": {"type": "choice", "values": ["low", "high"]},
                   "todo": {**_todo_rows(scope, "AND t.priority != ?"), "params": ["{priority}"]}},
        "derived": {"wrong": "{todo.priority}"},
        "judge": {"subgoals": [_RECORD_OPEN, _select_subgoal("priority", "{priority}")],
                  "checks": [{"check": "the priority changed",
                              "get": {"kind": "sql", "query": "SELECT priority FROM todos WHERE id = ?",
                                      "params": ["{todo.id}"], "scalar": True},
                              "expect": {"op": "equals", "value": "{priority}"}}],
                  "expected_changes": ["todos[id={todo.id}].priority"]},
        "oracle": [*_OPEN, {"select": {"selector": "select[name=priority]", "option": "{priority}"}}, _SAVE],
        "near_miss": [*_OPEN, {"select": {"selector": "select[name=priority]", "option": "{wrong}"}}, _SAVE],
        "tags": {"skills": ["search", "select"], "tier": 3},
    }


def move(scope: str) -> dict[str, Any]:
    return {
        "phrasings": ['Move the todo "{todo.title}" from {todo.list} to the {dest.name} list.',
                      '"{todo.title}" belongs in {dest.name}, not {todo.list}: move it there.',
                      'Put "{todo.title}" into the {dest.name} list.'],
        "params": {"todo": _todo_rows(scope),
                   "dest": {"type": "rows", "sql": "SELECT id, name FROM lists WHERE id != ? ORDER BY id",
                            "params": ["{todo.list_id}"]},
                   "decoy": {"type": "rows", "sql": "SELECT id, name FROM lists WHERE id != ? AND id != ? ORDER BY id",
                             "params": ["{todo.list_id}", "{dest.id}"]}},
        "judge": {"subgoals": [_RECORD_OPEN, _select_subgoal("list_id", "{dest.name}")],
                  "checks": [{"check": "the todo is in the destination list",
                              "get": {"kind": "sql", "query": "SELECT l.name FROM todos t JOIN lists l ON l.id = t.list_id "
                                                              "WHERE t.id = ?", "params": ["{todo.id}"], "scalar": True},
                              "expect": {"op": "text", "value": "{dest.name}"}}],
                  "expected_changes": ["todos[id={todo.id}].list_id"]},
        "oracle": [*_OPEN, {"select": {"selector": "select[name=list_id]", "option": "{dest.name}"}}, _SAVE],
        "near_miss": [*_OPEN, {"select": {"selector": "select[name=list_id]", "option": "{decoy.name}"}}, _SAVE],
        "tags": {"skills": ["search", "select"], "tier": 3},
    }


def delete(scope: str) -> dict[str, Any]:
    confirm = [{"click": "#delete-open"}, {"wait_for": "#delete-confirm"}, {"click": "#delete-confirm"}]
    return {
        "phrasings": ['Delete the todo "{todo.title}" from the {todo.list} list. Do not change or delete anything else.',
                      'Remove "{todo.title}" ({todo.list}) for good; leave every other todo alone.',
                      'Get rid of the todo "{todo.title}" in {todo.list}, and only that one.'],
        "params": {"todo": _todo_rows(scope),
                   "other": {"type": "rows", "sql": "SELECT id FROM todos WHERE list_id = ? AND id != ? AND done = 0 "
                                                    "ORDER BY id", "params": ["{todo.list_id}", "{todo.id}"]}},
        "judge": {"subgoals": [_RECORD_OPEN],
                  "checks": [{"check": "the todo is gone", "get": {"kind": "app_state", "path": "todos[id={todo.id}]"},
                              "expect": {"op": "absent"}}],
                  "expected_changes": ["todos[id={todo.id}]"]},
        "oracle": [*_OPEN, *confirm],
        "near_miss": [*_OPEN, *confirm, {"wait_for": 'tr[data-id="{other.id}"]'},
                      {"click": 'tr[data-id="{other.id}"] a[data-field=title]'}, *confirm],
        "tags": {"skills": ["search", "modal"], "tier": 3},
    }


def rename_priority(scope: str) -> dict[str, Any]:
    """A chain of two: rename, then set the priority, of one todo in one save."""
    return {
        "phrasings": ['Rename "{todo.title}" to "{new_title}" and set its priority to {priority}.',
                      'Retitle the todo "{todo.title}" as "{new_title}", then make it {priority} priority.'],
        "params": {"priority": {"type": "choice", "values": ["low", "high"]},
                   "todo": {**_todo_rows(scope, "AND t.priority != ?"), "params": ["{priority}"]},
                   "new_title": {"type": "string", "values": _TITLES}},
        "judge": {"subgoals": [_RECORD_OPEN, _select_subgoal("priority", "{priority}")],
                  "checks": [{"check": "the title is the new one",
                              "get": {"kind": "app_state", "path": "todos[id={todo.id}].title"},
                              "expect": {"op": "text", "value": "{new_title}"}},
                             {"check": "the priority changed",
                              "get": {"kind": "sql", "query": "SELECT priority FROM todos WHERE id = ?",
                                      "params": ["{todo.id}"], "scalar": True},
                              "expect": {"op": "equals", "value": "{priority}"}}],
                  "expected_changes": ["todos[id={todo.id}].title", "todos[id={todo.id}].priority"]},
        "oracle": [*_OPEN, {"fill": {"selector": "input[name=title]", "text": "{new_title}"}},
                   {"select": {"selector": "select[name=priority]", "option": "{priority}"}}, _SAVE],
        "near_miss": [*_OPEN, {"fill": {"selector": "input[name=title]", "text": "{new_title}"}}, _SAVE],
        "tags": {"skills": ["search", "form", "select"], "tier": 3},
    }


#: What each scope's filter means, for an instruction that must say it (a count).
SCOPE_WORDS = {"any": "open", "high": "open high-priority", "low": "open low-priority",
               "normal": "open normal-priority", "tagged": "open tagged", "untagged": "open untagged",
               "dated": "open dated", "undated": "open undated"}
_SCOPE_OF = {sql: name for name, sql in SCOPES}


def count(scope: str) -> dict[str, Any]:
    """A question: how many open todos of the scope a list holds (the near miss counts done ones too)."""
    what = SCOPE_WORDS[_SCOPE_OF[scope]]
    n = f"(SELECT COUNT(*) FROM todos t WHERE t.list_id = l.id {scope}"
    return {
        "phrasings": [f"How many {what} todos are in the {{list.name}} list? Answer with just the number.",
                      f"Count the {what} (not done) todos in {{list.name}} and answer with the number.",
                      f"What is the number of {what} todos in the {{list.name}} list? Reply with a number only."],
        "params": {"list": {"type": "rows", "sql": f"SELECT l.id, l.name, {n} AND t.done = 0) AS n, {n}) AS n_all "
                                                   "FROM lists l WHERE n != n_all ORDER BY l.id"}},
        "judge": {"subgoals": [{"check": "the list is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/lists/{list.id}(/|$)"}}],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{list.n}"}}]},
        "oracle": [{"click": 'a[data-list="{list.name}"]'}, {"done": {"answer": "{list.n}"}}],
        "near_miss": [{"click": 'a[data-list="{list.name}"]'}, {"done": {"answer": "{list.n_all}"}}],
        "tags": {"skills": ["navigate", "read", "count"], "tier": 2},
    }


def rename_then_list(scope: str) -> dict[str, Any]:
    """A chain that ends with a question read from state: rename a todo, then say which list it is in; the
    near miss renames it and names another list."""
    return {
        "phrasings": ['Rename the todo "{todo.title}" to "{new_title}", then tell me which list it is in.',
                      'Change the title of "{todo.title}" to "{new_title}". Afterwards, answer with the name of its '
                      "list only.",
                      'Retitle "{todo.title}" as "{new_title}" and reply with the list that holds it.'],
        "params": {"todo": _todo_rows(scope), "new_title": {"type": "string", "values": _TITLES},
                   "other": {"type": "rows", "sql": "SELECT name FROM lists WHERE id != ? ORDER BY id",
                             "params": ["{todo.list_id}"]}},
        "judge": {"subgoals": [_RECORD_OPEN],
                  "checks": [{"check": "the title is the new one",
                              "get": {"kind": "app_state", "path": "todos[id={todo.id}].title"},
                              "expect": {"op": "text", "value": "{new_title}"}},
                             {"check": "the answer is its list", "get": {"kind": "answer"},
                              "expect": {"op": "text", "value": "{todo.list}"}}],
                  "expected_changes": ["todos[id={todo.id}].title"]},
        "oracle": [*_OPEN, {"fill": {"selector": "input[name=title]", "text": "{new_title}"}}, _SAVE,
                   {"done": {"answer": "{todo.list}"}}],
        "near_miss": [*_OPEN, {"fill": {"selector": "input[name=title]", "text": "{new_title}"}}, _SAVE,
                      {"done": {"answer": "{other.name}"}}],
        "tags": {"skills": ["search", "form", "read", "answer", "multi_step"], "tier": 3},
    }


#: Operation chain name -> its builder.
OPERATIONS: dict[str, Callable[[str], dict[str, Any]]] = {
    "mark_done": mark_done, "rename": rename, "priority": set_priority, "move": move, "delete": delete,
    "rename+priority": rename_priority, "count": count, "rename>ask:list": rename_then_list,
}


SCHEMA = AppSchema(APP, SUITE, GENERATOR_VERSION, SCOPES, OPERATIONS, TEST_CHAINS)


def generate(count: int, seed: int = 0) -> list[Generated]:
    """`count` distinct (chain, scope, phrasing) picks, drawn in a seeded order."""
    return core_generate(SCHEMA, count, seed)
