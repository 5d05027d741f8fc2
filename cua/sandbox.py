"""The sandbox interface, its optional capabilities, and the registry of kinds.

A sandbox is something an agent can see and act in. Its lifecycle (create, reset,
snapshot, restore, fork, close) lives here, apart from any transport: a sandbox does
not know who serves it or who drives it. The server wraps sandboxes in the websocket
protocol; tests and in-process users drive them directly.

Optional abilities are small Protocols (`Snapshottable`, `Forkable`, `Queryable`,
`Streamable`), checked with isinstance, never stubs that raise NotImplementedError.

Kinds are found through the `cua.sandbox_kinds` entry-point group (so the core never
imports a sandbox package), or registered explicitly with `register_kind`.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator, Callable, Sequence
from importlib.metadata import entry_points
from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from cua.actions import (
    Action,
    Click,
    DoubleTap,
    Drag,
    Fling,
    LongPress,
    MouseDown,
    MouseUp,
    Move,
    Pinch,
    Point,
    Scroll,
    Swipe,
    Tap,
)
from cua.errors import ActionFailed, BadRequest, Unsupported
from cua.info import CommandOutput, SandboxEvent, SandboxInfo, SnapshotRef
from cua.observation import ActionError, Observation, ObserveOptions, Screenshot, Size
from cua.state import StateQuery, StateResult

__all__ = [
    "ActQueryable",
    "AppHostRef",
    "ResetQueryable",
    "Forkable",
    "Queryable",
    "Sandbox",
    "ServiceImages",
    "SandboxEvent",
    "SandboxInfo",
    "ServiceSpec",
    "Snapshottable",
    "SnapshotRef",
    "Streamable",
    "CommandRunner",
    "FileUploader",
    "PooledKind",
    "capabilities_of",
    "close_pools",
    "create_sandbox",
    "kinds",
    "perform_actions",
    "perform_and_query",
    "reset_and_query",
    "register_kind",
    "resolve_kind",
    "scale_action",
]

ENTRY_POINT_GROUP = "cua.sandbox_kinds"


class AppHostRef(BaseModel):
    """An app as a named app host serves it: `host` is registered in the `cua.app_hosts`
    entry-point group (the bundled apps' host is `bundled`), `app` is one it knows."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    host: str = Field(pattern=r"^[a-z][a-z0-9_.-]{0,63}$")
    app: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")


class ServiceSpec(BaseModel):
    """A backing app that a sandbox runs beside its screen, inside its own namespace.

    The service speaks the app contract (see `tasks/apps/CONTRACT.md`): it listens on
    TCP 127.0.0.1:$CUA_APP_PORT for the pages, and on the unix socket $CUA_APP_SOCKET
    for the host (state, reset, snapshot, restore), which reaches it across the
    network namespace through the filesystem.
    """

    model_config = ConfigDict(extra="forbid")
    name: str = Field("app", pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    #: The service as its own process: what a container runs, and a shared sandbox when
    #: `app_host` is unset.
    argv: list[str] = Field(min_length=1)
    port: int = Field(8000, ge=1024, le=65535)
    env: dict[str, str] = Field(default_factory=dict)
    ready_timeout: float = Field(30.0, gt=0, le=300)
    #: The same app served by a named multi-instance host instead of its own process, where
    #: the sandbox shares processes (shared isolation): one interpreter for many sandboxes.
    app_host: AppHostRef | None = None

    @model_validator(mode="after")
    def _hosted_without_env(self) -> ServiceSpec:
        if self.app_host is not None and self.env:
            raise ValueError("env cannot reach an app inside a shared app host; "
                             "leave out app_host to run the service's argv with this env")
        return self


EventSink = Callable[[SandboxEvent], None]


def screen_from_viewport(data: Any) -> Any:
    """A screen-backed kind's config (desktop, VM, fake) takes the browser's `viewport`
    as its `screen`, so one task's sandbox config reads the same across kinds; for use
    as a `model_validator(mode="before")`."""
    if isinstance(data, dict) and "viewport" in data:
        data = dict(data)
        data.setdefault("screen", data.pop("viewport"))
    return data


class Sandbox(abc.ABC):
    """One isolated screen an agent sees and acts in."""

    kind: ClassVar[str]
    config_model: ClassVar[type[BaseModel]]

    id: str

    @classmethod
    @abc.abstractmethod
    async def create(cls, config: BaseModel, *, sandbox_id: str, emit: EventSink | None = None) -> "Sandbox":
        """Start a sandbox. `emit` receives events the sandbox raises on its own."""

    @abc.abstractmethod
    async def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None,
                    observe: ObserveOptions | None = None) -> Observation:
        """Bring the sandbox to its configured initial state (app seed, start page)."""

    @abc.abstractmethod
    async def observe(self, options: ObserveOptions | None = None) -> Observation: ...

    @abc.abstractmethod
    async def act(self, action: Action, *, frame: Size | None = None,
                  observe: ObserveOptions | None = None) -> Observation:
        """Perform one action, wait until the screen settles, and observe.

        `frame` is the size of the observation the agent's coordinates refer to (by
        default the frame of the last observation). Agent faults (out of bounds, foreign
        action, element gone) come back as `Observation.error`; only infrastructure
        faults raise.
        """

    @abc.abstractmethod
    async def close(self) -> None: ...

    @abc.abstractmethod
    def info(self) -> SandboxInfo: ...

    @property
    @abc.abstractmethod
    def alive(self) -> bool:
        """False once the sandbox's processes have died or it was closed."""


@runtime_checkable
class Snapshottable(Protocol):
    async def snapshot(self) -> SnapshotRef: ...

    async def restore(self, ref: SnapshotRef, *, observe: ObserveOptions | None = None) -> Observation: ...

    async def delete_snapshot(self, ref: SnapshotRef) -> None: ...


@runtime_checkable
class ServiceImages(Protocol):
    """A sandbox whose service's data can be replaced whole (the app contract's restore),
    page left as it is: judge QA writes an adversarial database into the live app, then
    reloads the page through a snapshot, so checks that read the page are attacked too."""

    async def put_service_image(self, service: str, image: bytes) -> None: ...


@runtime_checkable
class Forkable(Protocol):
    async def fork(self, ref: SnapshotRef, *, sandbox_id: str, emit: EventSink | None = None) -> Sandbox:
        """A new, independent sandbox started from a snapshot of this one."""
        ...


@runtime_checkable
class Queryable(Protocol):
    async def query(self, queries: Sequence[StateQuery]) -> list[StateResult]: ...


@runtime_checkable
class ActQueryable(Protocol):
    async def act_query(self, action: Action | dict[str, Any], queries: Sequence[StateQuery], *,
                        frame: Size | None = None, observe: ObserveOptions | None = None
                        ) -> tuple[Observation, list[StateResult]]:
        """`act`, with `queries` answered on the state the action settled in, read while the
        observation is taken rather than after it (dense reward off a step's critical path)."""
        ...


@runtime_checkable
class ResetQueryable(Protocol):
    async def reset_query(self, queries: Sequence[StateQuery], *, seed: int | None = None,
                          options: dict[str, Any] | None = None, observe: ObserveOptions | None = None
                          ) -> tuple[Observation, list[StateResult]]:
        """`reset`, with `queries` answered on the settled start state while the first
        observation is taken (an episode's initial judge reads off the reset's critical path)."""
        ...


@runtime_checkable
class Streamable(Protocol):
    def frames(self, options: ObserveOptions, *, max_fps: float = 10.0) -> AsyncIterator[Screenshot]:
        """Screenshots as the screen changes, for live views of human demonstrations."""
        ...


@runtime_checkable
class FileUploader(Protocol):
    async def upload(self, path: str, data: bytes, *, append: bool = False, mode: int | None = None) -> tuple[str, int]:
        """Write `data` to `path` (relative to the sandbox user's home, or absolute inside
        it) as that user; returns the absolute path and the file's size."""
        ...


@runtime_checkable
class CommandRunner(Protocol):
    async def run_command(self, argv: Sequence[str], *, time_limit: float = 30.0, max_output_bytes: int = 100_000,
                          cwd: str | None = None, stdin: bytes | None = None) -> CommandOutput:
        """Run one command as the sandbox's user, bounded in time and kept output."""
        ...


_CAPABILITIES: dict[str, type] = {
    "snapshot": Snapshottable,
    "fork": Forkable,
    "query": Queryable,
    "stream": Streamable,
    "upload": FileUploader,
    "run": CommandRunner,
}


def capabilities_of(sandbox: object) -> list[str]:
    return [name for name, proto in _CAPABILITIES.items() if isinstance(sandbox, proto)]


# --- abilities of a kind (class-level) ---

@runtime_checkable
class PooledKind(Protocol):
    """A kind that keeps sandboxes warm for the creates to come (a server's `--pool`).
    They outlive every sandbox, so whoever serves the creates closes them when it stops."""

    @classmethod
    async def close_pools(cls) -> None:
        """Close this event loop's warm sandboxes of the kind."""
        ...


async def close_pools() -> None:
    """Close the warm pools of every kind in use (a server's shutdown)."""
    for cls in {*_registry.values()}:
        if isinstance(cls, PooledKind):
            await cls.close_pools()


# --- registry of kinds ---

_registry: dict[str, type[Sandbox]] = {}


def register_kind(cls: type[Sandbox]) -> type[Sandbox]:
    """Register a sandbox class under `cls.kind` (usable as a decorator)."""
    _registry[cls.kind] = cls
    return cls


def _discovered() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def kinds() -> list[str]:
    return sorted(set(_registry) | set(_discovered()))


def resolve_kind(kind: str) -> type[Sandbox]:
    if kind not in _registry:
        ep = _discovered().get(kind)
        if ep is None:
            raise BadRequest(f"unknown sandbox kind {kind!r}; known: {', '.join(kinds()) or 'none'}",
                             details={"kind": kind})
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, Sandbox)):
            raise TypeError(f"entry point {ep.value} for kind {kind!r} is not a Sandbox subclass")
        _registry[kind] = cls
    return _registry[kind]


