"""What the server does for each request type: one small async function per type, found
through the typed `OPS` table.

A handler is given the request's `Context` (the sandbox manager and who is calling) and
the request, already validated by `cua.protocol` as its own model, and returns a `Reply`:
the result payload and, for `stream` and `unstream`, what to do with a live stream. It
never touches the connection and never builds a frame: `cua.server.connection` turns the
reply into frames (a screenshot's binary frame just before its JSON result), writes them,
and then carries out the stream intent, so a stream's result always precedes its first
frame. Errors are raised as `cua.errors` exceptions; the connection answers them with
`error` frames.

Event subscriptions are not part of a reply: `SandboxManager.get` subscribes the caller
when it grants access, before the handler acts, so the events a request itself causes (a
`navigated` during the first `act` on a kept sandbox) reach the caller. A sandbox's streams
are stopped by the manager before it closes the sandbox, for whichever connection they run.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel

from cua import protocol as p
from cua.errors import BadRequest
from cua.observation import Observation, ObserveOptions
from cua.sandbox import (
    CommandRunner,
    FileUploader,
    Queryable,
    Sandbox,
    Snapshottable,
    Streamable,
    perform_actions,
    perform_and_query,
    reset_and_query,
    unsupported,
)
from cua.server.auth import Scope
from cua.server.manager import Access, Caller, Managed, SandboxManager
from cua.state import StateResult

__all__ = ["OPS", "Context", "Op", "Reply", "Result", "StartStream", "StopStream", "StreamIntent"]

#: Every result payload a handler may return (`cua.protocol.RESULT_MODELS` maps request
#: types to them on the wire).
Result = (p.SandboxResult | p.ObservationResult | p.QueryResult | p.SnapshotResult | p.ListResult | p.StreamResult
          | p.EmptyResult | p.UploadResult | p.RunResult)


@dataclass(frozen=True, slots=True)
class Context:
    """What a handler may know of the request's connection: who calls, and which stream
    ids it has live (a read-only view)."""

    manager: SandboxManager
    caller: Caller
    streams: Collection[int]

    @property
    def conn_id(self) -> str:
        return self.caller.conn_id

    def sandbox(self, sandbox_id: str, access: Access = "drive") -> Managed:
        """The sandbox, if this caller may use it so (else `unknown_sandbox`)."""
        return self.manager.get(sandbox_id, self.caller, access)


@dataclass(frozen=True, slots=True)
class StartStream:
    """Send `sandbox`'s frames to the caller as stream frames under `stream_id`, after the
    reply, until stopped or the sandbox closes."""

    stream_id: int
    managed: Managed
    sandbox: Streamable
    options: ObserveOptions
    max_fps: float


@dataclass(frozen=True, slots=True)
class StopStream:
    """Stop the caller's live stream `stream_id` (the handler checked that it is live)."""

    stream_id: int


StreamIntent = StartStream | StopStream


@dataclass(frozen=True, slots=True)
class Reply:
    """A handler's answer: the result payload, and what to do with a stream once it is sent."""

    result: Result
    stream: StreamIntent | None = None


def _observation(ctx: Context, managed: Managed, obs: Observation,
                 results: list[StateResult] | None = None) -> Reply:
    if managed.drivable_by(ctx.caller):  # a viewer's frame is not the one the agent acts in
        managed.last_frame = obs.frame
    return Reply(p.ObservationResult(observation=obs, results=results))


async def _new_sandbox(ctx: Context, managed: Managed, observe: ObserveOptions | None) -> Reply:
    try:
        async with ctx.manager.use(managed) as sandbox:
            obs = await sandbox.observe(observe)
            info = managed.info()
            managed.last_frame = obs.frame
    except BaseException:
        # the caller never learns the id: do not leave the sandbox behind
        await ctx.manager.close(managed)
        raise
    return Reply(p.SandboxResult(sandbox=info, observation=obs))


