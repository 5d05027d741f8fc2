"""Judge QA's verdict cache (`cua.qa.qa_cache`): a clean report is reused only while the
template, its suite, its app and the judge code are unchanged; a failing template always
runs again. Runs on the in-process `fake` kind (real judges, real oracles, no Chromium)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

from cua import tasks_cli
from cua.qa.check import CheckReport, check_templates
from cua.qa.qa_cache import VerdictCache
from cua.tasks.loader import load_file

FAKE_SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suites" / "fake"


def _suite_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "fake_copy"
    shutil.copytree(FAKE_SUITE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    task_file = folder / "form.yaml"
    # a suite of its own name: the bundled `fake` suite is already registered
    task_file.write_text(task_file.read_text().replace("suite: fake", "suite: fakecopy").replace("id: fake.", "id: fakecopy."))
    return task_file


def _check(task_file: Path, cache: VerdictCache) -> CheckReport:
    templates = load_file(task_file)
    return asyncio.run(check_templates(templates, seeds=[0], cache=cache))


def test_a_clean_report_is_reused_until_its_template_changes(tmp_path: Path) -> None:
    task_file = _suite_copy(tmp_path)
    cache = VerdictCache(tmp_path / "cache", enabled=True)

    first = _check(task_file, cache)
    assert first.failures == 0 and len(first.templates) >= 2
    assert not any(t.reused for t in first.templates)
    assert len(list(cache.keys())) == len(first.templates)

    second = _check(task_file, cache)
    assert all(t.reused for t in second.templates)
    assert [t.probes_ran for t in second.templates] == [t.probes_ran for t in first.templates]

    # One template's instruction changes: it alone runs again.
    text = task_file.read_text()
    task_file.write_text(text.replace("Set the counter to {goal.target}.", "Make the counter read {goal.target}."))
    third = _check(task_file, cache)
    assert [t.template_id for t in third.templates if not t.reused] == ["fakecopy.set_counter@1"]
    # ...and a change to a file of the suite other than its task file (an oracle) runs them all.
    oracles = task_file.parent / "oracles.py"
    oracles.write_text(oracles.read_text() + "\n# edited\n")
    fourth = _check(task_file, cache)
    assert not any(t.reused for t in fourth.templates)


def test_a_failing_template_is_never_stored(tmp_path: Path) -> None:
    task_file = _suite_copy(tmp_path)
    text = task_file.read_text()
    # The judge now wants one more than the oracle reaches: the oracle fails.
    task_file.write_text(text.replace('expect: {op: equals, value: "{goal.target}"}',
                                      'expect: {op: equals, value: "{goal.before}"}', 1))
    cache = VerdictCache(tmp_path / "cache", enabled=True)
    first = _check(task_file, cache)
    failing = [t.template_id for t in first.templates if t.failures]
    assert failing == ["fakecopy.set_counter@1"]
    second = _check(task_file, cache)
    assert [t.template_id for t in second.templates if not t.reused] == failing
    assert second.failures == first.failures


def test_the_cli_says_what_it_reused_and_no_cache_runs_all(tmp_path: Path, monkeypatch: object,
                                                           capsys: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch) and isinstance(capsys, pytest.CaptureFixture)
    task_file = _suite_copy(tmp_path)
    monkeypatch.setenv("CUA_QA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUA_QA_CACHE", raising=False)
    out_json = tmp_path / "report.json"
    assert tasks_cli.main(["check", str(task_file), "--seeds", "1", "--json", str(out_json)]) == 0
    capsys.readouterr()
    assert tasks_cli.main(["check", str(task_file), "--seeds", "1", "--json", str(out_json)]) == 0
    printed = capsys.readouterr().out
    assert "reused: template, app and judge code unchanged since a clean check" in printed
    assert all(t["reused"] for t in json.loads(out_json.read_text())["templates"])
    assert tasks_cli.main(["check", str(task_file), "--seeds", "1", "--no-cache", "--json", str(out_json)]) == 0
    assert not any(t["reused"] for t in json.loads(out_json.read_text())["templates"])


def test_the_judge_code_digest_covers_judge_qa_and_the_code_judges_run_on() -> None:
    """An edit to judge QA itself (its probes, its checks), the judges, the episode layer or
    the task framework changes every template's key; an edit to `cua eval`, which judge QA
    does not import, leaves clean verdicts reusable."""
    from cua.qa import qa_cache

    roots = [root.resolve() for root in qa_cache._judge_code_roots()]

    def covered(path: Path) -> bool:
        path = path.resolve()
        return any(path == root or root in path.parents for root in roots)

    repo = Path(__file__).resolve().parents[2]
    qa_modules = sorted((repo / "cua" / "qa").glob("*.py"))
    assert len(qa_modules) > 10
    judge_code = [*qa_modules, repo / "judges" / "judge.py", repo / "cua" / "episode" / "loop.py",
                  repo / "cua" / "task.py", repo / "tasks" / "loader.py", repo / "tasks" / "apps" / "activity.py"]
    assert [str(p) for p in judge_code if not covered(p)] == []
    assert not covered(repo / "cua" / "eval" / "runner.py")


def test_a_real_products_code_is_part_of_its_templates_key() -> None:
    """A product's app folder only registers it: the product's own folder and the products'
    framework decide its verdicts too, so a change there runs its templates again."""
    from cua.qa import qa_cache

    repo = Path(__file__).resolve().parents[2]
    dirs = [d.resolve() for d in qa_cache._app_dirs(["mediawiki"])]
    assert (repo / "tasks" / "products" / "mediawiki").resolve() in dirs
    assert (repo / "tasks" / "products" / "service.py").resolve() in dirs
    assert [d.resolve() for d in qa_cache._app_dirs(["notes"])] == [(repo / "tasks" / "apps" / "notes").resolve()]


def test_a_workflows_key_covers_every_app_it_runs() -> None:
    """A workflow's judge reads each of its apps: its key digests all of them, so a change to
    its second app (not only the first) runs it again."""
    from cua.qa.probes import bundled_apps_of
    from cua.qa.qa_cache import Digests
    from cua.tasks.registry import get_template

    template = get_template("workflows.book_flight_to_calendar")
    instance = template.instantiate(0)
    apps = bundled_apps_of(instance.sandbox_config)
    assert apps == ["travel", "calendar"]
    digests = Digests()
    key = digests.template_key(template, apps, seeds=[0], isolation="shared", kind=instance.sandbox_kind)
    first_only = digests.template_key(template, apps[:1], seeds=[0], isolation="shared", kind=instance.sandbox_kind)
    assert key is not None and key != first_only