def validate_config(kind: str, config: dict[str, Any] | BaseModel | None) -> BaseModel:
    cls = resolve_kind(kind)
    if isinstance(config, cls.config_model):
        return config
    try:
        return cls.config_model.model_validate(config or {})
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_context=False)
        loc, msg = (errors[0]["loc"], errors[0]["msg"]) if errors else ((), "invalid")
        field = ".".join(str(part) for part in loc) or "config"
        raise BadRequest(f"invalid {kind} config: {field}: {msg}"
                         + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""),
                         details={"errors": errors, "field": field}) from exc


async def create_sandbox(kind: str, config: dict[str, Any] | BaseModel | None, *, sandbox_id: str,
                         emit: EventSink | None = None) -> Sandbox:
    cls = resolve_kind(kind)
    return await cls.create(validate_config(kind, config), sandbox_id=sandbox_id, emit=emit)


# --- coordinates ---

def _scale_optional(x: float | None, y: float | None, frame: Size, screen: Size
                    ) -> tuple[float, float] | tuple[None, None]:
    """A point that may be left out (press where the pointer is), scaled when given."""
    if x is None or y is None:
        if (x is None) != (y is None):
            raise ActionFailed("give both x and y, or neither", reason="bad_coordinates")
        return None, None
    return _scale_point(x, y, frame, screen)


