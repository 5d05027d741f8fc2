"""Reward parity: cua's MiniWoB++ judge against MiniWoB's own Gymnasium env, on the same actions.

For each task and each seed, three solvers act in cua's browser sandbox through unified
actions: the `oracle` (right), `perturbed` (the oracle's actions with every typed text
changed, or its last click moved when it types nothing: a wrong answer) and `random`
(seeded random clicks in the task area); a task without an oracle is played by `random`
alone. The actions each one
actually took are then replayed, at the same CSS coordinates, in Farama's `miniwob`
env (Selenium + chromedriver, the reference implementation) reset with the same
MiniWoB seed. Parity holds for a run when both draw the same utterance, both end (or
both do not) and, when they end, both give the same raw reward (and so the same pass
bit). Time-scaled rewards are not compared: they depend on wall-clock time. Runs whose
actions MiniWoB's action space cannot express as cua performed them (a ctrl+click, a
triple click, a scroll by so many pixels) are counted as skipped, with the reason. The
replay pauses after each action, as cua waits for the page to settle.

    python bench/miniwob_parity.py [--tasks click-button,enter-text] [--seeds 10] [--all]

Layout: MiniWoB's Selenium Chrome draws classic 15 px scrollbars, so the suite's sandboxes
do too (`BrowserConfig.scrollbars`). Without them, a task area that scrolls (email-inbox,
social-media) was 15 px wider in cua, its text wrapped elsewhere and a click on a 12 px
icon at cua's coordinates missed it in MiniWoB's replay.

Needs chromium and chromedriver (Debian: apt install chromium-driver). Last line:
`miniwob_parity=<agreeing runs>/<runs> tasks=<n> seeds=<k> skipped=<s>`.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from cua.actions import Click, parse_action
from cua.episode import OracleAgent, open_local, run_episode
from cua.task import TaskInstance, actions_oracle
from cua.tasks.miniwob.tasks import shipped_tasks
from cua.tasks.registry import get_template

#: A sample that covers clicks, typing, keys, menus, widgets and multi-step tasks.
SAMPLE = ("click-button", "click-checkboxes", "click-dialog-2", "click-tab-2", "enter-text", "enter-time",
          "login-user", "use-spinner", "choose-list", "search-engine", "navigate-tree", "simple-arithmetic")
SOLVERS = ("oracle", "perturbed", "random")
#: The task area of every MiniWoB page (160 x 210 CSS px, under the 50 px request).
AREA = (5, 155, 55, 205)
CHROMEDRIVER = os.environ.get("MINIWOB_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROME = os.environ.get("MINIWOB_CHROME_BINARY", shutil.which("chromium") or "/usr/bin/chromium")
MODIFIERS = {"Control": "C-", "Shift": "S-", "Alt": "A-", "Meta": "M-"}
#: Pause after each replayed action, standing in for cua's settle detection.
SETTLE_S = 0.4


@dataclass
class Outcome:
    utterance: str
    done: bool
    raw_reward: float | None


@dataclass
class Run:
    task: str
    seed: int
    solver: str
    cua: Outcome
    wob: Outcome | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    #: Why the run could not be replayed in MiniWoB's action space (e.g. a ctrl+click).
    skipped: str | None = None

    @property
    def agrees(self) -> bool:
        if self.wob is None or self.error:
            return False
        c, w = self.cua, self.wob
        same_reward = c.raw_reward == w.raw_reward or (
            c.raw_reward is not None and w.raw_reward is not None and abs(c.raw_reward - w.raw_reward) < 1e-6)
        return c.utterance == w.utterance and c.done == w.done and (not c.done or same_reward)


def available() -> str | None:
    """Why the reference cannot run here, or None."""
    try:
        import miniwob  # noqa: F401
        import selenium  # noqa: F401
    except ImportError as exc:
        return f"the reference env needs the `miniwob` package with selenium: {exc}"
    if not os.path.exists(CHROMEDRIVER):
        return f"no chromedriver at {CHROMEDRIVER} (Debian: apt install chromium-driver)"
    return None


# ---------------------------------------------------------------- cua side


def _perturb(trace: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    out = [dict(a) for a in trace]
    typed = [a for a in out if a["type"] == "type"]
    for a in typed:
        a["text"] = a["text"][::-1] + "x"
    if not typed:
        clicks = [a for a in out if a["type"] == "click"]
        if clicks:
            clicks[-1]["x"] = rng.randint(AREA[0], AREA[1])
            clicks[-1]["y"] = rng.randint(AREA[2], AREA[3])
    return out


def _random_clicks(rng: random.Random, n: int = 6) -> list[dict[str, Any]]:
    return [Click(x=rng.randint(AREA[0], AREA[1]), y=rng.randint(AREA[2], AREA[3])).model_dump() for _ in range(n)]


def _outcome(record: Any) -> Outcome:
    rows = record.verdict.evidence[0].observed if record.verdict is not None and record.verdict.evidence else None
    row = rows[0] if isinstance(rows, list) and rows else {}
    return Outcome(utterance=record.instruction, done=bool(row.get("done")), raw_reward=row.get("raw_reward"))


async def _cua_runs(task: str, seeds: list[int], solver_names: tuple[str, ...]) -> list[tuple[Run, TaskInstance]]:
    template = get_template(f"miniwob.{task.replace('-', '_')}@1")
    instances = [template.instantiate(seed) for seed in seeds]
    out: list[tuple[Run, TaskInstance]] = []
    async with open_local(instances[0].sandbox_kind, instances[0].sandbox_config) as handle:
        for instance in instances:
            rng = random.Random(f"{task}/{instance.seed}")
            # a task without an oracle is played by the random solver alone
            oracle_trace: list[dict[str, Any]] = []
            if instance.oracle is not None:
                record = await run_episode(handle, instance, OracleAgent("oracle"))
                oracle_trace = [a.action for a in record.actions]
            traces = {"oracle": None, "perturbed": _perturb(oracle_trace, rng), "random": _random_clicks(rng)}
            for name in solver_names:
                if instance.oracle is None and name != "random":
                    continue
                if name != "oracle":
                    scripted = [parse_action(a) for a in traces[name] or []]
                    replay = instance.model_copy(update={"oracle": actions_oracle(scripted)})
                    record = await run_episode(handle, replay, OracleAgent("oracle"))
                run = Run(task, instance.seed, name, _outcome(record), actions=[a.action for a in record.actions])
                if record.status != "completed":
                    run.error = f"cua episode {record.status}: {record.error}"
                out.append((run, instance))
    return out


# ---------------------------------------------------------------- MiniWoB side


class Unsupported(ValueError):
    """A cua action that MiniWoB's action space has no counterpart for."""


