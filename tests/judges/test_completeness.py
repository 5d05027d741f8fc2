"""Completeness at load (`cua.judges.completeness`): every change a template allows is read
by a check or declared unjudged with a reason, or the template does not load, and the
error names the template, the field and what no check reads."""

from __future__ import annotations

import textwrap

import pytest

from cua.tasks import registry
from cua.tasks.loader import TaskFormatError, app_schema, judge_tally, load_text

HEAD = """
suite: demo
defaults:
  sandbox: {kind: browser, app: APP, start_url: /}
templates:
  - id: demo.t@1
    instruction: Do it.
    tags: {oracle: false}
    judge:
"""


def template(judge: str, app: str = "todo") -> str:
    return HEAD.replace("APP", app) + textwrap.indent(textwrap.dedent(judge).strip("\n"), " " * 6) + "\n"


def refused(judge: str, app: str = "todo") -> str:
    with pytest.raises(TaskFormatError) as info:
        load_text(template(judge, app), "demo.yaml")
    return str(info.value)


def loads(judge: str, app: str = "todo") -> None:
    assert len(load_text(template(judge, app), "demo.yaml")) == 1


#: A new todo judged by its title alone: the right record with anything else passes.
ADD_TITLE_ONLY = """
checks:
  - check: the todo exists
    get: {kind: app_state, path: "todos[title~=Buy milk].title"}
    expect: {op: text, value: Buy milk}
expected_changes: ["todos[title~=Buy milk]"]
"""


def test_a_row_allowance_with_an_unread_column_fails_naming_the_template_field_and_column() -> None:
    message = refused(ADD_TITLE_ONLY)
    assert "demo.t@1" in message
    assert "judge.expected_changes[0] 'todos[title~=Buy milk]'" in message
    assert "list_id" in message and "priority" in message  # the container and the rest of the row
    assert "judge.unjudged" in message  # how to fix it


def test_the_same_row_allowance_loads_when_every_column_is_read() -> None:
    loads("""
    checks:
      - check: the todo, in its list, with nothing else set
        get: {kind: sql, query: "SELECT list_id, title, done, due, priority, tags, notes FROM todos WHERE same_text(title, ?)",
              params: [Buy milk]}
        expect: {op: table, rows: [{list_id: 2, title: Buy milk, done: 0, due: null, priority: normal, tags: "", notes: ""}]}
    expected_changes: ["todos[title~=Buy milk]"]
    """)


def test_a_row_read_whole_by_app_state_covers_every_column() -> None:
    loads("""
    checks:
      - check: the todo is that row
        get: {kind: app_state, path: "todos[title~=Buy milk]"}
        expect: {op: equals, value: {list_id: 2, title: Buy milk, done: false, due: null, priority: normal, tags: [], notes: ""}}
    expected_changes: ["todos[title~=Buy milk]"]
    """)


def test_unread_columns_declared_unjudged_with_a_reason_load() -> None:
    loads(ADD_TITLE_ONLY + """
unjudged:
  todos.list_id: the instruction names no list, so any list is right
  todos.done: a new todo is open, and no route makes one done
  todos.due: the instruction names no due date for it
  todos.priority: the instruction names no priority for it
  todos.tags: the instruction names no tags for it
  todos.notes: the instruction names no notes for it
""")


def test_an_unjudged_entry_needs_a_reason() -> None:
    message = refused(ADD_TITLE_ONLY + 'unjudged: {"todos[title~=Buy milk]": ""}\n')
    assert "unjudged" in message and "reason" in message
    message = refused(ADD_TITLE_ONLY + 'unjudged: {"todos[title~=Buy milk]": "not needed"}\n')
    assert "reason" in message


def test_an_unjudged_entry_must_name_an_allowance() -> None:
    message = refused("""
    checks:
      - check: done
        get: {kind: app_state, path: "todos[id=3].done"}
        expect: {op: equals, value: true}
    expected_changes: ["todos[id=3].done"]
    unjudged: {lists.color: "colours are not what this task is about"}
    """)
    assert "judge.unjudged 'lists.color'" in message and "names no allowance" in message