def _scale_point(x: float, y: float, frame: Size, screen: Size) -> tuple[float, float]:
    if not (0 <= x < frame.width and 0 <= y < frame.height):
        raise ActionFailed(f"point ({x:g}, {y:g}) is outside the {frame.width}x{frame.height} frame",
                           reason="out_of_bounds", details={"x": x, "y": y})
    sx, sy = screen.width / frame.width, screen.height / frame.height
    return min(x * sx, screen.width - 1), min(y * sy, screen.height - 1)


def scale_action(action: Action, frame: Size, screen: Size, *, foreign: frozenset[str] = frozenset()) -> Action:
    """Map an action from the agent's frame to screen pixels, checking bounds.

    Raises ActionFailed (an agent fault) for points outside the frame and for action
    types in `foreign` (e.g. browser-only actions on a desktop).
    """
    if action.type in foreign:
        raise ActionFailed(f"action {action.type!r} is not available in this sandbox", reason="unsupported_action")
    if isinstance(action, Drag):
        path = [Point(x=px, y=py) for px, py in (_scale_point(p.x, p.y, frame, screen) for p in action.path)]
        return action.model_copy(update={"path": path})
    if isinstance(action, (MouseDown, MouseUp)):
        x, y = _scale_optional(action.x, action.y, frame, screen)
        return action.model_copy(update={"x": x, "y": y})
    if isinstance(action, (Swipe, Fling)):
        x, y = _scale_point(action.x, action.y, frame, screen)
        # The distance runs along one axis, so it scales as that axis does.
        ratio = screen.height / frame.height if action.direction in ("up", "down") else screen.width / frame.width
        return action.model_copy(update={"x": x, "y": y, "distance": action.distance * ratio})
    if isinstance(action, (Click, Move, Scroll, Tap, DoubleTap, LongPress, Pinch)):
        x, y = _scale_point(action.x, action.y, frame, screen)
        return action.model_copy(update={"x": x, "y": y})
    return action


