"""`cua export --format transitions` and `--format prm --execute`: world-model transitions and
executed step-level negatives, from real oracle and near-miss episodes of a todo task in
real Chromium, executed again in real Chromium; a replay that diverges and a task no longer
bundled drop rows (or mark cases) with their reason; the exports load with `datasets`."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cua.cli import main as cli
from cua.export.diffs import axtree_diff, state_diff
from cua.screen_diff import SCREEN_THRESHOLD, screen_difference
from cua.state import StateResult
from cua.trajectory import read_trajectory

TASK = "todo.add_todo@1"


async def _episodes(root: Path) -> None:
    from cua.episode import OracleAgent, open_local, run_episode
    from cua.observation import ObserveOptions
    from cua.tasks.registry import get_template
    from cua.trajectory import TrajectoryWriter

    for which in ("oracle", "near_miss"):
        instance = get_template(TASK).instantiate(0)
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            record = await run_episode(handle, instance, OracleAgent(which),
                                       writer=TrajectoryWriter(root / which), observe=ObserveOptions(axtree=True),
                                       producer="record")
            assert record.status == "completed" and record.verdict is not None
            assert record.verdict.passed is (which == "oracle")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A passing oracle episode and a failing near miss of one todo task, trees observed."""
    root = tmp_path_factory.mktemp("runs")
    asyncio.run(_episodes(root))
    return root


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _load(path: Path, cache: Path) -> Any:
    import datasets

    return datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(cache))