def test_a_check_narrower_than_the_field_it_allows_fails() -> None:
    message = refused("""
    checks:
      - check: one todo of the list is done
        get: {kind: app_state, path: "todos[id=3].done"}
        expect: {op: equals, value: true}
    expected_changes: ["todos[list_id=1][*].done"]
    """)
    assert "judge.expected_changes[0] 'todos[list_id=1][*].done'" in message
    assert "narrower" in message and "[id=3]" in message


def test_a_check_as_wide_as_the_field_it_allows_loads() -> None:
    loads("""
    checks:
      - check: every todo of the list is done
        get: {kind: app_state, path: "todos[list_id=1][*].done"}
        expect: {op: equals, value: [true, true]}
    expected_changes: ["todos[list_id=1][*].done"]
    """)


def test_an_sql_read_of_the_column_covers_the_field() -> None:
    loads("""
    checks:
      - check: every todo of the list is done
        get: {kind: sql, query: "SELECT COUNT(*) FROM todos WHERE list_id = 1 AND done = 0", scalar: true}
        expect: {op: equals, value: 0}
    expected_changes: ["todos[list_id=1][*].done"]
    """)


def test_an_sql_read_of_another_column_does_not() -> None:
    message = refused("""
    checks:
      - check: the list has its todos
        get: {kind: sql, query: "SELECT COUNT(*) FROM todos WHERE list_id = 1", scalar: true}
        expect: {op: equals, value: 2}
    expected_changes: ["todos[list_id=1][*].done"]
    """)
    assert "no check reads it" in message


def test_a_new_note_whose_folder_no_check_reads_fails() -> None:
    """The right record in any container passes when the container goes unread."""
    message = refused("""
    checks:
      - check: the note has the text
        get: {kind: app_state, path: "notes[title~=Plan]"}
        expect: {op: json_subset, value: {title: Plan, body: "<p>x</p>", pinned: false}}
    expected_changes: ["notes[title~=Plan]"]
    """, app="notes")
    assert "folder_id" in message
    loads("""
    checks:
      - check: the note is in Work, with the text
        get: {kind: app_state, path: "notes[title~=Plan]"}
        expect: {op: json_subset, value: {title: Plan, body: "<p>x</p>", pinned: false, folder: Work}}
    expected_changes: ["notes[title~=Plan]"]
    """, app="notes")  # the derived `folder` path reads notes.folder_id (WebApp.derived)


def test_under_any_only_what_every_branch_reads_counts() -> None:
    """Either branch may decide: a column one branch reads and the other does not is unjudged."""
    judge = """
    checks:
      - any:
          - check: the todo, in list 2
            get: {kind: sql, query: "SELECT list_id, title, done, due, priority, tags, notes FROM todos WHERE title = ?",
                  params: [Buy milk]}
            expect: {op: table, rows: [{list_id: 2, title: Buy milk, done: 0, due: null, priority: normal, tags: "", notes: ""}]}
          - check: the todo, anywhere
            get: {kind: sql, query: "SELECT OTHER FROM todos WHERE title = ?", params: [Buy milk]}
            expect: {op: table, rows: [{title: Buy milk, done: 0, due: null, priority: normal, tags: "", notes: ""}]}
    expected_changes: ["todos[title~=Buy milk]"]
    """
    message = refused(judge.replace("OTHER", "title, done, due, priority, tags, notes"))
    assert "list_id" in message and "priority" not in message
    loads(judge.replace("OTHER", "list_id, title, done, due, priority, tags, notes"))


def test_a_deleted_row_needs_only_its_absence() -> None:
    loads("""
    checks:
      - check: the todo is gone
        get: {kind: app_state, path: "todos[id=4]"}
        expect: {op: absent}
    expected_changes: ["todos[id=4]"]
    """)


