"""One event model (`cua.info.SandboxEvent`): what a sandbox emits is what a local handle's
callbacks get, what the server puts on the wire (in the same fields as before), and what a
remote client's callbacks get; and a client request answers with the protocol's typed result."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

import cua.client
from cua import protocol as p
from cua.actions import Wait
from cua.episode.local import open_local
from cua.errors import InternalError, SandboxCrashed
from cua.info import SandboxEvent
from cua.server.app import RunningServer

DIES = {"die_at_step": 1}


async def _died_locally() -> SandboxEvent:
    seen: list[SandboxEvent] = []
    async with open_local("fake", DIES) as handle:
        handle.on_event(seen.append)
        with contextlib.suppress(SandboxCrashed):
            await handle.act(Wait(seconds=0.0))
    (died,) = [e for e in seen if e.event == "died"]
    return died


async def test_a_sandboxs_event_is_one_model_locally_and_over_the_server(server: RunningServer) -> None:
    local = await _died_locally()
    async with cua.client.connect(server.url, server.token, default_timeout=30) as client:
        on_client: asyncio.Queue[SandboxEvent] = asyncio.Queue()
        on_sandbox: asyncio.Queue[SandboxEvent] = asyncio.Queue()
        client.on_event(on_client.put_nowait)
        sb = await client.create("fake", config=DIES)
        sb.on_event(on_sandbox.put_nowait)
        with contextlib.suppress(SandboxCrashed):
            await sb.act(Wait(seconds=0.0))
        remote = await asyncio.wait_for(on_sandbox.get(), 10)
        seen = await asyncio.wait_for(on_client.get(), 10)
    assert cua.client.Event is SandboxEvent
    assert type(local) is type(remote) is type(seen) is SandboxEvent
    assert remote == seen and remote.sandbox_id == sb.id and not sb.alive
    assert (remote.event, remote.data) == (local.event, local.data) == ("died", {"reason": "staged by die_at_step=1"})


def test_the_wire_keeps_the_event_messages_fields() -> None:
    event = SandboxEvent(sandbox_id="sb-1", event="closed", data={"reason": "idle"})
    frame = p.ServerConnection(token=None).event(event)
    assert json.loads(frame) == {"v": p.PROTOCOL_VERSION, "type": "event", "sandbox_id": "sb-1", "event": "closed",
                                 "data": {"reason": "idle"}}
    schema = p.json_schema()["server_message"]["$defs"]["EventMessage"]
    assert set(schema["properties"]) == {"v", "type", "sandbox_id", "event", "data"}
    assert schema["required"] == ["sandbox_id", "event"]
    names = [n for kind in schema["properties"]["event"]["anyOf"] for n in kind.get("enum", [kind.get("const")])]
    assert set(names) == {"died", "navigated", "console", "dialog", "closed", "stream_ended"}


async def test_an_answer_of_another_model_is_a_typed_error(server: RunningServer) -> None:
    """A request's answer is the protocol's model for it, or a typed failure: never a value
    of another shape that fails later where it is used."""
    async with cua.client.connect(server.url, server.token, default_timeout=30) as client:
        assert isinstance(client.session, p.HelloResult)
        assert isinstance(await client._request(p.Ping(id=client._id()), p.EmptyResult), p.EmptyResult)
        with pytest.raises(InternalError, match="not a ListResult"):
            await client._request(p.Ping(id=client._id()), p.ListResult)