def _key(keys: list[str]) -> str:
    *mods, last = keys
    prefix = "".join(MODIFIERS.get(m, "") for m in mods)
    return prefix + (last if len(last) == 1 else f"<{last}>")


def _wob_actions(env: Any, action: dict[str, Any]) -> list[Any] | float:
    """MiniWoB actions for one cua action (a float: seconds to wait instead)."""
    kind = action["type"]
    point = (lambda x, y: {"coords": [float(x), float(y)]})
    if kind == "click":
        count = action.get("count", 1)
        if count == 2:
            return [env.unwrapped.create_action("DBLCLICK_COORDS", **point(action["x"], action["y"]))]
        return [env.unwrapped.create_action("CLICK_COORDS", **point(action["x"], action["y"])) for _ in range(count)]
    if kind == "move":
        return [env.unwrapped.create_action("MOVE_COORDS", **point(action["x"], action["y"]))]
    if kind in ("mouse_down", "mouse_up") and action.get("x") is not None:
        name = "MOUSEDOWN_COORDS" if kind == "mouse_down" else "MOUSEUP_COORDS"
        return [env.unwrapped.create_action(name, **point(action["x"], action["y"]))]
    if kind == "drag":
        path = action["path"]
        return [env.unwrapped.create_action("MOUSEDOWN_COORDS", **point(path[0]["x"], path[0]["y"])),
                *(env.unwrapped.create_action("MOVE_COORDS", **point(p["x"], p["y"])) for p in path[1:-1]),
                env.unwrapped.create_action("MOUSEUP_COORDS", **point(path[-1]["x"], path[-1]["y"]))]
    if kind == "scroll":
        steps = math.ceil(abs(action.get("dy", 0)) / 50)
        name = "SCROLL_DOWN_COORDS" if action.get("dy", 0) > 0 else "SCROLL_UP_COORDS"
        return [env.unwrapped.create_action(name, **point(action["x"], action["y"])) for _ in range(steps)]
    if kind == "type":
        return [env.unwrapped.create_action("TYPE_TEXT", text=action["text"])]
    if kind == "key":
        keys = env.unwrapped.action_space_config.allowed_keys
        return [env.unwrapped.create_action("PRESS_KEY", key=list(keys).index(_key(action["keys"])))]
    if kind == "wait":
        return float(action.get("seconds", 1.0))
    if kind == "done":
        return []
    raise Unsupported(f"MiniWoB's action space has no {kind!r} action")


def _make_env(task: str, keys: set[str]) -> Any:
    import gymnasium
    import miniwob  # noqa: F401  (registers the envs)
    from miniwob.action import ActionSpaceConfig, ActionTypes
    from miniwob.constants import DEFAULT_ALLOWED_KEYS

    os.environ.setdefault("MINIWOB_CHROME_BINARY", CHROME)
    os.environ.setdefault("MINIWOB_CHROMEDRIVER", CHROMEDRIVER)
    config = ActionSpaceConfig(
        action_types=[ActionTypes.NONE, ActionTypes.MOVE_COORDS, ActionTypes.CLICK_COORDS, ActionTypes.DBLCLICK_COORDS,
                      ActionTypes.MOUSEDOWN_COORDS, ActionTypes.MOUSEUP_COORDS, ActionTypes.SCROLL_UP_COORDS,
                      ActionTypes.SCROLL_DOWN_COORDS, ActionTypes.PRESS_KEY, ActionTypes.TYPE_TEXT],
        allowed_keys=[*DEFAULT_ALLOWED_KEYS, *sorted(keys - set(DEFAULT_ALLOWED_KEYS))], text_max_len=2000)
    return gymnasium.make(f"miniwob/{task}-v1", action_space_config=config)


