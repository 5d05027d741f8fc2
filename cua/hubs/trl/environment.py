"""cua tasks as TRL `environment_factory` classes: the unified actions as tools, screenshots as
TRL's multimodal tool results, the task's judge as the reward.

    from cua.hubs.trl import BrowserToolEnv, ReleaseSandboxes
    trainer = GRPOTrainer(model, args=..., train_dataset=Dataset.from_list(
        [{"prompt": [{"role": "user", "content": "Do the task."}], "task": "todo.mark_done@1", "seed": 3}]),
        environment_factory=BrowserToolEnv, callbacks=[ReleaseSandboxes()])

How TRL 1.x uses such a class (`GRPOTrainer`, `environment_factory`): it makes instances with
no arguments (use `functools.partial` for options), keeps them in a pool and reuses them
across batches; every public method except `reset` and `get_reward` is a tool, described to
the model by its type hints and docstring; `reset(**row)` gets the dataset row, and what it
returns (here the first screenshot and the instruction) is appended to the prompt; a tool's
result that is a list of content blocks goes to the model as they are, images included;
`get_reward()` scores a finished rollout. TRL never closes an environment, hence
`ReleaseSandboxes` (the trainer's end), `release_all` and the exit hook below.

Each instance holds at most one sandbox (a reset of a task that fits the same sandbox,
`sandbox_key`, reuses it) and one `Episode` with its `RewardAccount`, driven on a private
event-loop thread, the way `cua.rl.CuaEnv` drives them. The model's mistakes never raise:
a bad argument, an action the sandbox refuses, a step after the episode ended, each is a
tool result in words the model sees. A sandbox that fails (`InfraError`) is closed, the
rollout scores 0, and the next reset opens a fresh one. A dataset row the class cannot serve
(no task, an unknown task, a task of another sandbox kind) raises `BadRequest`: that is the
trainer's configuration, not the model's doing.
"""

from __future__ import annotations

import atexit
import io
import threading
import weakref
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal, TypeVar

from PIL import Image
from pydantic import BaseModel, ValidationError

from cua.actions import Back, Click, Done, Drag, Forward, Goto, Key, Move, Point, Scroll, Type, Wait
from cua.episode.episode import Episode
from cua.episode.handle import SandboxHandle
from cua.episode.loop import STOP
from cua.episode.openers import sandbox_key
from cua.episode.transition import RewardAccount, RewardMode, Transition
from cua.errors import AgentError, BadRequest, ClientError, CuaError, ErrorRecord, InfraError
from cua.observation import Observation, ObserveOptions, Size
from cua.sync_api import _LoopThread
from cua.task import TaskInstance

__all__ = ["BrowserToolEnv", "CuaToolEnv", "DesktopToolEnv", "FakeToolEnv", "release_all"]

T = TypeVar("T")

#: A tool's result as TRL passes it to the model: content blocks (an image, then text), or text alone.
ToolResult = list[dict[str, Any]] | str
#: An action model of `cua.actions` (named here: the tool `type` shadows the builtin in the class body).
ActionModel = type[BaseModel]

_LIVE: weakref.WeakSet[CuaToolEnv] = weakref.WeakSet()
_LIVE_LOCK = threading.Lock()


def release_all() -> int:
    """Close every live environment's sandbox (and its loop thread); returns how many were open.
    Called by `ReleaseSandboxes` at the trainer's end and at interpreter exit."""
    with _LIVE_LOCK:
        envs = list(_LIVE)
    for env in envs:
        env._close()
    return len(envs)


atexit.register(release_all)


def _instance(task: str, seed: int) -> TaskInstance:
    from cua.tasks.registry import task_instance

    return task_instance(task, seed)


def _image(obs: Observation) -> Image.Image:
    assert obs.screenshot is not None
    image: Image.Image = Image.open(io.BytesIO(obs.screenshot.data))
    return image if image.mode == "RGB" else image.convert("RGB")


def _validation_text(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors())


