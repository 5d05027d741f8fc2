"""cua as an Inspect AI sandbox provider (`sandbox="cua"`), with a native computer tool and a
cua judge as an Inspect scorer.

    from cua.compat.inspect_sandbox import cua_computer, cua_judge, cua_samples
    Task(dataset=cua_samples(["todo.mark_done@1"], seeds=[0, 1]),
         solver=[use_tools(cua_computer()), generate()], scorer=cua_judge(),
         sandbox=("cua", CuaSandboxConfig(server=None)))

Lifecycle, mapped onto cua:
- `task_init` opens where the task's sandboxes live: in this process, a given `cua serve`
  (`server=URL`), or one started as a child (`server="auto"`).
- `sample_init` gives each sample its own sandbox at the task's initial state. The first
  sample of a (task, seed) resets a base sandbox through a `cua.episode.Episode` (reset
  seed, setup steps, the instruction read after reset, the judge's initial state) and every
  sample of it is then a fork of that state (`cua.episode.group.fork_episode`): no reset
  per sample, and samples of one task start identical. Kinds that cannot fork get a fresh
  sandbox and reset.
- `sample_cleanup` finishes the sample's episode (its trajectory, when `trajectory_dir` is
  set) and closes its sandbox; `task_cleanup` closes the bases and the server.

`exec`, `read_file` and `write_file` run in desktop and VM sandboxes through their guest's
`command` and `file` queries (argv, never a shell string built from the command). Browser
sandboxes have no shell: they raise `NotImplementedError`, as Inspect's own providers do
for an operation they lack.

`cua_computer()` acts with cua's unified actions on every kind (`cua.actions`, validated,
never a script) and returns the screenshot and, when asked, the element ids to act on; its
`done` action ends the task, `{"type": "done", "status": "infeasible"}` declaring it cannot
be done. `cua_judge()` scores the sample's end state with the task's deterministic judge,
given that `done` (else the model's last answer as a success claim), as `cua eval` does:
an infeasible claim scores 1 on an infeasible task and 0 on a feasible one. The evidence of
every check is the explanation.
"""

from __future__ import annotations

import base64
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, overload

from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Target, accuracy, mean, scorer
from inspect_ai.solver import TaskState
from inspect_ai.tool import ContentImage, ContentText, Tool, ToolError, ToolResult, tool
from inspect_ai.util import ExecResult, SandboxEnvironment, SandboxEnvironmentConfigType, sandbox, sandboxenv
from inspect_ai.util._sandbox.environment import SandboxUserUnsupportedError
from pydantic import BaseModel, ConfigDict, ValidationError

from cua.actions import Done, parse_action
from cua.episode.episode import Episode
from cua.episode.group import ForkableHandle, fork_episode
from cua.episode.handle import SandboxHandle, SandboxOpener
from cua.episode.openers import sandbox_opener
from cua.errors import Cancelled, CuaError, ErrorRecord
from cua.observation import Observation, ObserveOptions
from cua.state import CommandQuery, FileQuery, StateResult
from cua.task import TaskInstance
from cua.trajectory import AgentInfo, FramePolicy, TrajectoryWriter

__all__ = ["CuaSandboxConfig", "CuaSandboxEnvironment", "cua_computer", "cua_judge", "cua_samples"]

#: The guest's command query allows at most this long a command.
_MAX_EXEC_S = 60.0
#: write_file's script tells its failures apart by exit code, not by the shell's words.
_EXIT_IS_DIRECTORY, _EXIT_PERMISSION = 21, 13
_WRITE_SCRIPT = (
    'f="$1"; [ -d "$f" ] && exit 21; d=$(dirname -- "$f"); mkdir -p -- "$d" 2>/dev/null || exit 13; '
    '{ [ -e "$f" ] && [ ! -w "$f" ]; } && exit 13; [ -w "$d" ] || exit 13; '
    'printf %s "$0" | base64 -d > "$f"')


