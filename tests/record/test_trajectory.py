"""The trajectory format: what a producer writes reads back, a killed producer leaves a valid
prefix, infrastructure retries stay as attempts, and the files match the published schema."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import jsonschema
import pytest
from PIL import Image

from cua.cli import main as cli
from cua.errors import ErrorRecord, SandboxCrashed
from cua.observation import ActionError, Observation, Screenshot, Size
from cua.task import Evidence, Verdict
from cua.trajectory import (
    AgentInfo,
    StepLine,
    TokenTrace,
    TrajectoryEnd,
    TrajectoryMeta,
    TrajectoryWriter,
    read_trajectory,
    validate,
)

SIZE = Size(width=64, height=48)


def _image(color: tuple[int, int, int], fmt: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (SIZE.width, SIZE.height), color).save(out, fmt.upper())
    return out.getvalue()


def _obs(step: int, fmt: str = "jpeg", axtree: bool = False) -> Observation:
    shot = Screenshot(format=fmt, width=SIZE.width, height=SIZE.height, data=_image((step * 40 % 256, 0, 0), fmt))
    return Observation(sandbox_id="sb", frame=SIZE, screen=SIZE, screenshot=shot, url=f"http://x/{step}",
                       title=f"page {step}", step=step,
                       axtree=[{"role": "button", "name": f"b{step}"}] if axtree else None)


def _meta() -> TrajectoryMeta:
    return TrajectoryMeta(producer="eval", task_id="todo.mark_done@1", task_version=1, seed=3, reset_seed=3,
                          instruction="Mark it done.", sandbox_kind="browser", sandbox_config={"app": "todo"},
                          agent=AgentInfo(name="oracle", kind="oracle"))


def _write_episode(folder: Path, steps: int = 3, frames: str = "all", fmt: str = "jpeg") -> TrajectoryWriter:
    writer = TrajectoryWriter(folder, frames=frames)  # type: ignore[arg-type]
    ref = writer.begin(_meta(), _obs(0, fmt, axtree=True))
    for i in range(steps):
        after = writer.observation(_obs(i + 1, fmt))
        writer.step(StepLine(index=i, turn=i, observation=ref, action={"type": "click", "x": 1.0 + i, "y": 2.0},
                             raw=f"click({i})", thought="because", timings_ms={"policy": 5.0, "act": 20.0},
                             tokens=TokenTrace(prompt_ids=[1, 2], completion_ids=[3], logprobs=[-0.5]),
                             error=ActionError(reason="out_of_bounds", message="no") if i == 1 else None))
        ref = after
    verdict = Verdict(score=1.0, passed=True, progress=1.0,
                      evidence=[Evidence(check="done", getter="app_state", observed=True, expected=True, passed=True)])
    writer.end(TrajectoryEnd(status="completed", steps=steps, verdict=verdict))
    return writer


def test_round_trip_keeps_every_step_and_n_plus_one_frames(tmp_path: Path) -> None:
    _write_episode(tmp_path / "t", steps=3)
    traj = read_trajectory(tmp_path / "t")
    assert traj.complete and traj.meta is not None and traj.end is not None
    assert [s.index for s in traj.steps] == [0, 1, 2]
    assert traj.steps[1].error is not None and traj.steps[1].error.reason == "out_of_bounds"
    assert traj.steps[0].tokens is not None and traj.steps[0].tokens.logprobs == [-0.5]
    refs = traj.observations()
    assert len(refs) == 4 and len({r.frame for r in refs}) == 4
    frames = [traj.frame_bytes(r) for r in refs]
    assert all(f is not None and f[:3] == b"\xff\xd8\xff" for f in frames)
    # frame i is the observation step i acted on: the colours were 0, 40, 80, 120
    reds = [Image.open(io.BytesIO(f)).getpixel((5, 5))[0] for f in frames if f]
    assert [round(r / 40) for r in reds] == [0, 1, 2, 3]
    assert traj.axtree(traj.steps[0].observation) == [{"role": "button", "name": "b0"}]
    assert traj.end.verdict is not None and traj.end.verdict.evidence[0].check == "done"
    report = validate(tmp_path)
    assert report.ok and report.frames == 4 and report.complete == 1, report.problems


def test_png_screens_are_stored_as_jpeg(tmp_path: Path) -> None:
    _write_episode(tmp_path / "t", steps=1, fmt="png")
    assert validate(tmp_path / "t").ok
    for frame in (tmp_path / "t" / "frames").iterdir():
        assert frame.read_bytes()[:3] == b"\xff\xd8\xff"


@pytest.mark.parametrize("policy,expected", [("last", 1), ("none", 0)])
def test_frame_policies(tmp_path: Path, policy: str, expected: int) -> None:
    _write_episode(tmp_path / "t", steps=3, frames=policy)
    traj = read_trajectory(tmp_path / "t")
    assert traj.meta is not None and traj.meta.frames == policy
    kept = sorted(p.name for p in (tmp_path / "t" / "frames").glob("*.jpg")) if expected else []
    assert len(kept) == expected
    assert all(s.observation.frame is None for s in traj.steps)
    assert (traj.end is not None and traj.end.final is not None and
            (traj.end.final.frame is not None) == (policy == "last"))
    assert validate(tmp_path / "t").ok


def test_infra_retry_is_kept_as_an_attempt(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "t")
    ref = writer.begin(_meta(), _obs(0))
    writer.observation(_obs(1))
    writer.step(StepLine(index=0, observation=ref, action={"type": "click", "x": 1, "y": 1}, raw="lost call"))
    error = ErrorRecord.of(SandboxCrashed("chromium died"))
    assert writer.new_attempt(error=error, steps=1) == 1
    ref = writer.begin(_meta(), _obs(0))
    after = writer.observation(_obs(1))
    writer.step(StepLine(index=0, observation=ref, action={"type": "click", "x": 1, "y": 1}))
    writer.step(StepLine(index=1, observation=after, action={"type": "done", "status": "success"}))
    writer.end(TrajectoryEnd(status="completed", steps=2))
    traj = read_trajectory(tmp_path / "t")
    assert traj.attempt == 1 and len(traj.steps) == 2 and len(traj.all_steps) == 3
    assert traj.all_steps[0].raw == "lost call" and traj.all_steps[0].attempt == 0
    assert traj.end is not None and [a.status for a in traj.end.attempts] == ["infra_error", "completed"]
    assert traj.end.attempts[0].error == error
    assert validate(tmp_path / "t").ok


def test_torn_last_line_and_missing_end_are_a_valid_prefix(tmp_path: Path) -> None:
    writer = TrajectoryWriter(tmp_path / "t")
    ref = writer.begin(_meta(), _obs(0))
    writer.observation(_obs(1))
    writer.step(StepLine(index=0, observation=ref, action={"type": "click", "x": 1, "y": 1}))
    writer.close()
    with (tmp_path / "t" / "steps.jsonl").open("a") as fh:
        fh.write('{"attempt": 0, "index": 1, "observ')  # a write the kill cut short
    traj = read_trajectory(tmp_path / "t")
    assert not traj.complete and len(traj.steps) == 1 and not traj.bad_lines
    report = validate(tmp_path)
    assert report.ok and report.complete == 0 and report.steps == 1


def test_validate_finds_real_damage(tmp_path: Path) -> None:
    _write_episode(tmp_path / "t", steps=2)
    (tmp_path / "t" / "frames" / "a0-0001.jpg").write_bytes(b"not a jpeg")
    os.remove(tmp_path / "t" / "frames" / "a0-0002.jpg")
    lines = (tmp_path / "t" / "steps.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "t" / "steps.jsonl").write_text(lines[0] + '{"index": "x"}\n' + lines[1])
    messages = [p.message for p in validate(tmp_path).problems]
    assert any("not a JPEG" in m for m in messages)
    assert any("a0-0002.jpg is missing" in m for m in messages)
    assert any("line 2" in m for m in messages)
    assert cli(["trajectory", "validate", str(tmp_path)]) == 1


def test_files_match_the_published_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["trajectory", "schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    _write_episode(tmp_path / "t", steps=2)

    def check(instance: object, name: str) -> None:
        jsonschema.validate(instance, {"$ref": f"#/$defs/{name}", "$defs": schema["$defs"]})

    check(json.loads((tmp_path / "t" / "meta.json").read_text()), "TrajectoryMeta")
    check(json.loads((tmp_path / "t" / "end.json").read_text()), "TrajectoryEnd")
    for line in (tmp_path / "t" / "steps.jsonl").read_text().splitlines():
        check(json.loads(line), "StepLine")
    with pytest.raises(jsonschema.ValidationError):
        check({"index": -1}, "StepLine")


def test_show_prints_a_step_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write_episode(tmp_path / "t", steps=2)
    assert cli(["trajectory", "show", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "todo.mark_done@1 seed=3 producer=eval agent=oracle" in out
    assert "click x=1 y=2" in out and "click x=2 y=2" in out and "out_of_bounds" not in out
    assert "end: completed steps=2 score=1 passed=True" in out


WRITER_SCRIPT = textwrap.dedent("""
    import sys, io
    from pathlib import Path
    from PIL import Image
    sys.path.insert(0, {tests!r})
    from test_trajectory import _meta, _obs
    from cua.trajectory import StepLine, TrajectoryWriter
    w = TrajectoryWriter(Path({folder!r}))
    ref = w.begin(_meta(), _obs(0))
    i = 0
    while True:
        after = w.observation(_obs(i + 1))
        w.step(StepLine(index=i, observation=ref, action={{"type": "click", "x": 1, "y": 1}}))
        ref = after
        i += 1
        if i == 20:
            print("ready", flush=True)
""")


def test_a_killed_writer_leaves_a_valid_prefix(tmp_path: Path) -> None:
    script = WRITER_SCRIPT.format(tests=str(Path(__file__).parent), folder=str(tmp_path / "t"))
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    report = validate(tmp_path / "t")
    assert report.ok, report.problems
    assert report.complete == 0 and report.steps >= 20
