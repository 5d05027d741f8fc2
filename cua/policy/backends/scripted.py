"""`ScriptedPolicy`: replays a recorded trajectory, step by step, per session.

A script is a JSONL file (or a list of the same dicts). Each line is one step:

- an action: ``{"type": "click", "x": 10, "y": 20}``;
- several actions: ``{"actions": [...], "thought": "..."}`` (or ``{"action": {...}}``);
- a raw model output: ``{"raw": "<tool_call>...</tool_call>", "family": "qwen2.5-vl"}``,
  parsed exactly as a live model's output would be (so recorded generations replay
  through the real parsers, parse errors included).

Blank lines and lines starting with ``#`` are skipped. Every session replays the script
from its start; a session that runs past the end gets ``Done(status="failure")``.
Action coordinates are taken as they are, in the observation's frame.

``scripted:@demo`` has no file: it replays the demonstration in its options
(`PolicyOptions.demo`, `cua eval --demo`), one demo step per turn, its actions taken as
they are, then nothing more (the episode is judged where it is); without a demo it gives up
at once (``Done(status="failure")``). It shows that a demo reaches a policy's context.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from cua.actions import Action, Done, parse_action, parse_actions
from cua.observation import Observation
from cua.policy.base import PolicyOptions, PolicyStep
from cua.policy.demo import Demo
from cua.policy.engine import PolicyMetrics, parse_output
from cua.policy.families import get_family

__all__ = ["ScriptStep", "ScriptedPolicy", "load_script"]


@dataclass(frozen=True)
class ScriptStep:
    actions: list[Action] | None = None
    raw: str | None = None
    family: str | None = None
    thought: str | None = None
    tool_calls: list[dict[str, Any]] | None = None


def _step(data: Any, where: str) -> ScriptStep:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: a script step must be a JSON object")
    try:
        if "raw" in data:
            return ScriptStep(raw=str(data["raw"]), family=data.get("family"), thought=data.get("thought"),
                              tool_calls=data.get("tool_calls"))
        if "actions" in data:
            return ScriptStep(actions=parse_actions(data["actions"]), thought=data.get("thought"))
        if "action" in data:
            return ScriptStep(actions=[parse_action(data["action"])], thought=data.get("thought"))
        if "type" in data:
            return ScriptStep(actions=[parse_action(data)])
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"{where}: invalid action ({'.'.join(map(str, first['loc']))}: {first['msg']})") from None
    raise ValueError(f"{where}: expected an action, {{'actions': [...]}} or {{'raw': ...}}")


def load_script(source: str | Path | Iterable[dict[str, Any]]) -> list[ScriptStep]:
    """Read a script from a JSONL path or from an iterable of step dicts."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        steps = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
            steps.append(_step(data, f"{path}:{number}"))
        return steps
    return [_step(d, f"step {i}") for i, d in enumerate(source, 1)]


class ScriptedPolicy:
    """A `Policy` that replays a script; each session has its own cursor and pointer."""

    def __init__(self, steps: list[ScriptStep], *, family: str | None = None, loop: bool = False,
                 replay_demo: bool = False) -> None:
        self.steps = steps
        self.family_name = family
        self.loop = loop
        #: Replay the demo given in each call's options instead of `steps` (`scripted:@demo`).
        self.replay_demo = replay_demo
        self.metrics = PolicyMetrics()
        self._cursors: dict[str, int] = {}
        self._pointers: dict[str, tuple[float, float] | None] = {}
        if family is not None:
            get_family(family)
        for step in steps:
            if step.raw is not None and (step.family or family) is None:
                raise ValueError("a raw step needs a family (on the line, or family=...)")
            if step.family is not None:
                get_family(step.family)

    @classmethod
    def from_file(cls, path: str | Path, **kw: Any) -> ScriptedPolicy:
        return cls(load_script(path), **kw)

    @classmethod
    def from_actions(cls, actions: Iterable[Action | list[Action]], **kw: Any) -> ScriptedPolicy:
        """One step per item: an action, or a list of actions taken in one step."""
        return cls([ScriptStep(actions=list(a) if isinstance(a, list) else [a]) for a in actions], **kw)

    async def act(
        self,
        session_id: str,
        instruction: str,
        observation: Observation,
        options: PolicyOptions | None = None,
    ) -> PolicyStep:
        t0 = time.perf_counter()
        index = self._cursors.get(session_id, 0)
        self._cursors[session_id] = index + 1
        steps = self.steps
        if self.replay_demo:
            steps = _demo_script(options.demo if options else None)
        if self.loop and steps:
            index %= len(steps)
        family_name = (options.family if options else None) or self.family_name or "scripted"
        if self.replay_demo and steps and index >= len(steps):
            step = PolicyStep(thought="end of the demo")  # nothing more to do: the episode is judged where it is
        elif index >= len(steps):
            step = PolicyStep(actions=[Done(status="failure")],
                              thought="no demo in the options" if self.replay_demo else "end of script")
        else:
            family_name = steps[index].family or family_name
            step = self._replay(session_id, steps[index], observation, options)
        step.timings_ms["model"] = (time.perf_counter() - t0) * 1000
        self.metrics.count(family_name, step)
        return step

    def _replay(
        self, session_id: str, step: ScriptStep, observation: Observation, options: PolicyOptions | None
    ) -> PolicyStep:
        if step.actions is not None:
            return PolicyStep(actions=list(step.actions), raw=json.dumps([a.model_dump() for a in step.actions]),
                              thought=step.thought)
        assert step.raw is not None
        family = get_family(step.family or (options.family if options else None) or self.family_name or "")
        parsed, error, pointer = parse_output(
            family, step.raw, observation.frame, self._pointers.get(session_id), step.tool_calls
        )
        self._pointers[session_id] = pointer
        if parsed is None:
            assert error is not None
            return PolicyStep(raw=step.raw, parse_error=error)
        return PolicyStep(actions=parsed.actions, raw=step.raw, thought=parsed.thought or step.thought)

    async def reset(self, session_id: str) -> None:
        self._cursors.pop(session_id, None)
        self._pointers.pop(session_id, None)

    async def aclose(self) -> None:
        self._cursors.clear()
        self._pointers.clear()


def _demo_script(demo: Demo | None) -> list[ScriptStep]:
    """A demo's steps as a script, its actions taken as they are (as a file script's)."""
    return [] if demo is None else [ScriptStep(actions=[parse_action(s.action)]) for s in demo.steps]


#: The `scripted:` spec that replays the options' demo instead of a file.
DEMO_SPEC = "@demo"


def from_spec(path: str, **kw: Any) -> ScriptedPolicy:
    """`make_policy("scripted:FILE.jsonl")`: replays a recorded trajectory;
    `scripted:@demo`: replays the demo each call's options carry."""
    if path == DEMO_SPEC:
        return ScriptedPolicy([], replay_demo=True, **kw)
    return ScriptedPolicy.from_file(path, **kw)
