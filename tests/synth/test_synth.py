"""Task synthesis (issue 38): generated todo templates, admitted only by judge QA."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import pytest
import yaml

from cua.qa.check import _cache_key, check_templates
from cua.qa.qa_cache import Digests, VerdictCache
from cua.synth import todo_gen
from cua.synth.admit import Admission, Candidate, Outcome, admit, screen, store_verdicts, suite_text, write_suite
from cua.tasks.loader import load_file
from cua.tasks.registry import load_suite_path


def test_generation_is_reproducible_and_split_by_chain() -> None:
    a = [g.template for g in todo_gen.generate(30, seed=5)]
    b = [g.template for g in todo_gen.generate(30, seed=5)]
    assert suite_text("synth_todo", a) == suite_text("synth_todo", b)
    assert a != [g.template for g in todo_gen.generate(30, seed=6)]
    for g in todo_gen.generate(60):
        assert g.template["tags"]["split"] == ("test" if g.chain in todo_gen.TEST_CHAINS else "train")


def test_load_failures_and_duplicates_are_rejected_before_qa(tmp_path: Path) -> None:
    good = todo_gen.generate(1)[0]
    twin = copy.deepcopy(good.template)  # the same task proposed again in other words: one template
    twin["instruction"] = "Please " + twin["instruction"]
    broken = copy.deepcopy(good.template)
    broken["id"] = "synth_todo.broken@1"
    broken["judge"]["checks"][0]["expect"] = {"op": "roughly", "value": True}  # no such comparator
    good_c = Candidate(good.chain, good.template)
    cands = [Candidate("model", broken), good_c, Candidate("model", twin)]
    outcomes, to_check = screen("synth_todo", cands)
    assert [o.rejection if o else None for o in outcomes] == ["load", None, "duplicate"]
    assert [i for i, _, _ in to_check] == [1]
    got = Admission([o if o else Outcome(cands[i], True) for i, o in enumerate(outcomes)])
    assert not any("COLLAPSED" in line for line in got.summary_lines())
    same = Admission([Outcome(good_c, True)] + [Outcome(good_c, False, "duplicate", "") for _ in range(3)])
    assert any(line.startswith(f"generator {good.chain}:") and "COLLAPSED" in line for line in same.summary_lines())
    path, rejected = write_suite(tmp_path, "synth_todo", got)
    assert list(load_suite_path(path.parent).templates) == [good.template["id"]]
    assert rejected.read_text().count("\n") == 2


def test_verdicts_are_stored_only_for_what_ci_checks(tmp_path: Path) -> None:
    good = todo_gen.generate(1)[0]
    path, _ = write_suite(tmp_path, "synth_todo", Admission([Outcome(Candidate(good.chain, good.template), True)]))
    for seeds, isolation in (((1, 2), "shared"), ((0, 1, 2), None)):
        with pytest.raises(ValueError, match="is not CI's check"):
            store_verdicts(path, "synth_todo", Admission([], seeds=seeds, isolation=isolation),
                           cache=VerdictCache(tmp_path / "v", enabled=True))


@pytest.mark.slow
def test_admission_runs_judge_qa_and_rejects_cheating_judges(tmp_path: Path) -> None:
    good = next(g for g in todo_gen.generate(40) if g.chain == "mark_done")
    blind = copy.deepcopy(good.template)  # reads nothing the task changes: the list exists before and after
    blind["id"] = "synth_todo.blind@1"
    blind["judge"]["checks"] = [{"check": "the list exists", "get": {"kind": "app_state",
                                                                      "path": "lists[id={todo.list_id}]"},
                                 "expect": {"op": "present"}}]
    lax = copy.deepcopy(good.template)  # reads the done flag but takes either value: the no-op passes
    lax["id"] = "synth_todo.lax@1"
    lax["judge"]["checks"] = [{"check": "the todo is done or not", "get": {
        "kind": "sql", "query": "SELECT COUNT(*) FROM todos WHERE id = ? AND done IN (0, 1)",
        "params": ["{todo.id}"], "scalar": True}, "expect": {"op": "equals", "value": 1}}]
    got: Admission = admit("synth_todo", [Candidate("mark_done", good.template), Candidate("model", blind),
                                          Candidate("model", lax)])
    assert [(o.admitted, o.rejection) for o in got.outcomes][:2] == [(True, ""), (False, "load")]
    assert not got.outcomes[2].admitted and got.outcomes[2].rejection not in ("load", "duplicate", "instantiate")
    assert any(line.startswith("admitted_per_min=") for line in got.summary_lines())
    # the admitted one's clean report is CI's verdict: `cua tasks check --seeds 1 --isolation shared` on the
    # written file reuses it; the same template edited is checked again
    path, _ = write_suite(tmp_path, "synth_todo", got)
    cache = VerdictCache(tmp_path / "verdicts", enabled=True)
    assert store_verdicts(path, "synth_todo", got, cache=cache) == 1
    again = asyncio.run(check_templates(load_file(path, suite="synth_todo"), seeds=[0], isolation="shared",
                                        cache=cache))
    assert [(t.template_id, t.reused, t.failures) for t in again.templates] == [(good.template["id"], True, [])]
    edited = copy.deepcopy(good.template)
    edited["max_steps"] = int(edited.get("max_steps") or 20) + 1
    path.write_text(suite_text("synth_todo", [edited]))
    [template] = load_file(path, suite="synth_todo")
    assert cache.get(_cache_key(Digests(), template, [0], "shared")) is None


def test_the_diversity_report_reads_the_written_suites_back(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from cua.cli import main
    from cua.synth.report import diversity_report

    drawn = todo_gen.generate(12)
    got = Admission([Outcome(Candidate(g.chain, g.template, g.scope, g.phrasing), True) for g in drawn])
    path, _ = write_suite(tmp_path, "synth_todo", got)
    assert path is not None
    lines = diversity_report([load_suite_path(path.parent)])
    chains = {g.chain for g in drawn}
    assert lines[0] == f"suite synth_todo: templates=12 chains={len(chains)} apps=todo"
    assert "distinct_chains=" + str(len(chains)) in lines[1] and not any(" ?" in line for line in lines)
    splits = {g.template["tags"]["split"] for g in drawn}
    assert any(line.startswith("diversity by split: ") and all(f"{s}=" in line for s in splits) for line in lines)
    # nothing admitted: no suite is written (a suite holds one template at least)
    nothing, _ = write_suite(tmp_path / "none", "synth_todo", Admission([]))
    assert nothing is None and not (tmp_path / "none" / "synth_todo").exists()
    assert main(["tasks", "diversity", "no_such_suite"]) == 2
    assert "unknown suite 'no_such_suite'" in capsys.readouterr().err


def test_the_diversity_report_reads_a_signature_admission_recorded_while_it_stands(tmp_path: Path) -> None:
    """A signature resets the app on every seed for each parameter, seconds a template over a
    synthesised suite of thousands; the report takes the one admission recorded, exactly while
    the template keeps the key it was admitted under, and computes it again otherwise."""
    from cua.synth.admit import signature
    from cua.synth.report import diversity_report

    drawn = todo_gen.generate(3)
    recorded = Admission([Outcome(Candidate(g.chain, g.template, g.scope, g.phrasing), True, signature="recorded")
                          for g in drawn])
    path, _ = write_suite(tmp_path, "synth_todo", recorded)
    assert path is not None
    assert "distinct_signatures=1 " in diversity_report([load_suite_path(path.parent)])[1]
    # one template edited after its admission: its key changed, its signature is read again
    data = yaml.safe_load(path.read_text())
    data["templates"][0]["max_steps"] = int(data["templates"][0].get("max_steps") or 20) + 1
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    lines = diversity_report([load_suite_path(path.parent)])
    assert "distinct_signatures=2 " in lines[1]
    [edited] = [t for t in load_file(path, suite="synth_todo") if t.id == data["templates"][0]["id"]]
    assert signature(edited, (0, 1, 2)) != "recorded"


def test_an_admission_stands_while_its_digests_do(tmp_path: Path) -> None:
    """A larger --count keeps what an earlier run into the same folder admitted, without judge QA,
    exactly while the template, its app and the judge code keep the key it was admitted under."""
    from cua.synth.admit import earlier_admissions

    drawn = todo_gen.generate(4)
    first = [Candidate(g.chain, g.template, g.scope, g.phrasing) for g in drawn[:3]]
    write_suite(tmp_path, "synth_todo", Admission([Outcome(c, True) for c in first]))
    earlier = earlier_admissions(tmp_path, "synth_todo")
    assert sorted(earlier) == sorted(c.template["id"] for c in first)
    # an admission on other seeds or in another isolation proves nothing about these
    assert earlier_admissions(tmp_path, "synth_todo", seeds=(0, 1)) == {}
    assert earlier_admissions(tmp_path, "synth_todo", isolation="container") == {}
    # kept: no judge QA runs (no sandbox is opened here); a new candidate that judges what a kept
    # one judges is still a duplicate
    twin = copy.deepcopy(drawn[0].template)
    twin["instruction"] = "Please " + twin["instruction"]
    got = admit("synth_todo", first + [Candidate("model", twin)], earlier=earlier)
    assert [(o.admitted, o.kept, o.rejection) for o in got.outcomes] == [(True, True, "")] * 3 + [
        (False, False, "duplicate")]
    assert got.summary_lines()[0].startswith("candidates=4 admitted=3 kept=3 ")
    assert got.summary_lines()[1] == "admitted_per_min=0.00"
    # a template edited in the file, a provenance row without its key, a changed definition: checked again
    path = tmp_path / "synth_todo" / "synth_todo.yaml"
    edited = [copy.deepcopy(c.template) for c in first]
    edited[0]["max_steps"] = int(edited[0].get("max_steps") or 20) + 1
    path.write_text(suite_text("synth_todo", edited))
    rows = (tmp_path / "synth_todo.admitted.jsonl").read_text().splitlines()
    (tmp_path / "synth_todo.admitted.jsonl").write_text("\n".join([rows[0], rows[1].replace('"admission"', '"x"'),
                                                                  rows[2]]) + "\n")
    assert sorted(earlier_admissions(tmp_path, "synth_todo")) == [first[2].template["id"]]
    # nothing stands where the provenance is missing
    (tmp_path / "synth_todo.admitted.jsonl").unlink()
    assert earlier_admissions(tmp_path, "synth_todo") == {}


def test_a_suite_of_ones_own_is_named_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--suite` names what `cua tasks synth` writes; a name that is no suite's is a usage error."""
    import dataclasses

    from cua.cli import main
    from cua.synth.generators import schema_for

    with pytest.raises(SystemExit) as exc:
        main(["tasks", "synth", "--app", "todo", "--suite", "My-Todo", "--out", "x"])
    assert exc.value.code == 2 and "'My-Todo' is not a suite name" in capsys.readouterr().err
    from cua.synth.schema import generate

    mine = generate(dataclasses.replace(schema_for("todo"), suite="my_todo"), 3)
    loaded = load_suite_path(write_suite(Path(tmp_path), "my_todo", Admission(
        [Outcome(Candidate(g.chain, g.template), True) for g in mine]))[0] or tmp_path)
    assert loaded.name == "my_todo" and all(t.startswith("my_todo.") for t in loaded.templates)