class CuaSandboxConfig(BaseModel):
    """The `sandbox=("cua", CuaSandboxConfig(...))` of an Inspect task (or its dict)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    #: A cua task template id; a sample's metadata `cua_task` overrides it.
    task: str | None = None
    #: The task seed; a sample's metadata `cua_seed` overrides it.
    seed: int = 0
    #: None: sandboxes in this process. A URL: that `cua serve`. "auto": one started as a child.
    server: str | None = None
    token: str | None = None
    #: Overrides merged into the sandbox config of every task of that kind, e.g. {"browser": {"isolation": "shared"}}.
    config_overrides: dict[str, dict[str, Any]] = {}
    #: Observations carry element ids (for `click_element`) and the accessibility tree.
    element_ids: bool = True
    #: Write each sample's trajectory (`cua.trajectory`) under this folder.
    trajectory_dir: str | None = None
    frames: FramePolicy = "all"

    def __hash__(self) -> int:  # Inspect keys sandboxes by their config; dict fields hash by value
        return hash(self.model_dump_json())


@dataclass
class _Base:
    episode: Episode
    close: Any  # the opener's context manager


@dataclass
class _TaskState:
    config: CuaSandboxConfig
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    opener: SandboxOpener | None = None
    bases: dict[tuple[str, int], _Base] = field(default_factory=dict)
    samples: int = 0

    async def start(self) -> None:
        if self.opener is None:
            cfg = self.config
            local = cfg.server is None
            server = None if cfg.server in (None, "auto") else cfg.server
            self.opener = await self.stack.enter_async_context(
                sandbox_opener(local=local, server=server, token=cfg.token))

    def instance(self, template_id: str, seed: int) -> TaskInstance:
        from cua.tasks.registry import get_template

        instance: TaskInstance = get_template(template_id).instantiate(seed)
        overrides = self.config.config_overrides.get(instance.sandbox_kind)
        if overrides:
            instance = instance.model_copy(update={"sandbox_config": {**instance.sandbox_config, **overrides}})
        return instance

    def observe(self) -> ObserveOptions:
        return ObserveOptions(element_ids=self.config.element_ids)

    def writer(self, template_id: str, seed: int) -> TrajectoryWriter | None:
        if self.config.trajectory_dir is None:
            return None
        self.samples += 1
        name = f"{template_id.replace('@', '_v')}__s{seed}__i{self.samples:05d}"
        return TrajectoryWriter(Path(self.config.trajectory_dir) / name, frames=self.config.frames)

    async def open_episode(self, template_id: str, seed: int, writer: TrajectoryWriter | None) -> tuple[Episode, Any]:
        assert self.opener is not None
        instance = self.instance(template_id, seed)
        cm = self.opener(instance.sandbox_kind, instance.sandbox_config)
        handle: SandboxHandle = await cm.__aenter__()
        try:
            episode = Episode(handle, instance, observe=self.observe(), writer=writer, producer="eval",
                              agent=AgentInfo(name="inspect", kind="python"))
            await episode.reset()
        except BaseException:
            await cm.__aexit__(None, None, None)
            raise
        return episode, cm

    async def sample(self, template_id: str, seed: int) -> tuple[Episode, Any]:
        """The sample's episode at the task's initial state, and what closes it."""
        await self.start()
        key = (template_id, seed)
        base = self.bases.get(key)
        if base is None:
            episode, cm = await self.open_episode(template_id, seed, None)
            base = self.bases[key] = _Base(episode=episode, close=cm)
        if isinstance(base.episode.handle, ForkableHandle):
            (child,) = await fork_episode(base.episode, 1, writers=[self.writer(template_id, seed)])
            return child, None
        return await self.open_episode(template_id, seed, self.writer(template_id, seed))

    async def close(self) -> None:
        bases, self.bases = list(self.bases.values()), {}
        for base in bases:
            base.episode.finish()
            await base.close.__aexit__(None, None, None)
        await self.stack.aclose()
        self.opener = None


def _config(config: SandboxEnvironmentConfigType | None) -> CuaSandboxConfig:
    if config is None:
        return CuaSandboxConfig()
    if isinstance(config, CuaSandboxConfig):
        return config
    if isinstance(config, dict):
        return CuaSandboxConfig.model_validate(config)
    raise ValueError(f"the cua sandbox takes a CuaSandboxConfig or its dict, not {type(config).__name__}")


@sandboxenv(name="cua")
class CuaSandboxEnvironment(SandboxEnvironment):
    """One sample's cua sandbox and its episode."""

    _tasks: ClassVar[dict[tuple[str, CuaSandboxConfig], _TaskState]] = {}

    def __init__(self, episode: Episode, closer: Any) -> None:
        super().__init__()
        self.episode = episode
        self._closer = closer

    @property
    def handle(self) -> SandboxHandle:
        return self.episode.handle

    @property
    def observation(self) -> Observation:
        return self.episode.observation

    # --- lifecycle ---

    @classmethod
    def config_deserialize(cls, config: dict[str, Any]) -> BaseModel:
        return CuaSandboxConfig.model_validate(config)

    @classmethod
    def _state(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> _TaskState:
        cfg = _config(config)
        return cls._tasks.setdefault((task_name, cfg), _TaskState(cfg))

    @classmethod
    async def task_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None) -> None:
        await cls._state(task_name, config).start()

    @classmethod
    async def sample_init(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                          metadata: dict[str, str]) -> dict[str, SandboxEnvironment]:
        state = cls._state(task_name, config)
        template = metadata.get("cua_task") or state.config.task
        if not template:
            raise ValueError("the cua sandbox needs a task: CuaSandboxConfig(task=...) or sample metadata cua_task")
        seed = int(metadata.get("cua_seed", state.config.seed))
        episode, closer = await state.sample(str(template), seed)
        return {"default": cls(episode, closer)}

    @classmethod
    async def sample_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None,
                             environments: dict[str, SandboxEnvironment], interrupted: bool) -> None:
        for env in environments.values():
            if isinstance(env, CuaSandboxEnvironment):
                await env._close(interrupted)

    @classmethod
    async def task_cleanup(cls, task_name: str, config: SandboxEnvironmentConfigType | None, cleanup: bool) -> None:
        state = cls._tasks.pop((task_name, _config(config)), None)
        if state is not None:
            await state.close()

    async def _close(self, interrupted: bool) -> None:
        if interrupted:
            self.episode.finish(status="infra_error", error=ErrorRecord.of(Cancelled("interrupted")))
        else:
            self.episode.finish()
        if self._closer is not None:
            await self._closer.__aexit__(None, None, None)
        else:
            await self.handle.close()

    # --- Inspect's file and process operations (desktop and VM sandboxes) ---

    def _guest(self, what: str) -> None:
        if "command" not in self.handle.info.queries:
            raise NotImplementedError(f"{what} is not available in a cua {self.handle.info.kind} sandbox: it has no "
                                      "shell (act on it with the cua_computer tool)")

    async def _query(self, query: CommandQuery | FileQuery) -> StateResult:
        (result,) = await self.handle.query([query])
        return result

    async def exec(self, cmd: list[str], input: str | bytes | None = None, cwd: str | None = None,
                   env: dict[str, str] | None = None, user: str | None = None, timeout: int | None = None,
                   timeout_retry: bool = True, concurrency: bool = True) -> ExecResult[str]:
        self._guest("exec")
        if user is not None and user not in ("user", "root"):
            raise SandboxUserUnsupportedError(f"cua desktop commands run as the desktop user, not {user!r}")
        argv = list(cmd)
        if env:
            argv = ["/usr/bin/env", *(f"{k}={v}" for k, v in env.items()), *argv]
        if input is not None:
            data = input.encode() if isinstance(input, str) else input
            # the input travels as an argument (data, never part of the script)
            argv = ["/bin/sh", "-c", 'printf %s "$0" | base64 -d | "$@"', base64.b64encode(data).decode(), *argv]
        limit = min(float(timeout), _MAX_EXEC_S) if timeout else _MAX_EXEC_S
        result = await self._query(CommandQuery(argv=argv, timeout=limit, cwd=cwd, max_bytes=10_000_000))
        if not result.ok:
            if result.error == "timeout":
                raise TimeoutError(result.message)
            if result.error == "not_found":
                return ExecResult(success=False, returncode=127, stdout="", stderr=result.message or "not found")
            raise RuntimeError(f"cua: exec failed: {result.error}: {result.message}")
        value = result.value
        return ExecResult(success=value["returncode"] == 0, returncode=int(value["returncode"]),
                          stdout=str(value["stdout"]), stderr=str(value["stderr"]))

    async def write_file(self, file: str, contents: str | bytes) -> None:
        self._guest("write_file")
        data = contents.encode() if isinstance(contents, str) else contents
        result = await self.exec(["/bin/sh", "-c", _WRITE_SCRIPT, base64.b64encode(data).decode(), file])
        if result.returncode == _EXIT_IS_DIRECTORY:
            raise IsADirectoryError(file)
        if result.returncode == _EXIT_PERMISSION:
            raise PermissionError(f"{file}: not writable by the desktop user")
        if not result.success:
            raise RuntimeError(f"writing {file} failed ({result.returncode}): {result.stderr.strip()}")

    @overload
    async def read_file(self, file: str, text: Literal[True] = True) -> str: ...

    @overload
    async def read_file(self, file: str, text: Literal[False]) -> bytes: ...

    async def read_file(self, file: str, text: bool = True) -> str | bytes:
        self._guest("read_file")
        if "file" not in self.handle.info.queries:
            raise NotImplementedError(f"read_file is not available in a cua {self.handle.info.kind} sandbox")
        result = await self._query(FileQuery(path=file, mode="bytes", max_bytes=50_000_000))
        if not result.ok:
            if result.error == "not_found":
                raise FileNotFoundError(file)
            if result.error in ("is_directory", "not_a_file"):
                raise IsADirectoryError(file)
            if result.error == "permission_denied":
                raise PermissionError(file)
            raise RuntimeError(f"reading {file} failed: {result.error}: {result.message}")
        data = base64.b64decode(result.value)
        return data.decode("utf-8") if text else data