def test_an_unread_incidental_change_and_free_field_fail() -> None:
    message = refused("""
    checks:
      - check: done
        get: {kind: app_state, path: "todos[id=3].done"}
        expect: {op: equals, value: true}
    expected_changes: ["todos[id=3].done"]
    incidental_changes: ["todos[*].notes"]
    free_fields: [todos.priority]
    """)
    assert "judge.incidental_changes[0] 'todos[*].notes'" in message
    assert "judge.free_fields[0] 'todos.priority'" in message


def test_an_expected_file_no_check_reads_fails() -> None:
    text = """
suite: demo
templates:
  - id: demo.f@1
    instruction: Write a.txt.
    sandbox: {kind: desktop}
    tags: {oracle: false}
    judge:
      expected_files: [a.txt, logs/**]
      checks:
        - check: a.txt holds hi
          get: {kind: file, file: a.txt}
          expect: {op: text, value: hi}
"""
    with pytest.raises(TaskFormatError) as info:
        load_text(text, "demo.yaml")
    assert "judge.expected_files[1] 'logs/**'" in str(info.value)
    assert "expected_files[0]" not in str(info.value)


def test_suite_wide_allowances_are_refused() -> None:
    text = template("""
    checks:
      - check: done
        get: {kind: app_state, path: "todos[id=3].done"}
        expect: {op: equals, value: true}
    expected_changes: ["todos[id=3].done"]
    """).replace("defaults:\n", 'defaults:\n  judge: {incidental_changes: ["todos[*].notes"]}\n')
    with pytest.raises(TaskFormatError) as info:
        load_text(text, "demo.yaml")
    assert info.value.field == "defaults.judge.incidental_changes"
    assert "suite-wide allowances are refused" in info.value.reason


def test_every_bundled_suite_loads_under_the_rule() -> None:
    registry.reload()
    bundled = registry.suites()
    assert {"todo", "mail", "notes", "sheets", "shop", "office", "desktop"} <= set(bundled)
    allowances = read = unjudged = 0
    for name, suite in bundled.items():
        assert not suite.problems, f"suite {name} does not load: {suite.problems[:3]}"
        for t in suite.templates.values():
            tally = judge_tally(t.spec)
            assert not tally.gaps, (t.id, tally.gaps)
            allowances, read, unjudged = allowances + tally.allowances, read + tally.read, unjudged + tally.unjudged
    assert allowances == read + unjudged and allowances > 250


#: A new todo checked only in list 2: `list_id` is read by the WHERE alone, so a copy of the
#: todo in another list is a row the check never sees (probe `todo_dup_other_list`).
IN_LIST_TWO = """
checks:
  - check: the todo, once, in list 2, with nothing else set
    get: {kind: sql, query: "SELECT title, done, due, priority, tags, notes FROM todos WHERE list_id = 2 AND same_text(title, ?)",
          params: [Buy milk]}
    expect: {op: table, rows: [{title: Buy milk, done: 0, due: null, priority: normal, tags: "", notes: ""}]}
expected_changes: ["ALLOWANCE"]
"""


def test_a_column_an_sql_check_only_filters_on_does_not_judge_a_wider_row_allowance() -> None:
    message = refused(IN_LIST_TWO.replace("ALLOWANCE", "todos[title~=Buy milk]"))
    assert "judge.expected_changes[0] 'todos[title~=Buy milk]'" in message
    assert "chooses by list_id" in message and "does not select on" in message


def test_the_row_allowance_that_selects_on_the_filtered_column_loads() -> None:
    loads(IN_LIST_TWO.replace("ALLOWANCE", "todos[list_id=2][title~=Buy milk]"))


def test_a_field_allowance_wider_than_the_sql_checks_filters_fails() -> None:
    message = refused("""
    checks:
      - check: the todo is done
        get: {kind: sql, query: "SELECT done FROM todos WHERE list_id = 1 AND title = 'Buy milk'", scalar: true}
        expect: {op: equals, value: 1}
    expected_changes: ["todos[list_id=1][*].done"]
    """)
    assert "judge.expected_changes[0] 'todos[list_id=1][*].done'" in message and "chooses by title" in message