@pytest.mark.slow
def test_a_stopped_admission_keeps_what_it_decided(tmp_path: Path) -> None:
    """SIGTERM (as Ctrl-C) after the first decision: the checks in flight are cancelled, what was
    decided is written whole, and the same command goes on from it rather than starting again."""
    import os
    import signal
    import subprocess
    import sys

    from cua.synth.admit import earlier_admissions

    env = {**os.environ, "CUA_QA_CACHE_DIR": str(tmp_path / "verdicts")}
    with subprocess.Popen([sys.executable, "-m", "cua.cli", "tasks", "synth", "--app", "todo", "--count", "4",
                           "--out", str(tmp_path / "out")], env=env, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, first + rest
    assert first.startswith("[1/4] synth_todo.") and "interrupted, 1 of the 4 candidates decided" in rest
    decided = first.split()[1].rstrip(":")
    kept = earlier_admissions(tmp_path / "out", "synth_todo")
    rejected = (tmp_path / "out" / "synth_todo.rejected.jsonl").read_text()
    assert (list(kept) == [decided]) if first.rstrip().endswith("admitted") else (decided in rejected and not kept)
    assert not list((tmp_path / "out").rglob(".*.tmp"))
    # its sandboxes closed with it: nothing of its session (browser, app servers) is left
    assert subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True).returncode == 1


def test_a_stop_inside_a_judges_plain_code_is_reported_not_printed(caplog: pytest.LogCaptureFixture) -> None:
    """Ctrl-C or SIGTERM lands where it lands: in one check's plain code (a judge's diff), that
    task ends with the KeyboardInterrupt, and asyncio would print it as "Task exception was never
    retrieved" once collected. The admission reports the stop; the other checks are cancelled."""
    import gc
    import logging

    from cua.synth.admit import run_until_interrupted

    cancelled: list[str] = []

    async def judging() -> None:
        await asyncio.sleep(0.01)
        raise KeyboardInterrupt  # as the signal handler raises it in plain code

    async def waiting() -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append("waiting")
            raise

    async def checks() -> None:
        await asyncio.gather(asyncio.ensure_future(judging()), asyncio.ensure_future(waiting()))

    async def done() -> int:
        return 1

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        assert run_until_interrupted(checks()) is False
        gc.collect()
    assert cancelled == ["waiting"]
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
    assert run_until_interrupted(done()) is True