def _element_lines(obs: Observation, limit: int = 2000) -> str:
    rows = []
    for node in obs.axtree or ():
        if node.get("id"):
            states = f" [{', '.join(node['states'])}]" if node.get("states") else ""
            rows.append(f"{node['id']}: {node.get('role', '')} {node.get('name', '')!r}{states}")
    return "\n".join(rows[:limit])


def _over(episode: Episode) -> str:
    if episode.done is not None:
        return f"the task is over: it was ended with done(status={episode.done.status!r})"
    if episode.ended:
        return "the task is over: the app ended it"
    return "the task's step limit is reached"


@tool
def cua_computer() -> Tool:
    """Act on the sample's cua sandbox with cua's unified actions and see the screen."""

    async def execute(action: dict[str, Any] | None = None) -> ToolResult:
        """Perform one action on the screen, or none, and return the screenshot after it.

        Args:
          action: A cua action as JSON, e.g. {"type": "click", "x": 100, "y": 200},
            {"type": "click_element", "element": "e12"}, {"type": "type", "text": "hi"},
            {"type": "key", "keys": ["Control", "a"]}, {"type": "scroll", "x": 640, "y": 360, "dy": 300},
            {"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 30, "y": 40}]}, {"type": "goto", "url": "..."}.
            Coordinates are pixels of the last screenshot. Omit it to only take a screenshot.
            To end the task: {"type": "done", "status": "infeasible", "answer": "why"} when it
            cannot be done; {"type": "done", "status": "success", "answer": "..."} (or just
            reply with the answer) when it is done.
        """
        env = sandbox().as_type(CuaSandboxEnvironment)
        episode = env.episode
        if action is not None:
            try:
                parsed = parse_action(action)
            except ValidationError as exc:
                raise ToolError(f"not a cua action: {exc.errors(include_url=False)[0]['msg']}") from exc
            if episode.over:
                raise ToolError(_over(episode))
            try:
                await episode.step(parsed)
            except CuaError as exc:
                raise ToolError(f"{exc.code}: {exc}") from exc
            if isinstance(parsed, Done):  # kept as the episode's end; the scorer judges it
                return [ContentText(text=f"task ended: done(status={parsed.status!r})")]
        obs = episode.observation
        lines = [f"url: {obs.url}", f"title: {obs.title}", f"frame: {obs.frame.width}x{obs.frame.height}"]
        if obs.error is not None:
            lines.append(f"action error: {obs.error.message}")
        if obs.axtree is not None:
            lines.append("elements:\n" + _element_lines(obs))
        text = ContentText(text="\n".join(lines))
        if obs.screenshot is None:
            return [text]
        data = base64.b64encode(obs.screenshot.data).decode()
        return [text, ContentImage(image=f"data:image/{obs.screenshot.format};base64,{data}")]

    return execute