def test_count_star_reads_only_its_filters() -> None:
    """COUNT(*) holds no column: every column of its WHERE only chooses the rows it counts. A
    filter on the allowed field itself compares its value (none of list 1 left undone judges
    `done` there); on any other column it narrows the check; a sum over every row reads all."""
    count = """
    checks:
      - check: no todo of list 1 is left undone
        get: {kind: sql, query: "SELECT COUNT(*) FROM todos WHERE list_id = 1 AND done = 0", scalar: true}
        expect: {op: equals, value: 0}
    expected_changes: ["ALLOWANCE"]
    """
    loads(count.replace("ALLOWANCE", "todos[list_id=1][*].done"))
    assert "chooses by list_id" in refused(count.replace("ALLOWANCE", "todos[priority=high][*].done"))
    message = refused("""
    checks:
      - check: the todo is once in list 2
        get: {kind: sql, query: "SELECT COUNT(*) FROM todos WHERE same_text(title, ?) AND list_id = 2", params: [Buy milk],
              scalar: true}
        expect: {op: equals, value: 1}
    expected_changes: ["todos[title~=Buy milk]"]
    """)
    assert "done, due, priority, tags, notes" in message  # counting a row reads none of its values
    loads("""
    checks:
      - check: no todo is left undone
        get: {kind: sql, query: "SELECT COALESCE(SUM(done = 0), 0) FROM todos", scalar: true}
        expect: {op: equals, value: 0}
    expected_changes: ["todos[priority=high][*].done"]
    """)


def test_sql_reads_tells_result_values_from_filters() -> None:
    """Where a column sits decides: a result column (in an expression or a scalar subquery of
    the result, or the outer row such a subquery names) is a value; WHERE, ON, a subquery
    there, and an ORDER BY with a LIMIT only choose rows; an ORDER BY without one orders the
    values."""
    schema = app_schema("todo")

    def reads(query: str) -> tuple[set[str], set[str]]:
        got = schema.sql_reads(query)
        assert not isinstance(got, str), got
        return {f"{t}.{c}" for t, c in got.values}, {f"{t}.{c}" for t, c in got.filtered}

    values, filtered = reads("SELECT title, (SELECT name FROM lists l WHERE l.id = todos.list_id) AS list, done = 1 AS d "
                             "FROM todos WHERE priority = ? AND list_id IN (SELECT id FROM lists WHERE color = ?)")
    assert values == {"todos.title", "lists.name", "todos.list_id", "todos.done"}
    assert filtered == {"todos.priority", "todos.list_id", "lists.id", "lists.color"}
    values, filtered = reads("SELECT COUNT(*) FROM todos t JOIN lists l ON l.id = t.list_id WHERE l.name = ?")
    assert values == set() and filtered == {"todos.list_id", "lists.id", "lists.name"}
    assert reads("SELECT title FROM todos ORDER BY due") == ({"todos.title", "todos.due"}, set())
    assert reads("SELECT title FROM todos ORDER BY due LIMIT 1") == ({"todos.title"}, {"todos.due"})


def test_a_row_allowance_on_a_state_key_named_apart_from_its_table_reads_that_tables_columns() -> None:
    """The shop lists its `cart_items` rows under the state key `cart`: a row allowed there
    carries the table's columns (its quantity), which a check must read too."""
    message = refused("""
    checks:
      - check: the line is in the cart
        get: {kind: app_state, path: "cart[product_id=3]"}
        expect: {op: present}
    expected_changes: ["cart[product_id=3]"]
    """, app="shop")
    assert "qty" in message and "cart_items" in message
    loads("""
    checks:
      - check: one of it is in the cart
        get: {kind: sql, query: "SELECT qty FROM cart_items WHERE product_id = 3", scalar: true}
        expect: {op: equals, value: 1}
    expected_changes: ["cart[product_id=3]"]
    """, app="shop")
    loads("""
    checks:
      - check: the line is in the cart
        get: {kind: app_state, path: "cart[product_id=3]"}
        expect: {op: present}
    expected_changes: ["cart[product_id=3]"]
    unjudged: {cart_items.qty: "the instruction leaves the quantity to the agent here"}
    """, app="shop")
