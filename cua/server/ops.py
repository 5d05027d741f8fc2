"""What the server does for each request type: one small async function per type,
found through the `HANDLERS` table.

A handler gets the connection's context and the parsed request, and returns the frames
of its answer (a binary screenshot frame, if any, then the JSON result). Errors are
raised as `cua.errors` exceptions; the connection turns them into `error` frames.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cua import protocol as p
from cua.errors import BadRequest
from cua.observation import Observation, ObserveOptions
from cua.sandbox import CommandRunner, FileUploader, Queryable, Snapshottable, Streamable, perform_actions, unsupported
from cua.server.manager import Access, Caller, Managed, SandboxManager

if TYPE_CHECKING:
    from cua.server.connection import Connection

__all__ = ["HANDLERS", "Context"]

Frames = list[str | bytes]


@dataclass(slots=True)
class Context:
    manager: SandboxManager
    conn: Connection

    @property
    def conn_id(self) -> str:
        return self.conn.id

    @property
    def proto(self) -> p.ServerConnection:
        return self.conn.proto

    @property
    def caller(self) -> Caller:
        return self.conn.caller

    def sandbox(self, sandbox_id: str, access: Access = "drive") -> Managed:
        """The sandbox, if this connection may use it so (else `unknown_sandbox`)."""
        return self.manager.get(sandbox_id, self.caller, access)


def _observation(ctx: Context, rid: int, managed: Managed, obs: Observation) -> Frames:
    if managed.drivable_by(ctx.caller):  # a viewer's frame is not the one the agent acts in
        managed.last_frame = obs.frame
    return ctx.proto.observation_frames(rid, p.ObservationResult(observation=obs))


async def _new_sandbox_frames(ctx: Context, rid: int, managed: Managed, observe: ObserveOptions | None) -> Frames:
    try:
        async with ctx.manager.use(managed) as sandbox:
            obs = await sandbox.observe(observe)
            info = managed.info()
            managed.last_frame = obs.frame
    except BaseException:
        # the caller never learns the id: do not leave the sandbox behind
        await ctx.manager.close(managed)
        raise
    payload = p.SandboxResult(sandbox=info, observation=obs)
    return ctx.proto.observation_frames(rid, payload)


async def create(ctx: Context, req: p.Create) -> Frames:
    managed = await ctx.manager.create(req.kind, req.config, owner=ctx.conn_id, keep=req.keep,
                                       principal=ctx.caller.grant.principal)
    return await _new_sandbox_frames(ctx, req.id, managed, req.observe)


async def reset(ctx: Context, req: p.Reset) -> Frames:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        obs = await sandbox.reset(seed=req.seed, options=req.options, observe=req.observe)
    return _observation(ctx, req.id, managed, obs)


async def act(ctx: Context, req: p.Act) -> Frames:
    actions = req.action if isinstance(req.action, list) else [req.action]
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if req.queries is not None and not isinstance(sandbox, Queryable):
            raise unsupported("answer state queries", managed.kind)
        frame = req.frame if len(actions) == 1 else (req.frame or managed.last_frame)
        obs = await perform_actions(sandbox, actions, frame=frame, observe=req.observe)
        results = await sandbox.query(req.queries) \
            if req.queries is not None and isinstance(sandbox, Queryable) else None
    if results is None:
        return _observation(ctx, req.id, managed, obs)
    managed.last_frame = obs.frame
    return ctx.proto.observation_frames(req.id, p.ObservationResult(observation=obs, results=results))


async def observe(ctx: Context, req: p.Observe) -> Frames:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        obs = await sandbox.observe(req.options)
    return _observation(ctx, req.id, managed, obs)


async def query(ctx: Context, req: p.Query) -> Frames:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Queryable):
            raise unsupported("answer state queries", managed.kind)
        results = await sandbox.query(req.queries)
    return [ctx.proto.result(req.id, p.QueryResult(results=results))]


async def snapshot(ctx: Context, req: p.Snapshot) -> Frames:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Snapshottable):
            raise unsupported("snapshot", managed.kind)
        ref = await sandbox.snapshot()
        ctx.manager.add_snapshot(managed, ref)
    return [ctx.proto.result(req.id, p.SnapshotResult(snapshot=ref))]


async def restore(ctx: Context, req: p.Restore) -> Frames:
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Snapshottable):
            raise unsupported("restore", managed.kind)
        ref = ctx.manager.snapshot_ref(req.snapshot_id, kind=managed.kind, caller=ctx.caller)
        obs = await sandbox.restore(ref, observe=req.observe)
    return _observation(ctx, req.id, managed, obs)


async def delete_snapshot(ctx: Context, req: p.DeleteSnapshot) -> Frames:
    await ctx.manager.delete_snapshot(req.snapshot_id, ctx.caller)
    return [ctx.proto.result(req.id, p.EmptyResult())]


async def fork(ctx: Context, req: p.Fork) -> Frames:
    # A fork starts from the snapshot's data, never the parent's live state, so the parent's
    # lock is not held: the forks of a group rollout (k at once from one parent) run together.
    parent = ctx.sandbox(req.sandbox_id)
    child = await ctx.manager.fork(parent, req.snapshot_id, owner=ctx.conn_id, keep=req.keep,
                                   principal=ctx.caller.grant.principal, caller=ctx.caller)
    return await _new_sandbox_frames(ctx, req.id, child, req.observe)


async def close(ctx: Context, req: p.Close) -> Frames:
    managed = ctx.sandbox(req.sandbox_id, "close")
    ctx.conn.stop_streams_of(managed.id)
    await ctx.manager.close(managed)
    return [ctx.proto.result(req.id, p.EmptyResult())]


async def list_sandboxes(ctx: Context, req: p.ListSandboxes) -> Frames:
    infos = ctx.manager.list(ctx.caller, all=req.all)
    return [ctx.proto.result(req.id, p.ListResult(sandboxes=infos))]


async def stream(ctx: Context, req: p.Stream) -> Frames:
    managed = ctx.sandbox(req.sandbox_id, "view")
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, Streamable):
            raise unsupported("stream", managed.kind)
        # the result goes out before the first frame can
        ctx.conn.send([ctx.proto.result(req.id, p.StreamResult(stream_id=req.id))])
        ctx.conn.start_stream(req.id, managed, sandbox, req.options or ObserveOptions(), req.max_fps)
    return []


async def unstream(ctx: Context, req: p.Unstream) -> Frames:
    if not ctx.conn.stop_stream(req.stream_id):
        raise BadRequest(f"no stream {req.stream_id} on this connection", details={"stream_id": req.stream_id})
    return [ctx.proto.result(req.id, p.EmptyResult())]


async def ping(ctx: Context, req: p.Ping) -> Frames:
    return [ctx.proto.result(req.id, p.EmptyResult())]


# --- files and commands (upload, run): `drive` on a sandbox this caller may drive ---

def _b64(field: str, text: str) -> bytes:
    import base64
    import binascii

    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BadRequest(f"`{field}` is not valid base64: {exc}", details={"field": field}) from exc


async def upload(ctx: Context, req: p.Upload) -> Frames:
    data = _b64("data", req.data)
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, FileUploader):
            raise unsupported("upload files", managed.kind)
        path, size = await sandbox.upload(req.path, data, append=req.append, mode=req.mode)
    return [ctx.proto.result(req.id, p.UploadResult(path=path, size=size))]


async def run(ctx: Context, req: p.Run) -> Frames:
    stdin = _b64("stdin", req.stdin) if req.stdin is not None else None
    managed = ctx.sandbox(req.sandbox_id)
    async with ctx.manager.use(managed) as sandbox:
        if not isinstance(sandbox, CommandRunner):
            raise unsupported("run commands", managed.kind)
        output = await sandbox.run_command(req.argv, time_limit=req.time_limit, max_output_bytes=req.max_output_bytes,
                                           cwd=req.cwd, stdin=stdin)
    return [ctx.proto.result(req.id, p.RunResult(output=output))]


Handler = Callable[[Context, Any], Awaitable[Frames]]

HANDLERS: dict[str, Handler] = {
    "create": create,
    "reset": reset,
    "act": act,
    "observe": observe,
    "query": query,
    "snapshot": snapshot,
    "restore": restore,
    "delete_snapshot": delete_snapshot,
    "fork": fork,
    "close": close,
    "list": list_sandboxes,
    "stream": stream,
    "unstream": unstream,
    "ping": ping,
    "upload": upload,
    "run": run,
}
