"""`cua export`: an eval run and recordings (real oracle and near-miss episodes in real
Chromium) become Parquet, hub-ready and JSONL datasets that pyarrow and `datasets` read,
each family's SFT rows (prompts exactly as the policy server builds them, assistant turns
that parse back to the recorded actions), and step-level PRM cases."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cua.cli import main as cli
from cua.trajectory import (
    AgentInfo,
    ObservationRef,
    StepLine,
    TrajectoryEnd,
    TrajectoryMeta,
    TrajectoryWriter,
    read_trajectory,
)

TASKS = ["todo.add_todo@1", "todo.add_tag@1"]
FAMILIES = ["qwen2.5-vl", "qwen3-vl", "ui-tars-1.5", "openai", "anthropic"]


async def _episodes(folder: Path, which: str, producer: str) -> None:
    from cua.episode import OracleAgent, open_local, run_episode
    from tasks.registry import get_template

    for tid in TASKS:
        instance = get_template(tid).instantiate(0)
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            writer = TrajectoryWriter(folder / f"{tid}__{which}")
            record = await run_episode(handle, instance, OracleAgent(which), writer=writer,  # type: ignore[arg-type]
                                       producer=producer)  # type: ignore[arg-type]
            assert record.status == "completed", record


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An eval run of two oracle episodes, two recordings, and two near misses (failing)."""
    root = tmp_path_factory.mktemp("runs")
    assert cli(["eval", *TASKS, "--policy", "oracle", "--local", "--out", str(root / "eval"), "--no-progress"]) == 0
    asyncio.run(_episodes(root / "recordings", "oracle", "record"))
    asyncio.run(_episodes(root / "near", "near_miss", "eval"))
    return root


def _steps_under(path: Path) -> int:
    from cua.trajectory import find_trajectories

    return sum(len(read_trajectory(f).steps) for f in find_trajectories(path))


@pytest.mark.slow
def test_eval_run_and_recordings_export_to_parquet(runs: Path, tmp_path: Path) -> None:
    import datasets
    import pyarrow.parquet as pq
    from PIL import Image

    out = tmp_path / "pq"
    source = tmp_path / "src"
    shutil.copytree(runs / "eval", source / "eval")
    shutil.copytree(runs / "recordings", source / "recordings")
    assert cli(["export", str(source), "--format", "parquet", "--out", str(out)]) == 0
    table = pq.read_table(out / "steps.parquet")
    assert table.num_rows == _steps_under(runs / "eval") + _steps_under(runs / "recordings") > 4
    assert set(table.column("producer").to_pylist()) == {"eval", "record"}
    ds = datasets.load_dataset("parquet", data_files=str(out / "steps.parquet"), split="train",
                               cache_dir=str(tmp_path / "cache"))
    assert len(ds) == table.num_rows
    for row in ds:
        assert isinstance(row["image"], Image.Image)
        assert row["image"].size == (row["frame_width"], row["frame_height"])
        assert row["passed"] is True and row["app"] == "todo"
        if row["x"] is not None:
            assert row["x_norm"] == pytest.approx(row["x"] / row["frame_width"])
            assert 0 <= row["x_norm"] <= 1 and 0 <= row["y_norm"] <= 1
            assert json.loads(row["action"])["x"] == pytest.approx(row["x"])
    assert {r["is_last"] for r in ds} == {True, False}
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["trajectories"] == 4 and manifest["rows"] == table.num_rows


@pytest.mark.slow
def test_episode_rows_hub_folder_and_jsonl(runs: Path, tmp_path: Path) -> None:
    import datasets

    assert cli(["export", str(runs), "--format", "hf", "--rows", "episode", "--out", str(tmp_path / "hf")]) == 0
    dd = datasets.load_dataset(str(tmp_path / "hf"), cache_dir=str(tmp_path / "cache"))
    rows = [r for split in dd.values() for r in split]
    assert len(rows) == 6
    for row in rows:
        assert len(row["images"]) == len(row["actions"]) == row["num_steps"] > 0
        assert row["images"][0].size[0] > 0
        evidence = json.loads(row["evidence"])
        assert evidence and {"check", "passed"} <= set(evidence[0])
    assert sorted(r["passed"] for r in rows) == [False, False, True, True, True, True]

    assert cli(["export", str(runs), "--format", "jsonl", "--images", "path", "--out", str(tmp_path / "j")]) == 0
    dj = datasets.load_dataset(str(tmp_path / "j"), cache_dir=str(tmp_path / "cache"))
    steps = [r for split in dj.values() for r in split]
    assert len(steps) == _steps_under(runs)
    # paths are relative to the export folder
    assert all(not Path(r["image"]).is_absolute() and (tmp_path / "j" / r["image"]).is_file() for r in steps), \
        [r["image"] for r in steps][:3]


