"""Eval runs written by the real trajectory writer, as `cua eval` would leave them (frames
drawn with PIL, so where an action lands is known to the pixel): what the report tests
(tests/record/test_report.py) and the report server's exposure tests read."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from cua.errors import ErrorRecord, SandboxCrashed
from cua.observation import ActionError, Observation, Screenshot, Size
from cua.task import Evidence, Verdict
from cua.trajectory import AgentInfo, ModelRetry, StepLine, TrajectoryEnd, TrajectoryMeta, TrajectoryWriter

SIZE = Size(width=640, height=400)
CLICK = (212.0, 131.0)
DRAG = [(50.0, 300.0), (200.0, 350.0), (410.0, 322.0)]
TYPED = "hello <b>world</b>"  # markup in data must show as text


def _obs(i: int, axtree: bool = False) -> Observation:
    im = Image.new("RGB", (SIZE.width, SIZE.height), (240, 240, 250))
    ImageDraw.Draw(im).rectangle([100, 100, 300, 160], fill=(30, 100, 200))
    out = io.BytesIO()
    im.save(out, "JPEG")
    shot = Screenshot(format="jpeg", width=SIZE.width, height=SIZE.height, data=out.getvalue())
    return Observation(sandbox_id="sb", frame=SIZE, screen=SIZE, screenshot=shot, url=f"http://app/{i}",
                       title=f"page {i}", step=i,
                       axtree=[{"role": "button", "name": "Save item", "children": []}] if axtree else None)


ACTIONS: list[dict[str, Any] | None] = [
    {"type": "click", "x": CLICK[0], "y": CLICK[1]},
    {"type": "type", "text": TYPED},
    {"type": "drag", "path": [{"x": x, "y": y} for x, y in DRAG]},
    {"type": "scroll", "x": 320.0, "y": 200.0, "dx": 0.0, "dy": 300.0},
    None,  # an output that did not parse
    {"type": "done", "status": "success"},
]


def write_episode(run: Path, task: str, seed: int, *, passed: bool, lost_attempt: bool = False,
                  finish: bool = True, actions: list[dict[str, Any] | None] | None = None) -> TrajectoryWriter:
    actions = ACTIONS if actions is None else actions
    rel = f"trajectories/{task}__s{seed}"
    writer = TrajectoryWriter(run / rel)
    meta = TrajectoryMeta(producer="eval", task_id=task, task_version=1, seed=seed, instruction=f"Please do {task}.",
                          sandbox_kind="browser",
                          tags={"app": task.split(".")[0], "tier": 2, "split": "test", "skills": ["click", "form"],
                                "feasible": True},
                          agent=AgentInfo(name="fake", kind="policy", family="qwen2.5-vl", model="fake-7b",
                                          settings={"temperature": 0.0}))
    ref = writer.begin(meta, _obs(0, axtree=True))
    if lost_attempt:
        writer.step(StepLine(index=0, observation=ref, action={"type": "click", "x": 5.0, "y": 5.0}, raw="lost click"))
        writer.new_attempt(error=ErrorRecord.of(SandboxCrashed("the browser died")), steps=1)
        ref = writer.begin(meta, _obs(0, axtree=True))
    for i, action in enumerate(actions):
        after = writer.observation(_obs(i + 1))
        retries = [ModelRetry(error="HTTP 500: upstream overloaded", status=500, backoff_ms=500.0, t=1.0)] \
            if i == 0 else None
        writer.step(StepLine(index=i, turn=i, observation=ref, action=action, raw=f"model output {i}: {action}",
                             retries=retries,
                             thought=f"thinking about step {i}", parse_error="no action in the output" if action is None else None,
                             error=ActionError(reason="out_of_bounds", message="scrolled past the end") if i == 3 else None,
                             timings_ms={"policy": 100.0, "act": 50.0, "settle": 20.0}))
        ref = after
    if finish:
        verdict = Verdict(score=1.0 if passed else 0.0, passed=passed, progress=0.5, evidence=[
            Evidence(check="title is renamed", getter="app_state", observed="Milk", expected="Buy milk",
                     passed=passed, detail="compared exactly"),
            # a subgoal of two alternatives (`any:`), one of which held: the subgoal is reached
            Evidence(check="subgoal 1: #sort is Price: high to low", getter="dom #sort .value", observed=None,
                     expected={"op": "text", "value": "Price: high to low"}, passed=False,
                     detail="not text: NoneType"),
            Evidence(check="subgoal 1: #sort shows Price: high to low", getter="dom #sort option:checked",
                     observed="Price: high to low", expected={"op": "text", "value": "Price: high to low"},
                     passed=True),
            # reached earlier, no longer true: a later subgoal was reached, so it counts
            Evidence(check="subgoal 2: the cart is open", getter="url path", observed="/checkout",
                     expected={"op": "regex", "pattern": "^/cart"}, passed=False),
            Evidence(check="subgoal 3: checkout is open", getter="url path", observed="/checkout",
                     expected={"op": "regex", "pattern": "^/checkout"}, passed=True),
            Evidence(check="subgoal 4: the order is placed", getter="app_state orders", observed=[],
                     expected={"op": "length", "min": 1}, passed=False, detail="0 < 1")])
        writer.end(TrajectoryEnd(status="completed", failure=None if passed else "judged_wrong", steps=len(actions),
                                 verdict=verdict, timings_ms={"judge": 4.0}))
        with (run / "episodes.jsonl").open("a") as fh:
            fh.write(json.dumps({"task_id": task, "seed": seed, "trajectory": rel, "status": "completed",
                                 "failure": None if passed else "judged_wrong"}) + "\n")
    return writer


def make_run(run: Path, outcomes: dict[tuple[str, int], bool]) -> Path:
    for (task, seed), passed in outcomes.items():
        write_episode(run, task, seed, passed=passed, lost_attempt=task.startswith("shop"))
    return run
