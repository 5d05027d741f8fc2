"""Demonstration-conditioned eval (`cua eval --demo TRAJ_DIR|auto`): which demo a task gets.

A demo is a recorded trajectory of a similar task (`cua.policy.demo.Demo`): its instruction,
its steps' actions and three of its frames (first, middle, last), downscaled. `--demo DIR`
gives every task the one trajectory in DIR; `--demo auto --demo-from RUN_DIR` picks, per
task, a passing trajectory of the same template at another seed from an earlier run.

No leakage: a demo of the very instance the agent is given (the same task at the same
seed, or any trajectory whose instruction is the task's own) is never used: `auto` passes
over it, and a DIR that holds one is refused (`DemoError`), since a demo that shows the
answer measures recall, not the use of a demonstration.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.episode.agent import EpisodeAgent
from cua.episode.policy_agent import PolicyAgent
from cua.errors import BadRequest
from cua.observation import Size
from cua.policy.base import PolicyOptions
from cua.policy.demo import Demo, DemoFrame, DemoStep
from cua.policy.imaging import decode_image, encode_image
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, ObservationRef, Trajectory, find_trajectories, read_trajectory

__all__ = ["AUTO", "DemoAgent", "DemoError", "DemoSource", "demo_agent_factory", "demo_source", "load_demo",
           "same_instance"]

#: `--demo auto`: per task, a passing trajectory of its template at another seed (`--demo-from`).
AUTO = "auto"
#: The longest side of a demo frame, in pixels (frames are downscaled to it).
FRAME_SIDE = 640


class DemoError(BadRequest):
    """A demo that cannot be given: its folder is missing or holds no finished trajectory,
    it is of the task's own instance (leakage), or `auto` has no run to pick from. The
    user's to fix; a retry does not help."""


def same_instance(traj: Trajectory, instance: TaskInstance) -> bool:
    """Whether `traj` recorded the instance the agent is given: the same task at the same seed,
    or the same instruction (two seeds that make the same task are one instance to the agent)."""
    meta = traj.meta
    if meta is None:
        return False
    return (meta.task_id == instance.task_id and meta.seed == instance.seed) or \
        meta.instruction.strip() == instance.instruction.strip()


def _passed(traj: Trajectory) -> bool:
    return traj.end is not None and traj.end.verdict is not None and traj.end.verdict.passed


def _frame(traj: Trajectory, ref: ObservationRef | None, step: int) -> DemoFrame | None:
    data = traj.frame_bytes(ref)
    if data is None:
        return None
    image = decode_image(data)
    scale = min(1.0, FRAME_SIDE / max(image.width, image.height))
    if scale < 1.0:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    encoded = encode_image(image, "jpeg", 75)
    return DemoFrame(step=step, data=base64.b64encode(encoded).decode("ascii"),
                     size=Size(width=image.width, height=image.height))