@pytest.mark.slow
def test_filters(runs: Path, tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    def rows(*args: str) -> list[dict[str, Any]]:
        out = tmp_path / f"f{len(list(tmp_path.iterdir()))}"
        assert cli(["export", str(runs), "--format", "parquet", "--rows", "episode", "--out", str(out), *args]) == 0
        return pq.read_table(out / "episodes.parquet").to_pylist()

    assert {r["agent_kind"] for r in rows("--verdict", "fail")} == {"near_miss"}
    assert len(rows("--verdict", "pass")) == 4
    assert {r["producer"] for r in rows("--producer", "record")} == {"record"}
    assert {r["task_id"] for r in rows("--task", "todo.add_tag*")} == {"todo.add_tag@1"}
    assert len(rows("--app", "todo", "--tier", "1")) + len(rows("--app", "todo", "--tier", "2")) + \
        len(rows("--app", "todo", "--tier", "3")) == 6
    split = {r["split"] for r in rows()}
    for name in split:
        assert {r["split"] for r in rows("--split", name)} == {name}
    out = tmp_path / "none"
    assert cli(["export", str(runs), "--format", "parquet", "--app", "nope", "--out", str(out)]) == 0
    assert json.loads((out / "export.json").read_text())["rows"] == 0


class _ReplayBackend:
    """A chat backend that answers each prompt with the recorded turn's text and keeps
    what it was sent: the policy server's real engine builds the prompts."""

    name = "replay"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.sent: list[list[dict[str, Any]]] = []

    async def complete(self, messages: list[dict[str, Any]], request: Any) -> Any:
        from cua.policy.engine import Completion

        self.sent.append(messages)
        return Completion(text=self.answers[len(self.sent) - 1])

    async def aclose(self) -> None:
        pass


def _same_messages(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> None:
    assert [m["role"] for m in a] == [m["role"] for m in b]
    for ma, mb in zip(a, b, strict=True):
        assert len(ma["content"]) == len(mb["content"])
        for pa, pb in zip(ma["content"], mb["content"], strict=True):
            assert pa["type"] == pb["type"]
            if pa["type"] == "text":
                assert pa["text"] == pb["text"]
            else:
                assert (pa["image"].size, pa["image"].data) == (pb["image"].size, pb["image"].data)


@pytest.mark.slow
@pytest.mark.parametrize("family_name", FAMILIES)
def test_sft_prompts_are_what_the_policy_server_sends(runs: Path, family_name: str) -> None:
    """For every turn, the SFT prompt equals the messages `ModelPolicy.act` sends the model
    when it is given the same observations and answers with the same texts."""
    from cua.export.sft import observation_of, sft_samples, turns_of
    from cua.policy.engine import ModelPolicy
    from cua.policy.families import get_family
    from cua.trajectory import find_trajectories

    family = get_family(family_name)
    for folder in find_trajectories(runs / "eval"):
        traj = read_trajectory(folder)
        samples = list(sft_samples(traj, family))
        assert len(samples) == len(turns_of(traj.steps))
        backend = _ReplayBackend([s.text for s in samples])
        policy = ModelPolicy(backend, family=family_name)
        previous = None
        groups = turns_of(traj.steps)
        for group in groups:
            assert traj.meta is not None
            asyncio.run(policy.act("s", traj.meta.instruction, observation_of(traj, group[0], previous)))
            previous = group[-1]
        assert len(backend.sent) == len(samples)
        for sent, sample in zip(backend.sent, samples, strict=True):
            _same_messages(sent, sample.messages[:-1])


def _last_assistant(row: dict[str, Any], family: str) -> tuple[str, list[bool]]:
    if family in ("qwen2.5-vl", "qwen3-vl", "ui-tars-1.5"):
        gpt = [c for c in row["conversations"] if c["from"] == "gpt"]
        assert all(c["from"] != "human" or "loss" not in c for c in row["conversations"])
        return gpt[-1]["value"], [c["loss"] for c in gpt]
    if family == "openai":
        asst = [m for m in row["messages"] if m["role"] == "assistant"]
        assert all("weight" not in m for m in row["messages"] if m["role"] != "assistant")
        return asst[-1]["content"], [bool(m["weight"]) for m in asst]
    asst = [m for m in row["messages"] if m["role"] == "assistant"]
    return asst[-1]["content"][0]["text"], [m["loss"] for m in asst]


@pytest.mark.slow
@pytest.mark.parametrize("family_name", FAMILIES)
def test_sft_rows_round_trip_through_the_parsers(runs: Path, tmp_path: Path, family_name: str) -> None:
    from _same_action import assert_same

    from cua.actions import parse_action
    from cua.observation import Size
    from cua.policy.families import get_family

    out = tmp_path / "sft"
    assert cli(["export", str(runs / "eval"), "--format", "sft", "--family", family_name, "--out", str(out)]) == 0
    rows = [json.loads(line) for line in (out / f"{family_name}.jsonl").read_text().splitlines()]
    assert len(rows) == _steps_under(runs / "eval")
    family = get_family(family_name)
    by_id = {}
    from cua.trajectory import find_trajectories

    for folder in find_trajectories(runs / "eval"):
        traj = read_trajectory(folder)
        assert traj.meta is not None
        by_id[traj.meta.id] = traj
    for row in rows:
        text, losses = _last_assistant(row, family_name)
        assert losses[-1] is True and not any(losses[:-1])
        line = by_id[row["trajectory_id"]].steps[row["step"]]
        frame = Size(width=line.observation.size.width, height=line.observation.size.height)
        parsed = family.parse(text, family.context(frame)).actions
        if row["approximations"]:  # documented: Claude's end of task without an answer
            assert family_name == "anthropic" and line.action is not None and line.action["type"] == "done"
            continue
        assert len(parsed) == 1
        assert_same(parsed[0], parse_action(line.action))
        images = row.get("image") or [p["image_url"]["url"] for m in row.get("messages", []) if m["role"] == "user"
                                      for p in m["content"] if isinstance(p, dict) and p.get("type") == "image_url"] \
            or [p["source"]["path"] for m in row.get("messages", []) for p in m["content"]
                if isinstance(p, dict) and p.get("type") == "image"]
        assert images and all((out / p).is_file() for p in images)
        assert 1 <= len(images) <= 3
    if family_name == "qwen2.5-vl":  # the image is the model's: 1280x720 is sent as 1288x728
        from PIL import Image

        assert by_id[rows[0]["trajectory_id"]].steps[0].observation.size == Size(width=1280, height=720)
        with Image.open(out / rows[0]["image"][0]) as image:
            assert image.size == (1288, 728)


@pytest.mark.slow
def test_prm_cases_from_near_misses_and_perturbations(runs: Path, tmp_path: Path) -> None:
    out = tmp_path / "prm"
    assert cli(["export", str(runs), "--format", "prm", "--out", str(out)]) == 0
    cases = [json.loads(line) for line in (out / "prm.jsonl").read_text().splitlines()]
    near = [c for c in cases if c["wrong_source"] == "near_miss"]
    assert len(near) >= 2
    for case in near:
        assert case["wrong_passed"] is False and json.loads(case["wrong_evidence"])
        assert json.loads(case["correct_evidence"])
        assert case["correct_action"] != case["wrong_action"]
        good = [read_trajectory(p) for p in (runs / "eval" / "trajectories").iterdir()
                if read_trajectory(p).meta.id == case["correct_trajectory_id"]]  # type: ignore[union-attr]
        if good:
            prefix = [s.action for s in good[0].steps[: case["step"]]]
            assert [h["action"] for h in json.loads(case["history"])] == prefix
    perturbed = [c for c in cases if c["wrong_source"] == "perturbation"]
    assert perturbed and all(c["wrong_perturbation"] for c in perturbed)
    for case in perturbed:
        right, wrong = json.loads(case["correct_action"]), json.loads(case["wrong_action"])
        assert right != wrong
        if right["type"] == "click":
            moved = abs(wrong["x"] - right["x"]) + abs(wrong["y"] - right["y"])
            assert moved >= 1 and 0 <= wrong["x"] < case["frame_width"]


def test_bad_source_and_occupied_output_are_the_callers_fault(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["export", str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    assert "does not exist" in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli(["export", str(empty), "--format", "jsonl", "--out", str(tmp_path / "o2")]) == 2
    assert "no trajectory" in capsys.readouterr().err
    assert cli(["export", str(empty), "--format", "sft", "--out", str(tmp_path / "o3")]) == 2
    assert "--family" in capsys.readouterr().err
    traj = _synthetic(tmp_path / "t" / "one")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    assert cli(["export", str(traj), "--format", "jsonl", "--out", str(busy)]) == 2
    assert "not empty" in capsys.readouterr().err and (busy / "keep.txt").read_text() == "mine"
    assert cli(["export", str(traj), "--format", "jsonl", "--out", str(busy), "--force"]) == 0


def test_incomplete_trajectories_are_left_out_unless_asked(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    _synthetic(tmp_path / "src" / "done")
    _synthetic(tmp_path / "src" / "cut", finish=False)
    assert cli(["export", str(tmp_path / "src"), "--format", "parquet", "--out", str(tmp_path / "a")]) == 0
    assert pq.read_table(tmp_path / "a" / "steps.parquet").num_rows == 2
    assert cli(["export", str(tmp_path / "src"), "--format", "parquet", "--include-incomplete",
                "--out", str(tmp_path / "b")]) == 0
    table = pq.read_table(tmp_path / "b" / "steps.parquet").to_pylist()
    assert len(table) == 4 and {r["complete"] for r in table} == {True, False}


def _synthetic(folder: Path, finish: bool = True) -> Path:
    """A two-step trajectory written by the real writer (for the error paths only)."""
    from PIL import Image

    from cua.observation import Observation, Screenshot, Size
    from cua.task import Verdict

    size = Size(width=320, height=200)

    def obs(i: int) -> Observation:
        buf = io.BytesIO()
        Image.new("RGB", (320, 200), (i * 60, 0, 0)).save(buf, "JPEG")
        return Observation(sandbox_id="s", frame=size, screen=size, url=f"http://x/{i}", step=i,
                           screenshot=Screenshot(format="jpeg", width=320, height=200, data=buf.getvalue()))

    writer = TrajectoryWriter(folder)
    ref: ObservationRef = writer.begin(TrajectoryMeta(producer="record", task_id="todo.x@1", seed=0,
                                                      instruction="x", sandbox_kind="browser",
                                                      tags={"app": "todo", "tier": 1, "split": "train"},
                                                      agent=AgentInfo(name="person", kind="human")), obs(0))
    for i in range(2):
        after = writer.observation(obs(i + 1))
        writer.step(StepLine(index=i, turn=i, observation=ref, action={"type": "click", "x": 10.0 * i, "y": 5.0}))
        ref = after
    if finish:
        writer.end(TrajectoryEnd(status="completed", steps=2, verdict=Verdict(score=1, passed=True, progress=1)))
    else:
        writer.close()
    return folder


def test_exports_hold_paths_relative_to_the_export_and_steps_count_from_0(tmp_path: Path) -> None:
    """No row names the machine's own folders: `trajectory_path` and a referenced image (of
    the tables and of PRM cases) are relative to the export folder, and resolve from it after
    both are moved together. Steps count from 0 there, as in the trajectory and the report."""
    import shutil

    _synthetic(tmp_path / "src" / "runs" / "one")
    assert cli(["export", str(tmp_path / "src" / "runs"), "--format", "jsonl", "--images", "path",
                "--out", str(tmp_path / "src" / "data")]) == 0
    assert cli(["export", str(tmp_path / "src" / "runs"), "--format", "prm", "--images", "path",
                "--out", str(tmp_path / "src" / "prm")]) == 0
    shutil.move(tmp_path / "src", tmp_path / "moved")
    data = tmp_path / "moved" / "data"
    rows = [json.loads(line) for line in (data / "data" / "train.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1]
    for row in rows:
        assert not Path(row["trajectory_path"]).is_absolute() and not Path(row["image"]).is_absolute(), row
        assert (data / row["trajectory_path"] / "meta.json").is_file() and (data / row["image"]).is_file()
    prm = tmp_path / "moved" / "prm"
    cases = [json.loads(line) for line in (prm / "prm.jsonl").read_text().splitlines()]
    assert cases and all(not Path(c["image"]).is_absolute() and (prm / c["image"]).is_file() for c in cases), cases[:1]
