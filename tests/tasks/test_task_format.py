"""The task format: schema, loader errors (file, field, reason), params, placeholders,
instantiation and the registry."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml

from cua.judges.judge import StateJudge
from cua.task import TaskInstance
from cua.tasks import registry
from cua.tasks.apps import load_app
from cua.tasks.format import SCHEMA_PATH, json_schema
from cua.tasks.loader import TaskFormatError, load_file, load_text
from cua.tasks.render import RenderError, render

GOOD = """
suite: demo
defaults:
  sandbox: {kind: browser, app: todo, start_url: /}
  tags: {app: todo}
templates:
  - id: demo.mark@1
    instruction: 'Mark "{todo.title}" done (list {todo.list_id}), by {due}.'
    params:
      todo: {type: rows, sql: "SELECT id, title, list_id FROM todos WHERE done = 0 ORDER BY id"}
      due: {type: date, min: "2026-03-01", max: "2026-03-31", format: "%B %-d", formats: {us: "%m/%d/%Y"}}
      n: {type: int, min: 1, max: 3}
    derived:
      label: "{todo.title} #{n}"
    judge:
      checks:
        - check: done
          get: {kind: app_state, path: "todos[id={todo.id}].done"}
          expect: {op: equals, value: true}
      expected_changes: ["todos[id={todo.id}].done"]
    oracle:
      - click: 'tr[data-id="{todo.id}"] input.toggle'
    near_miss:
      - done: {answer: "{n}"}
    tags: {tier: 2, skills: [checkbox]}