@scorer(metrics=[accuracy(), mean()])
def cua_judge() -> Any:
    """The task's own judge on the sample's end state, with the sample's `done`: the one the
    agent gave through `cua_computer` (an infeasible claim among them), else its last answer
    as a success claim. The judge is cua eval's: an infeasible claim passes an infeasible
    task and fails a feasible one."""

    async def score(state: TaskState, target: Target) -> Score:
        env = sandbox().as_type(CuaSandboxEnvironment)
        completion = state.output.completion.strip() if state.output and state.output.completion else None
        done = env.episode.done or Done(status="success", answer=completion)
        if done.answer is None and completion:
            done = done.model_copy(update={"answer": completion})  # a done without an answer, answered after
        answer = done.answer
        started = time.perf_counter()
        verdict = await env.episode.judge(done)
        evidence = [f"{'ok' if e.passed else 'NO'} {e.check}: observed={e.observed!r} expected={e.expected!r}"
                    for e in verdict.evidence]
        return Score(value=verdict.score, answer=answer,
                     explanation="\n".join(evidence + [f"violation: {v}" for v in verdict.violations]),
                     metadata={"passed": verdict.passed, "progress": verdict.progress, "done_status": done.status,
                               "evidence": [e.model_dump(mode="json") for e in verdict.evidence],
                               "judge_ms": round((time.perf_counter() - started) * 1000, 2)})

    return score


def cua_samples(templates: list[str], seeds: list[int]) -> list[Sample]:
    """One Inspect sample per (template, seed): the instruction as input, the task in metadata."""
    from cua.tasks.registry import get_template

    out = []
    for template_id in templates:
        template = get_template(template_id)
        for seed in seeds:
            instance = template.instantiate(seed)
            out.append(Sample(id=f"{template_id}-s{seed}", input=instance.instruction,
                              metadata={"cua_task": template_id, "cua_seed": seed}))
    return out