async def create(ctx: Context, req: p.Create) -> Reply:
    managed = await ctx.manager.create(req.kind, req.config, owner=ctx.conn_id, keep=req.keep,
                                       principal=ctx.caller.grant.principal)
    return await _new_sandbox(ctx, managed, req.observe)


async def reset(ctx: Context, req: p.Reset) -> Reply:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if req.queries is not None and not isinstance(sandbox, Queryable):
            raise unsupported("answer state queries", managed.kind)
        results: list[StateResult] | None = None
        if req.queries is not None:
            obs, results = await reset_and_query(sandbox, req.queries, seed=req.seed, options=req.options,
                                                 observe=req.observe)
        else:
            obs = await sandbox.reset(seed=req.seed, options=req.options, observe=req.observe)
    return _observation(ctx, managed, obs, results)


async def act(ctx: Context, req: p.Act) -> Reply:
    actions = req.action if isinstance(req.action, list) else [req.action]
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if req.queries is not None and not isinstance(sandbox, Queryable):
            raise unsupported("answer state queries", managed.kind)
        # The drivers' own last frame, never the sandbox's: a viewer's observe moves that one.
        frame = req.frame or managed.last_frame
        results: list[StateResult] | None = None
        if req.queries is not None:
            obs, results = await perform_and_query(sandbox, actions, req.queries, frame=frame, observe=req.observe)
        else:
            obs = await perform_actions(sandbox, actions, frame=frame, observe=req.observe)
    return _observation(ctx, managed, obs, results)


async def observe(ctx: Context, req: p.Observe) -> Reply:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        obs = await sandbox.observe(req.options)
    return _observation(ctx, managed, obs)


async def query(ctx: Context, req: p.Query) -> Reply:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Queryable):
            raise unsupported("answer state queries", managed.kind)
        results = await sandbox.query(req.queries)
    return Reply(p.QueryResult(results=results))


def _snapshottable(sandbox: Sandbox, managed: Managed, verb: str) -> Snapshottable:
    """The sandbox as one that takes snapshots; `unsupported` (naming `verb`) if its kind does not."""
    if not isinstance(sandbox, Snapshottable):
        raise unsupported(verb, managed.kind)
    return sandbox


async def snapshot(ctx: Context, req: p.Snapshot) -> Reply:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        ref = await _snapshottable(sandbox, managed, "snapshot").snapshot()
        ctx.manager.add_snapshot(managed, ref)
    return Reply(p.SnapshotResult(snapshot=ref))


async def restore(ctx: Context, req: p.Restore) -> Reply:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        restorer = _snapshottable(sandbox, managed, "restore")
        ref = ctx.manager.snapshot_ref(req.snapshot_id, kind=managed.kind, caller=ctx.caller)
        obs = await restorer.restore(ref, observe=req.observe)
    return _observation(ctx, managed, obs)


async def delete_snapshot(ctx: Context, req: p.DeleteSnapshot) -> Reply:
    await ctx.manager.delete_snapshot(req.snapshot_id, ctx.caller)
    return Reply(p.EmptyResult())


async def fork(ctx: Context, req: p.Fork) -> Reply:
    # A fork starts from the snapshot's data, never the parent's live state, so the parent's
    # lock is not held: the forks of a group rollout (k at once from one parent) run together.
    parent = ctx.sandbox(req.sandbox_id)
    child = await ctx.manager.fork(parent, req.snapshot_id, owner=ctx.conn_id, keep=req.keep,
                                   principal=ctx.caller.grant.principal, caller=ctx.caller)
    return await _new_sandbox(ctx, child, req.observe)


async def close(ctx: Context, req: p.Close) -> Reply:
    managed = ctx.sandbox(req.sandbox_id, "close")
    await ctx.manager.close(managed)  # stops the sandbox's streams first
    return Reply(p.EmptyResult())


async def list_sandboxes(ctx: Context, req: p.ListSandboxes) -> Reply:
    return Reply(p.ListResult(sandboxes=ctx.manager.list(ctx.caller, all=req.all)))