"""


def problems_of(text: str, name: str = "bad.yaml") -> TaskFormatError:
    with pytest.raises(TaskFormatError) as info:
        load_text(textwrap.dedent(text), name)
    return info.value


def test_schema_file_is_current_and_validates_the_bundled_suite() -> None:
    assert json.loads(SCHEMA_PATH.read_text()) == json.loads(json.dumps(json_schema())), \
        "tasks/schema/task.schema.json is stale: run `python -m cua.tasks.format`"
    validator = jsonschema.Draft202012Validator(json_schema())
    files = sorted((registry.SUITES_DIR / "todo").glob("*.yaml"))
    assert files
    for file in files:
        errors = list(validator.iter_errors(yaml.safe_load(file.read_text())))
        assert not errors, (file, [e.message for e in errors[:3]])
    assert list(validator.iter_errors({"templates": [{"id": "BAD"}]}))


def test_good_file_loads_and_instantiates_deterministically() -> None:
    (template,) = load_text(GOOD, "demo.yaml", suite="demo")
    a, b, c = template.instantiate(4), template.instantiate(4), template.instantiate(5)
    assert isinstance(a, TaskInstance) and a.params == b.params and a.instruction == b.instruction
    assert any(template.instantiate(s).params != a.params for s in range(5, 12))
    assert isinstance(a.judge, StateJudge)
    assert a.task_id == "demo.mark@1" and a.seed == 4 and a.reset_seed == 4
    assert a.sandbox_kind == "browser"
    assert a.sandbox_config["services"] == [{"name": "app", "argv": [sys.executable, "-m", "cua.tasks.apps.serve", "todo"],
                                             "app_host": {"host": "bundled", "app": "todo"}}]
    assert a.sandbox_config["start_url"] == "/"
    assert a.tags.tier == 2 and a.tags.app == "todo" and a.tags.skills == ["checkbox"]
    # the rows param names a real open todo of the app at this seed
    app = load_app("todo")
    app.reset(4)
    row = app.db.one("SELECT id, title, list_id, done FROM todos WHERE id = ?", (a.params["todo"]["id"],))
    assert row is not None and row["title"] == a.params["todo"]["title"] and row["done"] == 0
    assert a.instruction == f'Mark "{row["title"]}" done (list {row["list_id"]}), by {a.params["due"]["value"]}.'
    assert a.params["due"]["value"].startswith("March ") and a.params["due"]["us"].startswith("03/")
    assert a.params["label"] == f'{row["title"]} #{a.params["n"]}'
    # the app's state, and its activity log (the episode's history, read by SQL)
    queries = a.judge.queries()
    assert [q.kind for q in queries] == ["app_state", "sql"] and "cua_activity" in queries[1].query  # type: ignore[union-attr]
    assert a.judge.spec.expected_changes == [f"todos[id={row['id']}].done"]
    assert c.seed == 5


def test_errors_name_file_field_and_reason() -> None:
    err = problems_of(GOOD.replace("expect: {op: equals, value: true}", "expect: {op: equalz, value: true}"))
    assert err.file == "bad.yaml"
    assert err.field == "templates[0] (demo.mark@1).judge.checks[0].expect"
    assert "equalz" in err.reason or "does not match" in err.reason or "op" in err.reason
    assert "bad.yaml" in str(err)

    err = problems_of(GOOD.replace("max: 3}", "max: 3, maxx: 4}"))
    assert err.field == "templates[0] (demo.mark@1).params.n.maxx" and err.reason == "unknown field"

    err = problems_of(GOOD.replace("id: demo.mark@1", "id: Demo Mark"))
    assert err.field == "templates[0] (Demo Mark).id" and "pattern" in err.reason

    err = problems_of(GOOD.replace("    instruction: 'Mark", "    instructions: 'Mark"))
    fields = {p.field for p in err.problems}
    assert "templates[0] (demo.mark@1).instruction" in fields  # missing
    assert "templates[0] (demo.mark@1).instructions" in fields  # unknown

    err = problems_of(GOOD.replace("- click: 'tr", "- clack: 'tr"))
    assert err.field == "templates[0] (demo.mark@1).oracle[0]" and "click" in err.reason

    err = problems_of(GOOD.replace("pick", "x").replace("ORDER BY id\"}", "ORDER BY id\", pick: 0}"))
    assert err.field == "templates[0] (demo.mark@1).params.todo.pick" and ">= 1" in err.reason

    err = problems_of(GOOD.replace('expected_changes: ["todos[id={todo.id}].done"]', 'expected_changes: ["todos[id=1"]'))
    assert err.field == "templates[0] (demo.mark@1).judge.expected_changes" and "unclosed '['" in err.reason

    err = problems_of(GOOD.replace('path: "todos[id={todo.id}].done"', 'path: "todos..done"'))
    assert err.field == "templates[0] (demo.mark@1).judge.checks[0].get.path" and "empty segment" in err.reason

    err = problems_of(GOOD.replace("tier: 2", "tier: 7"))
    assert err.field == "templates[0] (demo.mark@1).tags.tier"


def test_yaml_and_structure_errors() -> None:
    err = problems_of("templates:\n  - id: x\n   bad indent: [")
    assert err.file == "bad.yaml" and err.field.startswith("line ") and "YAML" in err.reason
    assert "mapping" in problems_of("- just a list").reason
    assert problems_of("suite: demo\ntemplates: []").field == "templates"


def test_semantic_errors() -> None:
    twice = GOOD + textwrap.indent(GOOD.split("templates:\n", 1)[1], "")
    assert "duplicate template id" in problems_of(twice).reason
    err = problems_of(GOOD.replace("id: demo.mark@1", "id: other.mark@1"), "demo.yaml")
    assert "suite name 'demo'" in err.reason
    with pytest.raises(TaskFormatError) as info:
        load_text(GOOD, "x.yaml", suite="elsewhere")
    assert "suite folder 'elsewhere'" in info.value.reason
    err = problems_of(GOOD.replace("app: todo, start_url", "app: nosuchapp, start_url"))
    assert err.field.endswith("sandbox.app") and "unknown app 'nosuchapp'" in err.reason
    err = problems_of(GOOD.replace("{kind: browser, app: todo,", "{kind: desktop, app: todo,"))
    assert "kind: browser" in err.reason


def test_instantiation_errors_name_the_template_and_cause(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_text(GOOD.replace('"{todo.title}"', '"{todo.name}"'))
    (template,) = load_file(path)
    with pytest.raises(TaskFormatError) as info:
        template.instantiate(0)
    assert info.value.file == str(path) and "demo.mark@1 at seed 0" in info.value.field
    assert "'name' is not in" in info.value.reason
    path.write_text(GOOD.replace("WHERE done = 0", "WHERE done = 7"))
    (template,) = load_file(path)
    with pytest.raises(TaskFormatError) as info:
        template.instantiate(0)
    assert "found 0 row(s)" in info.value.reason
    path.write_text(GOOD.replace("op: equals, value: true", "op: number, value: true, abs: '{todo.title}'"))
    with pytest.raises(TaskFormatError) as info:
        load_file(path)  # a non-number tolerance is caught at load time, before any seed
    assert info.value.field.endswith("judge.checks[0].expect.abs")


def test_render_rules() -> None:
    params = {"n": 3, "row": {"id": 7, "name": "Work"}, "rows": [{"x": 1}], "d": {"value": "March 5", "iso": "2026-03-05"}}
    assert render("{n}", params) == 3  # a whole placeholder keeps its type
    assert render("n={n}", params) == "n=3"
    assert render({"a": ["{row.name} #{row.id}", "{rows.0.x}"]}, params) == {"a": ["Work #7", 1]}
    assert render(r"\d{3} {{literal}} {n}", params) == r"\d{3} {literal} 3"
    assert render("{d}", params) == "March 5" and render("{d.iso}", params) == "2026-03-05"
    with pytest.raises(RenderError, match="unknown parameter 'm'"):
        render("{m}", params)
    with pytest.raises(RenderError, match="name a field"):
        render("x {row}", params)


def test_bundled_registry() -> None:
    suites = registry.suites()
    todo = suites["todo"]
    assert not todo.problems and len(todo) >= 8
    assert registry.get_template("todo.rename").id == "todo.rename@1"
    assert registry.get_template("todo.rename@1") is todo.templates["todo.rename@1"]
    with pytest.raises(KeyError):
        registry.get_template("todo.nope@1")
    with pytest.raises(KeyError):
        registry.get_template("nosuite.x@1")
    test_split = registry.list_templates(suite="todo", split="test")
    assert test_split and all(t.tags.split == "test" for t in test_split)
    assert {t.id for t in registry.list_templates(suite="todo")} == set(todo.templates)
    tags = [t.tags for t in todo.templates.values()]
    assert any(not t.feasible for t in tags) and any("safety" in t.skills for t in tags)
    assert {t.tier for t in tags} >= {1, 2, 3}
    picked = registry.select_templates(["todo.rename@1", "todo", "todo.rename"])
    assert picked[0].id == "todo.rename@1" and len(picked) == len(todo)
    for template in todo.templates.values():  # every bundled template instantiates at a few seeds
        for seed in range(3):
            instance = template.instantiate(seed)
            assert instance.oracle is not None and instance.near_miss is not None and instance.instruction


def test_generator_params_come_from_the_seeded_app() -> None:
    template = registry.get_template("todo.extreme_list@1")
    app = load_app("todo")
    for seed in range(3):
        params = template.instantiate(seed).params
        app.reset(seed)
        counts = {r["name"]: r["n"] for r in app.db.all(
            "SELECT l.name, COUNT(t.id) AS n FROM lists l LEFT JOIN todos t ON t.list_id = l.id AND t.done = 0 "
            "GROUP BY l.id")}
        pick = max if params["which"] == "most" else min
        assert counts[params["answer"]] == pick(counts.values()) == params["count"]
        assert sum(1 for n in counts.values() if n == params["count"]) == 1
        assert params["runner_up"] != params["answer"]


def test_suite_folder_collects_every_bad_file(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "a.yaml").write_text(GOOD)
    (folder / "b.yaml").write_text(GOOD.replace("demo.mark@1", "demo.other@1").replace("op: equals", "op: nope"))
    (folder / "c.yaml").write_text("templates: [")
    with pytest.raises(TaskFormatError) as info:
        registry.load_suite_dir(folder)
    assert {Path(p.file).name for p in info.value.problems} == {"b.yaml", "c.yaml"}
    lenient = registry.load_suite_dir(folder, strict=False)
    assert list(lenient.templates) == ["demo.mark@1"] and len(lenient.problems) == 2
    suite = registry._from_object(lambda: str(folder / "a.yaml"), "test")
    assert suite.name == "demo" and list(suite.templates) == ["demo.mark@1"]