class CuaToolEnv:
    """One rollout's environment (see the module docstring). Subclasses name the sandbox
    `kind` whose tasks they serve, and add that kind's own actions as tools."""

    #: The sandbox kind whose tasks this class serves.
    kind: ClassVar[str]

    def __init__(self, *, task: str | None = None, reward: RewardMode = "sparse", frame: Size | None = None,
                 max_steps: int | None = None, image_format: Literal["jpeg", "png"] = "jpeg") -> None:
        #: The task of a row without a `task` column.
        self.default_task = task
        self.reward_mode: RewardMode = reward
        self.frame = frame
        self.max_steps = max_steps
        self.image_format: Literal["jpeg", "png"] = image_format
        self._loop: _LoopThread | None = None
        self._cm: Any = None
        self._handle: SandboxHandle | None = None
        self._key: str | None = None
        self._account: RewardAccount | None = None
        self._return = 0.0
        #: The episode was judged (it ended, or `get_reward` judged it as it stood).
        self._judged = False
        self._closed = False
        with _LIVE_LOCK:
            _LIVE.add(self)

    # -- TRL's interface: reset and get_reward (every other public method is a tool) --------------

    def reset(self, task: str | None = None, seed: int | None = None, **row: Any) -> ToolResult:
        """Start the row's task (`task` column, else the class's default) at the row's `seed` (0 if none)."""
        name = task or self.default_task
        if name is None:
            raise BadRequest("a row needs a task: a `task` column with a template id, or "
                             f"{type(self).__name__}(task=...)")
        instance = _instance(name, seed if seed is not None else 0)
        if instance.sandbox_kind != self.kind:
            raise BadRequest(f"{name} is a {instance.sandbox_kind} task; {type(self).__name__} serves {self.kind} "
                             "tasks", details={"task": name, "kind": instance.sandbox_kind})
        if self._closed:  # released by the trainer's end or release_all, then handed a new batch
            self._closed = False
            with _LIVE_LOCK:
                _LIVE.add(self)
        self._end_episode()
        obs = self._call(self._reset(instance))
        account = self._account
        assert account is not None
        return [{"type": "image", "image": _image(obs)}, {"type": "text", "text": account.episode.instruction}]

    def get_reward(self) -> float:
        """The rollout's return: the judge's score of the final state (an episode the model left
        without `done` is judged as it stands, as `cua eval` judges a turn with no action)."""
        account = self._account
        if account is not None and not self._judged:
            self._act(STOP)
        return self._return

    # -- the unified actions -----------------------------------------------------------------

    def click(self, x: float, y: float, button: str = "left", count: int = 1) -> ToolResult:
        """Click at a point of the last screenshot.

        Args:
            x: Horizontal pixel coordinate in the last screenshot.
            y: Vertical pixel coordinate in the last screenshot.
            button: The mouse button: "left", "right" or "middle".
            count: 1 for a click, 2 for a double click, 3 for a triple click.
        """
        return self._tool(Click, x=x, y=y, button=button, count=count)

    def move(self, x: float, y: float) -> ToolResult:
        """Move the mouse pointer to a point (hover).

        Args:
            x: Horizontal pixel coordinate in the last screenshot.
            y: Vertical pixel coordinate in the last screenshot.
        """
        return self._tool(Move, x=x, y=y)

    def drag(self, x1: float, y1: float, x2: float, y2: float) -> ToolResult:
        """Press the left button at one point, move to another, and release there.

        Args:
            x1: Horizontal coordinate where the drag starts.
            y1: Vertical coordinate where the drag starts.
            x2: Horizontal coordinate where the drag ends.
            y2: Vertical coordinate where the drag ends.
        """
        try:
            path = [Point(x=x1, y=y1), Point(x=x2, y=y2)]
        except ValidationError as exc:
            return f"error: drag: {_validation_text(exc)}"
        return self._tool(Drag, path=path)

    def scroll(self, x: float, y: float, dy: float, dx: float = 0) -> ToolResult:
        """Scroll with the pointer at a point.

        Args:
            x: Horizontal pixel coordinate of the pointer.
            y: Vertical pixel coordinate of the pointer.
            dy: Pixels to scroll down (negative scrolls up).
            dx: Pixels to scroll right (negative scrolls left).
        """
        return self._tool(Scroll, x=x, y=y, dx=dx, dy=dy)

    def type(self, text: str) -> ToolResult:
        """Type text with the keyboard into the focused field.

        Args:
            text: The text to type.
        """
        return self._tool(Type, text=text)

    def key(self, keys: str) -> ToolResult:
        """Press a key or a combination together.

        Args:
            keys: The key, or keys joined by "+", e.g. "Enter", "Tab", "ctrl+a".
        """
        return self._tool(Key, keys=keys)

    def wait(self, seconds: float = 1.0) -> ToolResult:
        """Let time pass, then look again.

        Args:
            seconds: How long to wait, at most 60.
        """
        return self._tool(Wait, seconds=seconds)

    def done(self, status: str = "success", answer: str | None = None) -> ToolResult:
        """End the task; the final state is judged.

        Args:
            status: "success" when the task is done, "failure" to give up, "infeasible" when it cannot be done.
            answer: The answer, for a task that asks a question.
        """
        return self._tool(Done, status=status, answer=answer)

    # -- the work ----------------------------------------------------------------------------

    def _tool(self, action_type: ActionModel, **arguments: Any) -> ToolResult:
        name = action_type.model_fields["type"].default
        try:
            action = action_type.model_validate(arguments)
        except ValidationError as exc:
            return f"error: {name}: {_validation_text(exc)}"
        account = self._account
        if account is None or self._handle is None:
            return "error: no task is running (the environment was not reset, or its sandbox failed)"
        if self._judged:
            return "error: the episode is over; no further actions are taken"
        return self._act(action)

    def _act(self, action: Any) -> ToolResult:
        account = self._account
        assert account is not None
        try:
            t: Transition = self._call(account.step(action))
        except (ClientError, AgentError) as exc:  # an action this sandbox refuses: the model's mistake, the episode goes on
            return f"error: {exc.message}"
        except InfraError as exc:
            account.episode.finish(status="infra_error", error=ErrorRecord.of(exc))
            self._account = None
            self._call(self._close_sandbox())
            return f"error: the sandbox failed ({exc.message}); this rollout is over"
        self._return += t.reward
        self._judged = t.over
        return self._result(t)

    def _result(self, t: Transition) -> ToolResult:
        obs = t.observation
        lines = [f"step {self._account.episode.steps if self._account else '?'}"]
        if obs.error is not None:
            lines.append(f"the action failed: {obs.error.message}")
        if t.over:
            lines.append("the episode is over" + (" (step limit)" if t.truncated else ""))
        content: list[dict[str, Any]] = []
        if obs.screenshot is not None:
            content.append({"type": "image", "image": _image(obs)})
        content.append({"type": "text", "text": "; ".join(lines)})
        return content

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._loop is None:
            self._loop = _LoopThread()
        return self._loop.call(coro)

    async def _reset(self, instance: TaskInstance) -> Observation:
        key = sandbox_key(instance)
        if self._handle is None or self._key != key:
            await self._close_sandbox()
            from cua.episode.local import open_local

            cm = open_local(instance.sandbox_kind, dict(instance.sandbox_config))
            self._handle = await cm.__aenter__()
            self._cm, self._key = cm, key
        observe = ObserveOptions(format=self.image_format, frame=self.frame)
        episode = Episode(self._handle, instance, observe=observe, producer="rl", max_steps=self.max_steps)
        try:
            obs = await episode.reset()
        except InfraError as exc:
            episode.finish(status="infra_error", error=ErrorRecord.of(exc))
            await self._close_sandbox()
            raise
        self._account = RewardAccount.at_start(episode, self.reward_mode)
        self._return, self._judged = 0.0, False
        return obs

    async def _close_sandbox(self) -> None:
        cm, self._cm, self._handle, self._key = self._cm, None, None, None
        if cm is not None:
            try:
                await cm.__aexit__(None, None, None)
            except CuaError:
                pass  # closing a sandbox that already failed: what it held is gone with it

    def _end_episode(self) -> None:
        if self._account is not None:
            self._account.episode.finish()
            self._account = None
        self._return = 0.0

    def _close(self) -> None:
        """Close the sandbox and stop the loop thread (idempotent). A later `reset` opens anew."""
        self._end_episode()
        self._closed = True
        with _LIVE_LOCK:
            _LIVE.discard(self)
        loop, self._loop = self._loop, None
        if loop is not None:
            try:
                loop.call(self._close_sandbox())
            finally:
                loop.stop()

    def __enter__(self) -> CuaToolEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()


class FakeToolEnv(CuaToolEnv):
    """The fake kind's tasks (in process, milliseconds): for tests and quick trials."""

    kind = "fake"


class DesktopToolEnv(CuaToolEnv):
    """X desktop tasks (Xvfb): the pointer and keyboard actions."""

    kind = "desktop"


class BrowserToolEnv(CuaToolEnv):
    """Browser tasks (Chromium): the pointer and keyboard actions and the browser's navigation."""

    kind = "browser"

    def goto(self, url: str) -> ToolResult:
        """Open a URL in the current tab.

        Args:
            url: The address to open.
        """
        return self._tool(Goto, url=url)

    def back(self) -> ToolResult:
        """Go back one page in the tab's history."""
        return self._tool(Back)

    def forward(self) -> ToolResult:
        """Go forward one page in the tab's history."""
        return self._tool(Forward)