async def stream(ctx: Context, req: p.Stream) -> Reply:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Streamable):
            raise unsupported("stream", managed.kind)
    start = StartStream(req.id, managed, sandbox, req.options or ObserveOptions(), req.max_fps)
    return Reply(p.StreamResult(stream_id=req.id), stream=start)


async def unstream(ctx: Context, req: p.Unstream) -> Reply:
    if req.stream_id not in ctx.streams:
        raise BadRequest(f"no stream {req.stream_id} on this connection", details={"stream_id": req.stream_id})
    return Reply(p.EmptyResult(), stream=StopStream(req.stream_id))


async def ping(ctx: Context, req: p.Ping) -> Reply:
    return Reply(p.EmptyResult())


# --- files and commands (upload, run): `drive` on a sandbox this caller may drive ---

def _b64(field: str, text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest(f"`{field}` is not valid base64: {exc}", details={"field": field}) from exc


async def upload(ctx: Context, req: p.Upload) -> Reply:
    data = _b64("data", req.data)
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, FileUploader):
            raise unsupported("upload files", managed.kind)
        path, size = await sandbox.upload(req.path, data, append=req.append, mode=req.mode)
    return Reply(p.UploadResult(path=path, size=size))


async def run(ctx: Context, req: p.Run) -> Reply:
    stdin = _b64("stdin", req.stdin) if req.stdin is not None else None
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, CommandRunner):
            raise unsupported("run commands", managed.kind)
        output = await sandbox.run_command(req.argv, time_limit=req.time_limit, max_output_bytes=req.max_output_bytes,
                                           cwd=req.cwd, stdin=stdin)
    return Reply(p.RunResult(output=output))


# --- the table ---

RequestT = TypeVar("RequestT", bound=p.Request)


@dataclass(frozen=True, slots=True)
class Op:
    """One request type: its model, the scopes that allow it (any one suffices; none: any
    authenticated caller), and its handler, called only with a request of `model`."""

    name: str
    model: type[BaseModel]
    scopes: tuple[Scope, ...]
    handle: Callable[[Context, p.Request], Awaitable[Reply]]


def _op(model: type[RequestT], handler: Callable[[Context, RequestT], Awaitable[Reply]], *scopes: Scope) -> Op:
    name = model.model_fields["type"].default
    assert isinstance(name, str)

    async def handle(ctx: Context, request: p.Request) -> Reply:
        if not isinstance(request, model):
            raise TypeError(f"the {name} handler was given a {type(request).__name__}")
        return await handler(ctx, request)

    return Op(name, model, scopes, handle)


DRIVE: tuple[Scope, ...] = ("drive",)
VIEW: tuple[Scope, ...] = ("view", "drive")

#: Every request type the server performs, by its model. `hello` is the protocol's own
#: (`cua.protocol.ServerConnection`), and `cancel` acts on the connection's requests in
#: flight, so the connection answers both itself.
OPS: Mapping[type[BaseModel], Op] = {op.model: op for op in (
    _op(p.Create, create, *DRIVE),
    _op(p.Reset, reset, *DRIVE),
    _op(p.Act, act, *DRIVE),
    _op(p.Observe, observe, *VIEW),
    _op(p.Query, query, *VIEW),
    _op(p.Snapshot, snapshot, *DRIVE),
    _op(p.Restore, restore, *DRIVE),
    _op(p.DeleteSnapshot, delete_snapshot, *DRIVE),
    _op(p.Fork, fork, *DRIVE),
    _op(p.Close, close, "drive", "admin"),  # an admin closes any sandbox
    _op(p.ListSandboxes, list_sandboxes),
    _op(p.Stream, stream, *VIEW),
    _op(p.Unstream, unstream),
    _op(p.Ping, ping),
    _op(p.Upload, upload, *DRIVE),
    _op(p.Run, run, *DRIVE),
)}