def unsupported(what: str, kind: str) -> Unsupported:
    return Unsupported(f"{kind} sandboxes cannot {what}", details={"kind": kind, "capability": what})


# --- several actions, one observation ---

async def perform_and_query(sandbox: Sandbox, actions: Sequence[Action], queries: Sequence[StateQuery], *,
                            frame: Size | None, observe: ObserveOptions | None) -> tuple[Observation, list[StateResult]]:
    """`perform_actions`, then `queries` answered on the state the actions left: together
    where the sandbox reads state alongside its observation (`ActQueryable`, one action)."""
    if not isinstance(sandbox, Queryable):
        raise unsupported("answer state queries", sandbox.kind)
    if len(actions) == 1 and isinstance(sandbox, ActQueryable):
        return await sandbox.act_query(actions[0], list(queries), frame=frame, observe=observe)
    obs = await perform_actions(sandbox, actions, frame=frame, observe=observe)
    return obs, await sandbox.query(list(queries))


async def reset_and_query(sandbox: Sandbox, queries: Sequence[StateQuery], *, seed: int | None,
                          options: dict[str, Any] | None, observe: ObserveOptions | None
                          ) -> tuple[Observation, list[StateResult]]:
    """`reset`, then `queries` answered on the start state: together where the sandbox reads
    state alongside its observation (`ResetQueryable`)."""
    if not isinstance(sandbox, Queryable):
        raise unsupported("answer state queries", sandbox.kind)
    if isinstance(sandbox, ResetQueryable):
        return await sandbox.reset_query(list(queries), seed=seed, options=options, observe=observe)
    obs = await sandbox.reset(seed=seed, options=options, observe=observe)
    return obs, await sandbox.query(list(queries))


async def perform_actions(sandbox: Sandbox, actions: Sequence[Action], *, frame: Size | None,
                          observe: ObserveOptions | None) -> Observation:
    """Perform actions in order and observe once at the end: the one rule for a list of
    actions, wherever the sandbox is driven from (the server's `act`, `LocalSandbox.act`).

    Intermediate steps observe only cheap text state (no screenshot, tree or focus);
    the first agent fault stops the sequence, and the final observation carries that
    fault with the index of the failed action. Every action is read in `frame` (the
    frame the agent saw; the caller passes the last observation's frame when the agent
    gave none), since an intermediate observation would otherwise change it.
    """
    if not actions:
        raise BadRequest("`action` is an empty list")
    if len(actions) == 1:
        return await sandbox.act(actions[0], frame=frame, observe=observe)
    options = observe or ObserveOptions()
    quiet = options.model_copy(update={"screenshot": False, "axtree": False, "focused": False, "cdp": False})
    for index, action in enumerate(actions[:-1]):
        obs = await sandbox.act(action, frame=frame, observe=quiet)
        if obs.error is not None:
            final = await sandbox.observe(options)
            error = ActionError(reason=obs.error.reason, message=f"action {index} ({action.type}): {obs.error.message}")
            return final.model_copy(update={"error": error, "step": obs.step})
    return await sandbox.act(actions[-1], frame=frame, observe=options)
