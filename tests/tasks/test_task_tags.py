"""Template tags (issue 31): `fidelity` says whether the app is a real product or a bundled
mock, is checked against the template's app, and `cua tasks list --templates` prints every
tag (as `cua tasks show`'s JSON carries them)."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path

import pytest

from cua.task import TaskTags
from cua.tasks.loader import TaskFormatError, load_text
from cua.tasks_cli import list_main, show_main

ANSWER = """
suite: demo
defaults:
  sandbox: {{kind: browser, app: {app}, start_url: /}}
  tags: {tags}
templates:
  - id: demo.count@1
    instruction: How many?
    judge:
      checks:
        - check: the answer is three
          get: {{kind: answer}}
          expect: {{op: equals, value: "3"}}
    oracle:
      - done: {{answer: "3"}}
    tags: {{tier: 2, skills: [read]}}
"""


def _load(app: str, tags: str) -> TaskTags:
    templates = load_text(textwrap.dedent(ANSWER.format(app=app, tags=tags)), "demo.yaml")
    return templates[0].tags


def _problem(app: str, tags: str) -> tuple[str, str]:
    with pytest.raises(TaskFormatError) as info:
        _load(app, tags)
    problems = [(p.field, p.reason) for p in info.value.problems]
    assert len(problems) == 1, problems
    return problems[0]


def test_fidelity_is_mock_unless_a_real_product_says_real() -> None:
    assert _load("todo", "{app: todo}").fidelity == "mock"
    assert _load("todo", "{app: todo, fidelity: mock}").fidelity == "mock"
    assert _load("mediawiki", "{app: mediawiki, fidelity: real}").fidelity == "real"


def test_a_bad_or_false_fidelity_is_a_clear_format_error() -> None:
    field, reason = _problem("todo", "{app: todo, fidelity: rea}")
    assert field == "templates[0] (demo.count@1).tags.fidelity"
    assert "'real', 'mock'" in reason and "'rea'" in reason

    field, reason = _problem("todo", "{app: todo, fidelity: [real]}")
    assert field == "templates[0] (demo.count@1).tags.fidelity"

    # A bundled mock app claiming to be a real product: an RL run filtering on fidelity
    # would otherwise count it as one.
    field, reason = _problem("notes", "{app: notes, fidelity: real}")
    assert field == "templates[0] (demo.count@1).tags.fidelity"
    assert "real product" in reason and "'notes' is not one" in reason


def _words(line: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in line.split()[1:])


def test_list_templates_prints_every_tag_as_show_carries_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "demo.yaml").write_text(textwrap.dedent(
        ANSWER.format(app="mediawiki", tags="{app: mediawiki, fidelity: real, split: train}")))
    assert list_main(argparse.Namespace(suites=[str(tmp_path / "demo")], templates=True)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["demo.count@1"]
    assert _words(lines[0]) == {"app": "mediawiki", "skills": "read", "tier": "2", "split": "train",
                                "feasible": "true", "oracle": "true", "fidelity": "real", "safety": "-",
                                "apps": "-", "device": "-"}
    assert set(_words(lines[0])) == set(TaskTags.model_fields)

    # A bundled suite's listing and `cua tasks show`'s JSON name the same tags, app included.
    assert list_main(argparse.Namespace(suites=["todo"], templates=True)) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert show_main(argparse.Namespace(template=first.split()[0], seed=0)) == 0
    shown = json.loads(capsys.readouterr().out)["tags"]
    words = _words(first)
    assert set(words) == set(shown) and words["app"] == shown["app"] == "todo"
    assert words["fidelity"] == shown["fidelity"] == "mock"
    assert words["skills"] == ",".join(shown["skills"])

    # Without --templates: ids only.
    assert list_main(argparse.Namespace(suites=[str(tmp_path / "demo")], templates=False)) == 0
    assert capsys.readouterr().out.split() == ["demo.count@1"]