@pytest.mark.slow
def test_transitions_line_up_with_the_trajectory_and_load_with_datasets(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "t"
    assert cli(["export", str(runs), "--format", "transitions", "--out", str(out)]) == 0
    rows = _rows(out / "transitions.jsonl")
    by_id = {read_trajectory(p).meta.id: read_trajectory(p) for p in (runs / "oracle", runs / "near_miss")}  # type: ignore[union-attr]
    assert len(rows) == sum(len(t.steps) for t in by_id.values()) > 10
    for row in rows:
        traj = by_id[row["trajectory_id"]]
        refs = traj.observations()
        t = row["step"]
        assert json.loads(row["action"]) == traj.steps[t].action
        # frame t is the one the action was taken on, frame t+1 the one it led to
        assert (out / row["image"]).read_bytes() == traj.frame_bytes(refs[t])
        assert (out / row["next_image"]).read_bytes() == traj.frame_bytes(refs[t + 1])
        assert row["next_url"] == refs[t + 1].url
        assert row["executed"] is False and row["judge_state_diff"] is None
        assert json.loads(row["axtree_diff"]).keys() == {"added", "removed", "changed"}
    # typing the title changes the title box's value in the tree
    oracle = [r for r in rows if r["agent_kind"] == "oracle"]
    typed = next(r for r in oracle if r["action_type"] == "type")
    changed = json.loads(typed["axtree_diff"])["changed"]
    title = json.loads(typed["action"])["text"]
    assert any(c["role"] == "textbox" and c["after"]["value"] == title for c in changed), changed
    ds = _load(out / "transitions.jsonl", tmp_path / "cache")
    assert len(ds) == len(rows) and ds[0]["image"] == rows[0]["image"]


@pytest.mark.slow
def test_executed_transitions_hold_the_judge_state_change(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "x"
    assert cli(["export", str(runs / "oracle"), "--format", "transitions", "--execute", "--local",
                "--images", "embed", "--out", str(out)]) == 0
    rows = _rows(out / "transitions.jsonl")
    traj = read_trajectory(runs / "oracle")
    assert [r["step"] for r in rows] == list(range(len(traj.steps)))
    for row in rows:
        assert row["executed"] is True and row["screen_diff"] <= SCREEN_THRESHOLD
        assert row["image"].startswith("data:image/jpeg;base64,")
        assert row["progress_delta"] == pytest.approx(row["progress_after"] - row["progress_before"])
    assert rows[0]["progress_before"] == 0 and rows[-1]["progress_after"] == 1 and rows[-1]["passed_after"] is True
    # the last click adds the todo: the judge's table read gains exactly that row
    last = json.loads(rows[-1]["judge_state_diff"])
    added = [c["change"]["added"] for c in last if c["query"].get("kind") == "sql"]
    assert added and added[0][0]["title"] in traj.meta.instruction  # type: ignore[union-attr]
    # a step that changes nothing the judge reads has an empty diff, not a missing one
    assert any(json.loads(r["judge_state_diff"]) == [] for r in rows)
    assert len(_load(out / "transitions.jsonl", tmp_path / "cache")) == len(rows)


@pytest.mark.slow
def test_executed_in_parallel_the_rows_are_those_of_one_at_a_time(runs: Path, tmp_path: Path) -> None:
    """--parallel 2 executes the oracle and the near miss at once, each in its own sandbox;
    the file holds the same rows, in the same order, as one at a time writes."""
    def executed(parallel: int) -> list[tuple[Any, ...]]:
        out = tmp_path / f"j{parallel}"
        assert cli(["export", str(runs), "--format", "transitions", "--execute", "--local",
                    "--parallel", str(parallel), "--out", str(out)]) == 0
        return [(r["trajectory_id"], r["step"], r["action"], r["executed"], r["progress_before"], r["progress_after"],
                 r["passed_after"], r["judge_state_diff"]) for r in _rows(out / "transitions.jsonl")]

    one = executed(1)
    assert len({r[0] for r in one}) == 2 and all(r[3] is True for r in one)
    assert executed(2) == one


def _black_jpeg(width: int, height: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (width, height), (0, 0, 0)).save(buf, "JPEG")
    return buf.getvalue()


@pytest.mark.slow
def test_a_replay_that_diverges_drops_its_rows_with_the_reason(runs: Path, tmp_path: Path) -> None:
    src = tmp_path / "src" / "oracle"
    shutil.copytree(runs / "oracle", src)
    traj = read_trajectory(src)
    after3 = traj.observations()[4]
    assert after3.frame is not None
    (src / after3.frame).write_bytes(_black_jpeg(after3.size.width, after3.size.height))
    out = tmp_path / "x"
    assert cli(["export", str(src), "--format", "transitions", "--execute", "--local", "--out", str(out)]) == 0
    rows = _rows(out / "transitions.jsonl")
    assert [r["step"] for r in rows] == [0, 1, 2]  # step 3 led to a screen the recording does not show
    manifest = json.loads((out / "export.json").read_text())
    [dropped] = manifest["options"]["dropped"]
    assert dropped["step"] == 3 and dropped["rows"] == len(traj.steps) - 3
    assert "diverged" in dropped["reason"] and "step 3" in dropped["reason"] and "screen" in dropped["reason"]
    assert manifest["skipped"] == {dropped["kind"]: len(traj.steps) - 3}
    # PRM cases past the divergence are not executed, and say why; those before it are
    assert cli(["export", str(src), "--format", "prm", "--execute", "--local", "--out", str(tmp_path / "p")]) == 0
    cases = {c["step"]: c for c in _rows(tmp_path / "p" / "prm.jsonl")}
    assert {k for k, c in cases.items() if c["wrong_executed"]} == {k for k in cases if k <= 3}
    for case in (c for k, c in cases.items() if k > 3):
        assert "diverged" in case["wrong_not_executed"] and "step 3" in case["wrong_not_executed"]
        assert case["wrong_next_image"] is None and case["continuation_passed"] is None


@pytest.mark.slow
def test_a_task_no_longer_bundled_is_a_reason_not_a_traceback(runs: Path, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "src" / "oracle"
    shutil.copytree(runs / "oracle", src)
    meta = json.loads((src / "meta.json").read_text())
    meta["task_id"] = "todo.retired_task@1"
    (src / "meta.json").write_text(json.dumps(meta))
    assert cli(["export", str(src), "--format", "transitions", "--out", str(tmp_path / "a")]) == 0
    assert len(_rows(tmp_path / "a" / "transitions.jsonl")) == len(read_trajectory(src).steps)
    assert cli(["export", str(src), "--format", "transitions", "--execute", "--local",
                "--out", str(tmp_path / "b")]) == 0
    assert _rows(tmp_path / "b" / "transitions.jsonl") == []
    [dropped] = json.loads((tmp_path / "b" / "export.json").read_text())["options"]["dropped"]
    assert "todo.retired_task@1" in dropped["reason"] and "not bundled" in dropped["reason"]
    assert cli(["export", str(src), "--format", "prm", "--execute", "--local", "--out", str(tmp_path / "c")]) == 0
    cases = _rows(tmp_path / "c" / "prm.jsonl")
    assert cases and all(c["wrong_executed"] is False and "not bundled" in c["wrong_not_executed"] for c in cases)
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
def test_executed_prm_cases_record_the_wrong_actions_consequence(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "prm"
    assert cli(["export", str(runs), "--format", "prm", "--execute", "--local", "--out", str(out)]) == 0
    cases = _rows(out / "prm.jsonl")
    good = read_trajectory(runs / "oracle")
    refs = good.observations()
    near = [c for c in cases if c["wrong_source"] == "near_miss"]
    assert near and all(c["wrong_execution"] == "recorded" and c["continuation_passed"] is False for c in near)
    executed = [c for c in cases if c["wrong_source"] == "perturbation"]
    assert executed and all(c["wrong_executed"] is True and c["wrong_execution"] == "executed" for c in executed)
    clicks = [c for c in executed if json.loads(c["correct_action"])["type"] == "click"]
    assert clicks
    for case in clicks:
        right_next = good.frame_bytes(refs[case["step"] + 1])
        assert right_next is not None
        wrong_next = (out / case["wrong_next_image"]).read_bytes()
        assert screen_difference(right_next, wrong_next) > SCREEN_THRESHOLD, case["id"]
    for case in executed:
        assert case["wrong_progress_after"] <= case["correct_progress_after"], case["id"]
        assert case["continuation"] == "recorded_actions" and isinstance(case["continuation_passed"], bool)
        assert isinstance(json.loads(case["wrong_state_diff"]), list)
    # the last click moved off the Add button: the todo is not added, and progress falls short
    last = next(c for c in executed if c["step"] == len(good.steps) - 1)
    assert last["wrong_progress_after"] < last["correct_progress_after"] == 1
    ds = _load(out / "prm.jsonl", tmp_path / "cache")
    assert len(ds) == len(cases) and set(ds["wrong_executed"]) == {True}


def test_axtree_diff_names_nodes_by_role_name_and_path() -> None:
    flat_before = [{"role": "button", "name": "Add"}, {"role": "textbox", "name": "Title", "value": ""},
                   {"role": "listitem", "name": "Milk"}, {"role": "listitem", "name": "Milk"}]
    flat_after = [{"role": "button", "name": "Add"}, {"role": "textbox", "name": "Title", "value": "Eggs"},
                  {"role": "listitem", "name": "Milk"}, {"role": "listitem", "name": "Bread"}]
    diff = axtree_diff(flat_before, flat_after)
    assert diff is not None
    assert diff["added"] == [{"role": "listitem", "name": "Bread", "path": "", "n": 0}]
    assert diff["removed"] == [{"role": "listitem", "name": "Milk", "path": "", "n": 1}]
    [changed] = diff["changed"]
    assert changed["name"] == "Title" and changed["before"]["value"] == "" and changed["after"]["value"] == "Eggs"
    nested = [{"role": "frame", "name": "Editor", "children": [{"role": "check box", "name": "Bold"}]}]
    ticked = [{"role": "frame", "name": "Editor", "children": [{"role": "check box", "name": "Bold",
                                                                  "states": ["checked"]}]}]
    [change] = axtree_diff(nested, ticked)["changed"]  # type: ignore[index]
    assert change["path"] == "frame 'Editor'" and change["after"]["states"] == ["checked"]
    assert axtree_diff(None, flat_after) is None and axtree_diff(flat_after, flat_after) == {
        "added": [], "removed": [], "changed": []}


def test_state_diff_says_what_each_read_gained_lost_or_changed() -> None:
    key = json.dumps({"kind": "sql", "query": "SELECT title FROM todos", "params": None}, sort_keys=True)
    flag = json.dumps({"kind": "dom", "selector": "#done"}, sort_keys=True)
    before = {key: StateResult(value=[{"title": "Milk"}]), flag: StateResult(value={"on": False, "n": 1})}
    after = {key: StateResult(value=[{"title": "Milk"}, {"title": "Eggs"}]),
             flag: StateResult.failure("not_found", "gone")}
    diff = state_diff(before, after)
    by_kind = {d["query"]["kind"]: d for d in diff}
    assert by_kind["sql"]["query"] == {"kind": "sql", "query": "SELECT title FROM todos"}
    assert by_kind["sql"]["change"] == {"added": [{"title": "Eggs"}], "removed": []}
    assert by_kind["dom"]["change"] == {"before": {"on": False, "n": 1}, "after": {"error": "not_found"}}
    assert state_diff(after, after) == []
    reordered = {key: StateResult(value=[{"title": "Eggs"}, {"title": "Milk"}])}
    assert [d["change"] for d in state_diff({key: after[key]}, reordered)] == [{"reordered": True}]
    nested = state_diff({flag: StateResult(value={"on": False, "n": 1})}, {flag: StateResult(value={"on": True, "m": 2})})
    assert nested[0]["change"] == {"changed": {"on": {"before": False, "after": True}}, "added": {"m": 2},
                                   "removed": {"n": 1}}


def test_execute_is_refused_for_formats_that_do_not_use_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["export", str(tmp_path), "--format", "jsonl", "--execute", "--out", str(tmp_path / "o")]) == 2
    assert "--execute is for --format prm or transitions" in capsys.readouterr().err


def test_a_step_that_is_no_unified_action_drops_the_trajectory_with_the_reason(tmp_path: Path) -> None:
    """Refused before any sandbox starts: the trajectory's rows are dropped, and say why."""
    from PIL import Image

    from cua.observation import Observation, Screenshot, Size
    from cua.task import Verdict
    from cua.trajectory import AgentInfo, StepLine, TrajectoryEnd, TrajectoryMeta, TrajectoryWriter

    buf = io.BytesIO()
    Image.new("RGB", (64, 40)).save(buf, "JPEG")
    size = Size(width=64, height=40)
    obs = Observation(sandbox_id="s", frame=size, screen=size,
                      screenshot=Screenshot(format="jpeg", width=64, height=40, data=buf.getvalue()))
    writer = TrajectoryWriter(tmp_path / "src" / "one")
    ref = writer.begin(TrajectoryMeta(producer="record", task_id=TASK, seed=0, instruction="x",
                                      sandbox_kind="browser", agent=AgentInfo(name="person", kind="human")), obs)
    writer.observation(obs)
    writer.step(StepLine(index=0, observation=ref, action={"type": "fly", "to": "the moon"}))
    writer.end(TrajectoryEnd(status="completed", steps=1, verdict=Verdict(score=0, passed=False, progress=0)))
    out = tmp_path / "t"
    assert cli(["export", str(tmp_path / "src"), "--format", "transitions", "--execute", "--local",
                "--out", str(out)]) == 0
    assert _rows(out / "transitions.jsonl") == []
    [dropped] = json.loads((out / "export.json").read_text())["options"]["dropped"]
    assert dropped["rows"] == 1 and "step 0 is not a unified action" in dropped["reason"]