def load_demo(folder: Path) -> Demo:
    """The demo a finished trajectory folder makes: its instruction, every step's action (a
    resolved pointer action where the step acted on an element id), and its first, middle
    and last frames. Raises `DemoError` for a folder that is not one finished trajectory."""
    if not folder.is_dir():
        raise DemoError(f"--demo {folder}: no such folder", details={"demo": str(folder)})
    try:
        traj = read_trajectory(folder)
    except (ValueError, OSError) as exc:
        raise DemoError(f"--demo {folder}: not a readable trajectory ({exc})", details={"demo": str(folder)}) from None
    if traj.meta is None or traj.end is None:
        raise DemoError(f"--demo {folder}: not a finished trajectory (meta.json and end.json are needed; "
                        "`cua eval` writes them under OUT/trajectories/)", details={"demo": str(folder)})
    steps = [DemoStep(action=s.resolved_action or s.action, frame=s.observation.size)
             for s in traj.steps if s.action is not None]
    refs = traj.observations()
    picks = sorted({0, len(refs) // 2, len(refs) - 1}) if refs else []
    frames = [f for f in (_frame(traj, refs[i], min(i, len(steps))) for i in picks) if f is not None]
    return Demo(instruction=traj.meta.instruction, steps=steps, frames=frames,
                source={"trajectory": str(folder), "task_id": traj.meta.task_id, "seed": traj.meta.seed,
                        "passed": _passed(traj)})


class DemoSource:
    """Where each task's demo comes from: one fixed trajectory (`--demo DIR`) or, with `auto`,
    the passing trajectories of an earlier run (`--demo-from RUN_DIR`), by template."""

    def __init__(self, spec: str, run_dir: Path | None = None) -> None:
        self.spec = spec
        self._fixed: Trajectory | None = None
        self._by_template: dict[str, list[Trajectory]] = {}
        self._loaded: dict[Path, Demo] = {}
        if spec != AUTO:
            folder = Path(spec)
            load_demo(folder)  # refuses a folder that is not a finished trajectory, before any sandbox starts
            self._fixed = read_trajectory(folder)
            return
        if run_dir is None:
            raise DemoError("--demo auto needs --demo-from RUN_DIR: the run whose passing trajectories are the demos")
        if not run_dir.is_dir():
            raise DemoError(f"--demo-from {run_dir}: no such folder", details={"demo_from": str(run_dir)})
        for path in find_trajectories(run_dir):
            try:
                traj = read_trajectory(path)
            except (ValueError, OSError, ValidationError):
                continue  # a torn or foreign folder is no demo; the others still are
            if traj.meta is not None and _passed(traj):
                self._by_template.setdefault(traj.meta.task_id, []).append(traj)
        if not self._by_template:
            raise DemoError(f"--demo-from {run_dir}: no passing trajectory to take a demo from",
                            details={"demo_from": str(run_dir)})

    def demos(self, instances: Sequence[TaskInstance]) -> dict[tuple[str, int], Demo | None]:
        """Each instance's demo, by task id and seed, chosen before the run (`pick`); a fixed
        demo of one of `instances` is refused (leakage), naming them all."""
        if self._fixed is not None:
            fixed = self._fixed
            leaked = sorted({f"{i.task_id}@{i.seed}" for i in instances if same_instance(fixed, i)})
            if leaked:
                raise DemoError(f"--demo {fixed.folder}: it records the task's own instance ({', '.join(leaked)}); "
                                "a demo must be of a similar task, never of the one the agent is given",
                                details={"demo": str(fixed.folder), "instances": leaked})
        return {(i.task_id, i.seed): self.pick(i) for i in instances}

    def pick(self, instance: TaskInstance) -> Demo | None:
        """The demo for `instance` (None: `auto` found none of its template at another seed).
        Never one of `instance` itself: a fixed one of it raises `DemoError`."""
        if self._fixed is not None:
            if same_instance(self._fixed, instance):
                raise DemoError(f"--demo {self._fixed.folder}: it records {instance.task_id}@{instance.seed} itself",
                                details={"demo": str(self._fixed.folder)})
            return self._demo(self._fixed.folder)
        candidates = [t for t in self._by_template.get(instance.task_id, []) if not same_instance(t, instance)]
        if not candidates:
            return None
        meta = [t.meta for t in candidates]
        chosen = min(zip(candidates, meta, strict=True), key=lambda c: (c[1].seed if c[1] else 0, str(c[0].folder)))
        return self._demo(chosen[0].folder)

    def _demo(self, folder: Path) -> Demo:
        if folder not in self._loaded:
            self._loaded[folder] = load_demo(folder)
        return self._loaded[folder]


class DemoAgent(PolicyAgent):
    """A `PolicyAgent` whose options carry a demo: its trajectories' meta name the demo's
    source instead of holding the demo's frames."""

    @property
    def info(self) -> AgentInfo:
        demo = self.options.demo if self.options is not None else None
        plain = PolicyAgent(self.policy, self.name, self.options.model_copy(update={"demo": None})
                            if self.options is not None else None, model=self.model)
        info = plain.info
        if demo is not None:
            info.settings = {**info.settings, "demo": demo.source}
        return info


def demo_agent_factory(make_agent: Callable[[TaskInstance], EpisodeAgent],
                       demos: Mapping[tuple[str, int], Demo | None]) -> Callable[[TaskInstance], EpisodeAgent]:
    """The demo arm's agents: each policy agent `make_agent` gives, with its task's demo
    (`demos`, by task id and seed, chosen before the run: `DemoSource.pick`) in its options.
    A task without one (`auto` found none of its template at another seed) runs without;
    its record says so."""

    def make(instance: TaskInstance) -> EpisodeAgent:
        agent = make_agent(instance)
        demo = demos.get((instance.task_id, instance.seed))
        if not isinstance(agent, PolicyAgent) or demo is None:
            return agent
        options = (agent.options or PolicyOptions()).model_copy(update={"demo": demo})
        return DemoAgent(agent.policy, agent.name, options, model=agent.model)

    return make


def demo_source(agent: EpisodeAgent | None) -> dict[str, Any] | None:
    """Where the demo `agent` was given came from (its record keeps it); None: it had none."""
    if not isinstance(agent, DemoAgent) or agent.options is None or agent.options.demo is None:
        return None
    return dict(agent.options.demo.source)