def _wob_run(env: Any, wob_seed: int, actions: list[dict[str, Any]]) -> Outcome:
    env.reset(seed=wob_seed)
    utterance = env.unwrapped.instance.driver.execute_script("return core.getUtterance();")
    if isinstance(utterance, dict):  # {utterance, fields} in train mode, for some tasks
        utterance = utterance.get("utterance")
    utterance = str(utterance or "")
    done, raw = False, None
    for action in actions:
        todo = _wob_actions(env, action)
        if isinstance(todo, float):
            time.sleep(todo)
            todo = [env.unwrapped.create_action("NONE")]
        for wob_action in todo:
            _, _, terminated, _, info = env.step(wob_action)
            if terminated:
                return Outcome(utterance, True, float(info["raw_reward"]))
        # cua waits for the page to settle after every action (an animation, a fade-in);
        # the replay gives the page the same chance before the next one.
        time.sleep(SETTLE_S)
    return Outcome(utterance, done, raw)


def _replayable(action: dict[str, Any]) -> None:
    """Raise Unsupported for an action MiniWoB's env cannot replay as cua performed it."""
    kind = action["type"]
    if kind in ("key_down", "key_up") or (kind in ("mouse_down", "mouse_up") and action.get("x") is None):
        raise Unsupported(f"MiniWoB's action space has no {kind!r} action")
    if kind == "scroll":
        raise Unsupported("MiniWoB's env scrolls by a fixed amount per action (with a pause), not by dy pixels")
    if kind == "click" and action.get("count", 1) > 2:
        raise Unsupported("MiniWoB's action space has no triple click")


def reference(runs: list[tuple[Run, TaskInstance]]) -> None:
    """Replay every run's actions in MiniWoB's env (one env per task), filling `run.wob`."""
    by_task: dict[str, list[tuple[Run, TaskInstance]]] = {}
    for run, instance in runs:
        by_task.setdefault(run.task, []).append((run, instance))
    for task, items in by_task.items():
        keys = {_key(a["keys"]) for run, _ in items for a in run.actions if a["type"] == "key"}
        env = _make_env(task, keys)
        try:
            for run, instance in items:
                if run.error:
                    continue
                try:
                    for action in run.actions:
                        _replayable(action)
                    run.wob = _wob_run(env, int(instance.params["wob_seed"]), run.actions)
                except Unsupported as exc:
                    run.skipped = str(exc)
                except Exception as exc:  # noqa: BLE001  (a reference fault is a disagreement, reported with its cause)
                    run.error = f"MiniWoB env: {type(exc).__name__}: {exc}"
        finally:
            env.close()


def parity(tasks: list[str], seeds: list[int], solver_names: tuple[str, ...] = SOLVERS) -> list[Run]:
    runs: list[tuple[Run, TaskInstance]] = []
    for task in tasks:
        runs += asyncio.run(_cua_runs(task, seeds, solver_names))
    reference(runs)
    return [run for run, _ in runs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python bench/miniwob_parity.py")
    parser.add_argument("--tasks", help="comma-separated MiniWoB task names (default: a sample of 12)")
    parser.add_argument("--all", action="store_true",
                        help="every shipped task (those without an oracle by the random solver alone)")
    parser.add_argument("--seeds", type=int, default=10, help="template seeds 0..K-1 (default 10)")
    parser.add_argument("--solvers", default=",".join(SOLVERS))
    args = parser.parse_args(argv)
    why = available()
    if why:
        print(why, file=sys.stderr)
        return 2
    tasks = shipped_tasks() if args.all else (args.tasks.split(",") if args.tasks else list(SAMPLE))
    seeds = list(range(args.seeds))
    started = time.perf_counter()
    runs = parity(tasks, seeds, tuple(args.solvers.split(",")))
    skipped = [r for r in runs if r.skipped]
    for run in skipped:
        print(f"SKIPPED {run.task} seed={run.seed} {run.solver}: {run.skipped}")
    runs = [r for r in runs if not r.skipped]
    for run in runs:
        if not run.agrees:
            print(f"DIFFER {run.task} seed={run.seed} {run.solver}: cua={run.cua} wob={run.wob} {run.error or ''}")
    for solver in args.solvers.split(","):
        mine = [r for r in runs if r.solver == solver]
        passed = sum(1 for r in mine if r.cua.done and r.cua.raw_reward == 1.0)
        ended = sum(1 for r in mine if r.cua.done and r.wob is not None and r.wob.done)
        print(f"{solver:10s} runs={len(mine)} agree={sum(r.agrees for r in mine)} ended_in_both={ended} "
              f"cua_pass={passed} wob_pass={sum(1 for r in mine if r.wob and r.wob.done and r.wob.raw_reward == 1.0)}")
    print(f"({time.perf_counter() - started:.0f} s)")
    print(f"miniwob_parity={sum(r.agrees for r in runs)}/{len(runs)} tasks={len(tasks)} seeds={len(seeds)} "
          f"skipped={len(skipped)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
