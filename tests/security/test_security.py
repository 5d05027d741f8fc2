"""The server's security promises, over real sockets: no web page can open its websocket
(not even one inside one of its own sandboxes), sandboxes belong to their owner, tokens
carry scopes, and bad or slow peers get typed answers and bounded resources."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

import cua
from cua import protocol as p
from cua.actions import Goto
from cua.errors import Forbidden, Unauthorized, UnknownSandbox, UnknownSnapshot
from cua.server.app import RunningServer, ServerSettings, check_exposure, serve_in_background
from cua.server.auth import issue_token, revoke_token
from cua.server.connection import ConnectionLimits
from cua.state import TitleQuery

pytestmark = pytest.mark.asyncio(loop_scope="module")

SHARED: dict[str, Any] = {"isolation": "shared"}


def http_base(server: RunningServer) -> str:
    return server.url.replace("ws://", "http://").removesuffix("/v1/ws")


async def hello(ws: Any, token: str | None, rid: int = 1) -> dict[str, Any]:
    await ws.send(json.dumps({"type": "hello", "id": rid, "token": token}))
    return json.loads(await ws.recv())


# --- exposure: origins, hosts, binds ----------------------------------------------------

@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def open_server() -> AsyncIterator[RunningServer]:
    """The attacker's favourite: no auth at all (loopback, as `--no-auth` allows)."""
    async with serve_in_background(auth=False, allowed_origins=("http://localhost:5173",)) as running:
        yield running


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://127.0.0.1:8000", "chrome-extension://x"])
async def test_browser_origins_are_refused_with_or_without_auth(open_server: RunningServer, origin: str) -> None:
    async with serve_in_background() as authed:
        for server, token in ((open_server, None), (authed, authed.token)):
            headers = {"Origin": origin, **({"Authorization": f"Bearer {token}"} if token else {})}
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(server.url, additional_headers=headers):
                    pass
            assert refused.value.response.status_code == 403
            async with httpx.AsyncClient(base_url=http_base(server)) as http:
                got = await http.get("/v1/sandboxes", headers=headers)
                assert got.status_code == 403 and got.json()["detail"]["code"] == "forbidden"


async def test_allow_listed_origin_and_plain_clients_pass(open_server: RunningServer) -> None:
    async with ws_connect(open_server.url, additional_headers={"Origin": "http://localhost:5173"}) as ws:
        assert (await hello(ws, None))["type"] == "result"
    async with cua.connect(open_server.url, None) as client:  # no Origin header: not a browser
        await client.ping()


async def test_dns_rebinding_host_is_refused(open_server: RunningServer) -> None:
    async with httpx.AsyncClient(base_url=http_base(open_server)) as http:
        assert (await http.get("/v1/health", headers={"Host": "attacker.example:8765"})).status_code == 403
        assert (await http.get("/v1/health", headers={"Host": "localhost:8765"})).status_code == 200
    with pytest.raises(InvalidStatus):
        async with ws_connect(open_server.url, additional_headers={"Host": "rebound.example"}):
            pass


async def test_no_auth_off_loopback_is_refused_unless_explicitly_opted_out() -> None:
    for host in ("0.0.0.0", "::", "192.168.1.7"):
        with pytest.raises(ValueError, match="without auth"):
            check_exposure(ServerSettings(host=host, token=None))
        check_exposure(ServerSettings(host=host, token="t"))
        check_exposure(ServerSettings(host=host, token=None, unsafe_public_no_auth=True))
    check_exposure(ServerSettings(host="127.0.0.1", token=None))
    with pytest.raises(ValueError, match="wildcards"):
        check_exposure(ServerSettings(allowed_origins=("*",)))


# --- handshake and parsing --------------------------------------------------------------

async def test_wrong_bearer_closes_with_1008() -> None:
    async with serve_in_background() as server:
        async with ws_connect(server.url, additional_headers={"Authorization": "Bearer nope"}) as ws:
            msg = json.loads(await ws.recv())
            assert msg["code"] == "unauthorized"
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), timeout=30)
        assert ws.close_code == 1008


async def test_hello_deadline() -> None:
    async with serve_in_background(limits=ConnectionLimits(hello_timeout_s=0.5)) as server:
        async with ws_connect(server.url) as ws:  # answers pings (the library does), never says hello
            msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=30))
            assert msg["code"] == "unauthorized" and msg["details"]["hello_timeout_s"] == 0.5
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), timeout=30)
        assert ws.close_code == 1008


@pytest.mark.parametrize("frame", [
    '{"type": "ping", "id": "7"}', '{"type": "ping", "id": true}', '{"type": "ping", "id": 7, "v": true}',
    '{"type": "ping", "id": 7, "v": "1"}', '{"type": "ping", "id": 7.0}', '{"type": "ping", "id": 7, "timeout": "5"}',
    b'{"type": "ping", "id": 7}',
])
async def test_strict_parsing(open_server: RunningServer, frame: str | bytes) -> None:
    async with ws_connect(open_server.url) as ws:
        await hello(ws, None)
        await ws.send(frame)
        msg = json.loads(await ws.recv())
        assert msg["type"] == "error" and msg["code"] == "bad_request", msg
        await ws.send('{"type": "ping", "id": 8}')
        assert json.loads(await ws.recv())["id"] == 8  # and the connection goes on


# --- ownership and scopes (real sandboxes) ----------------------------------------------

@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tokens_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tokens") / "tokens.json"


@pytest.fixture(scope="module")
def server_options(tokens_file: Path) -> dict[str, Any]:
    return {"max_sandboxes": 8, "tokens_file": tokens_file}


def issued(path: Path, principal: str, *scopes: str) -> str:
    return issue_token(path, principal, scopes)[0]


@pytest.mark.slow
async def test_a_second_connection_cannot_see_or_touch_the_first_ones_sandboxes(
        server: RunningServer, tokens_file: Path) -> None:
    alice = issued(tokens_file, "alice", "drive")
    bob = issued(tokens_file, "bob", "drive", "view")
    async with cua.connect(server.url, alice, default_timeout=120) as first, \
            cua.connect(server.url, alice, default_timeout=120) as second, \
            cua.connect(server.url, bob, default_timeout=120) as stranger:
        mine = await first.create("browser", config=SHARED)
        kept = await first.create("browser", config=SHARED, keep=True)
        snap = await mine.snapshot()
        for other in (second, stranger):
            listed = {i.id for i in await other.list(all=True)}
            assert mine.id not in listed
            requests: list[p.Request] = [
                p.Observe(id=other._id(), sandbox_id=mine.id),
                p.Act(id=other._id(), sandbox_id=mine.id, action=Goto(url="about:blank")),
                p.Query(id=other._id(), sandbox_id=mine.id, queries=[TitleQuery()]),
                p.Stream(id=other._id(), sandbox_id=mine.id),
                p.Close(id=other._id(), sandbox_id=mine.id)]
            with pytest.raises(UnknownSandbox) as caught:
                await other.attach(mine.id)
            assert caught.value.message == f"no sandbox {mine.id!r}"
            for request in requests:
                with pytest.raises(UnknownSandbox) as caught:
                    await other._answer(request)
                assert caught.value.message == f"no sandbox {mine.id!r}"  # the same as for an id never made
            with pytest.raises(UnknownSnapshot):
                await other._answer(p.DeleteSnapshot(id=other._id(), snapshot_id=snap.id))
        # the kept sandbox: its principal's other connections may reattach it; nobody else
        assert kept.id in {i.id for i in await second.list(all=True)}
        again = await second.attach(kept.id)
        assert (await again.observe()).sandbox_id == kept.id
        assert kept.id not in {i.id for i in await stranger.list(all=True)}
        with pytest.raises(UnknownSandbox):
            await stranger.attach(kept.id)
        # and the first connection still owns and drives both
        assert (await mine.observe()).sandbox_id == mine.id
        await kept.close()
    # REST lists by principal
    async with httpx.AsyncClient(base_url=http_base(server)) as http:
        got = await http.get("/v1/sandboxes", headers={"Authorization": f"Bearer {bob}"})
        assert got.status_code == 200, got.text
        assert got.json()["sandboxes"] == []


@pytest.mark.slow
async def test_scopes_view_only_and_admin(server: RunningServer, tokens_file: Path) -> None:
    driver = issued(tokens_file, "carol", "drive")
    viewer = issued(tokens_file, "carol", "view")
    admin = issued(tokens_file, "ops", "admin")
    async with cua.connect(server.url, driver, default_timeout=120) as c, \
            cua.connect(server.url, viewer, default_timeout=120) as v, \
            cua.connect(server.url, admin, default_timeout=120) as a:
        sb = await c.create("browser", config=SHARED)
        with pytest.raises(Forbidden):
            await v.create("browser", config=SHARED)
        watched = await v.attach(sb.id)  # a viewer of the same principal may watch
        assert (await watched.observe()).sandbox_id == sb.id
        (title,) = await watched.query([TitleQuery()])
        assert title.ok
        with pytest.raises(Forbidden) as caught:
            await watched.act(Goto(url="about:blank"))
        assert caught.value.details["scope"] == "drive"
        with pytest.raises(Forbidden):
            await watched.close()
        assert sb.id in {i.id for i in await a.list(all=True)}  # an admin lists every sandbox
        with pytest.raises(Forbidden):
            await a._answer(p.Act(id=a._id(), sandbox_id=sb.id, action=Goto(url="about:blank")))
        await a._answer(p.Close(id=a._id(), sandbox_id=sb.id))  # and closes any
        with pytest.raises(UnknownSandbox):
            await sb.observe()


async def test_each_request_type_needs_the_scopes_its_op_names(server: RunningServer, tokens_file: Path) -> None:
    """The scopes come from the dispatch table (`cua.server.ops.OPS`); what a caller
    without them gets on the wire is word for word what it always was."""
    viewer = issued(tokens_file, "erin", "view")
    admin = issued(tokens_file, "ops-erin", "admin")
    async with ws_connect(server.url, additional_headers={"Authorization": f"Bearer {viewer}"}) as ws:
        await hello(ws, None)
        created = await raw_request(ws, {"type": "create", "id": 2, "kind": "browser", "config": SHARED})
        assert (created["code"], created["message"], created["details"]) == (
            "forbidden", "`create` needs the `drive` scope", {"scope": "drive", "type": "create"})
        closed = await raw_request(ws, {"type": "close", "id": 3, "sandbox_id": "sb-none"})
        assert (closed["code"], closed["message"], closed["details"]) == (
            "forbidden", "`close` needs the `drive` or `admin` scope", {"scope": "drive", "type": "close"})
        observed = await raw_request(ws, {"type": "observe", "id": 4, "sandbox_id": "sb-none"})
        assert observed["code"] == "unknown_sandbox"  # `view` suffices to ask
        unstreamed = await raw_request(ws, {"type": "unstream", "id": 5, "stream_id": 77})
        assert (unstreamed["code"], unstreamed["details"]) == ("bad_request", {"stream_id": 77})
        assert (await raw_request(ws, {"type": "ping", "id": 6}))["result"] == {}
        assert (await raw_request(ws, {"type": "list", "id": 7}))["result"] == {"sandboxes": []}
        assert (await raw_request(ws, {"type": "cancel", "id": 8, "target": 999}))["result"] == {"cancelled": False}
    async with ws_connect(server.url, additional_headers={"Authorization": f"Bearer {admin}"}) as ws:
        await hello(ws, None)
        observed = await raw_request(ws, {"type": "observe", "id": 2, "sandbox_id": "sb-none"})
        assert (observed["code"], observed["message"], observed["details"]) == (
            "forbidden", "`observe` needs the `view` or `drive` scope", {"scope": "view", "type": "observe"})
        closed = await raw_request(ws, {"type": "close", "id": 3, "sandbox_id": "sb-none"})
        assert closed["code"] == "unknown_sandbox"  # an admin may close any sandbox


@pytest.mark.slow
async def test_closing_a_sandbox_ends_its_viewers_streams_first(server: RunningServer, tokens_file: Path) -> None:
    driver = issued(tokens_file, "frank", "drive")
    viewer = issued(tokens_file, "frank", "view")
    async with cua.connect(server.url, driver, default_timeout=120) as client, \
            ws_connect(server.url, additional_headers={"Authorization": f"Bearer {viewer}"}, max_size=None) as ws:
        sb = await client.create("browser", config=SHARED)
        await hello(ws, None)
        started = await raw_request(ws, {"type": "stream", "id": 5, "sandbox_id": sb.id, "max_fps": 5})
        assert started["result"] == {"stream_id": 5}
        await sb.close()
        seen: list[str | dict[str, Any]] = []
        while not seen or seen[-1] != "closed":
            msg = await asyncio.wait_for(ws.recv(), timeout=60)
            if isinstance(msg, bytes):
                seen.append("frame")
            elif (event := json.loads(msg)).get("type") == "event":
                seen.append("closed" if event["event"] == "closed" else event)
        ended = [m for m in seen if isinstance(m, dict) and m["event"] == "stream_ended"]
        assert [e["data"] for e in ended] == [{"stream_id": 5, "reason": "stopped"}], seen
        assert "frame" not in seen[seen.index(ended[0]):], "a stream frame after its end"


async def test_revoked_token_is_closed_at_its_next_request(server: RunningServer, tokens_file: Path) -> None:
    token, entry = issue_token(tokens_file, "dave", ["drive"])
    async with cua.connect(server.url, token) as client:
        await client.ping()
        assert revoke_token(tokens_file, entry["id"])
        with pytest.raises(Unauthorized):
            await client.ping()
    with pytest.raises(Unauthorized):
        await cua.connect(server.url, token)


# --- bounds ---------------------------------------------------------------------------

async def raw_request(ws: Any, frame: dict[str, Any]) -> dict[str, Any]:
    """Send one request on a raw socket; its JSON answer (binary frames skipped)."""
    await ws.send(json.dumps(frame))
    while True:
        msg = await ws.recv()
        if isinstance(msg, str) and json.loads(msg).get("id") == frame["id"]:
            return json.loads(msg)


@pytest.mark.slow
async def test_huge_values_are_bad_requests_naming_the_field_and_the_sandbox_goes_on(server: RunningServer) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with ws_connect(server.url, additional_headers=headers, max_size=None) as ws:
        await hello(ws, None)
        created = await raw_request(ws, {"type": "create", "id": 2, "kind": "browser", "config": SHARED})
        sid = created["result"]["sandbox"]["id"]
        cases = [({"type": "scroll", "x": 10, "y": 10, "dy": 3.5e38}, "dy"),
                 ({"type": "scroll", "x": 10, "y": 10, "dx": 1e6}, "dx"),
                 ({"type": "click", "x": 1e300, "y": 10}, "x"),
                 ({"type": "click", "x": "10", "y": 10}, "x"),
                 ({"type": "wait", "seconds": 1e9}, "seconds"),
                 ({"type": "drag", "path": [{"x": 0, "y": 0}, {"x": 1e12, "y": 0}]}, "path")]
        for rid, (action, field) in enumerate(cases, start=10):
            answer = await raw_request(ws, {"type": "act", "id": rid, "sandbox_id": sid, "action": action})
            assert answer["type"] == "error" and answer["code"] == "bad_request", answer
            assert field in answer["message"], answer["message"]
        answer = await raw_request(ws, {"type": "observe", "id": 30, "sandbox_id": sid,
                                        "options": {"frame": {"width": 16384, "height": 9000}}})
        assert answer["code"] == "bad_request" and "frame" in answer["message"], answer
        answer = await raw_request(ws, {"type": "act", "id": 31, "sandbox_id": sid,
                                        "action": {"type": "scroll", "x": 10, "y": 10, "dy": 400}})
        assert answer["type"] == "result" and answer["result"]["observation"]["error"] is None, answer


@pytest.mark.slow
async def test_a_stream_id_cannot_be_reused_while_it_streams(server: RunningServer) -> None:
    headers = {"Authorization": f"Bearer {server.token}"}
    async with ws_connect(server.url, additional_headers=headers, max_size=None) as ws:
        await hello(ws, None)
        ids = []
        for rid in (2, 3):
            created = await raw_request(ws, {"type": "create", "id": rid, "kind": "browser", "config": SHARED})
            ids.append(created["result"]["sandbox"]["id"])
        assert (await raw_request(ws, {"type": "stream", "id": 40, "sandbox_id": ids[0], "max_fps": 5}))["type"] == "result"
        reused = await raw_request(ws, {"type": "stream", "id": 40, "sandbox_id": ids[1]})
        assert reused["code"] == "bad_request" and reused["details"]["id"] == 40
        assert (await raw_request(ws, {"type": "unstream", "id": 41, "stream_id": 40}))["type"] == "result"
        ended = False
        while not ended:  # the stream ends, and no frame of it follows its end
            msg = await asyncio.wait_for(ws.recv(), timeout=30)
            if isinstance(msg, str):
                ended = json.loads(msg).get("event") == "stream_ended"
        with pytest.raises(TimeoutError):
            while True:
                msg = await asyncio.wait_for(ws.recv(), timeout=1.5)
                assert isinstance(msg, str), "a stream frame after unstream"


@pytest.mark.slow
async def test_a_client_that_never_reads_is_closed_and_memory_stays_bounded() -> None:
    limits = ConnectionLimits(outbox_soft_bytes=2 << 20, outbox_hard_bytes=8 << 20, slow_grace_s=2.0)
    async with serve_in_background(limits=limits) as server, \
            cua.connect(server.url, server.token, default_timeout=120) as owner:
        sb = await owner.create("browser", config=SHARED)
        heavy = {**SHARED, "start_url": "data:text/html,<body style='background:conic-gradient(red,blue,lime,red)'>"
                 + "<b>noise</b> <i>text</i> " * 300}  # a PNG of a few hundred KB
        async with ws_connect(server.url, additional_headers={"Authorization": f"Bearer {server.token}"},
                              max_size=None, max_queue=1) as raw:
            await hello(raw, None)
            made = await raw_request(raw, {"type": "create", "id": 2, "kind": "browser", "config": heavy})
            created = made["result"]["sandbox"]["id"]
            raw.transport.pause_reading()  # from now on, it never reads
            for rid in range(10, 70):
                await raw.send(json.dumps({"type": "observe", "id": rid, "sandbox_id": created,
                                           "options": {"format": "png"}}))
            closed = False
            for _ in range(600):
                if created not in {i.id for i in await owner.list(all=True)}:
                    closed = True  # the server gave up on the connection and closed its sandbox
                    break
                await asyncio.sleep(0.1)
            assert closed
        base = http_base(server)
        async with httpx.AsyncClient(base_url=base, headers={"Authorization": f"Bearer {server.token}"}) as http:
            data = (await http.get("/v1/metrics", params={"format": "json"})).json()
        assert data["slow_consumers"] == 1
        assert (await sb.observe()).sandbox_id == sb.id  # other clients never noticed


# --- a page inside a real sandbox cannot reach the server's websocket -------------------

ATTACK_SERVICE = textwrap.dedent('''
    import http.server, os, socketserver, sys, threading
    PAGE = b"""<!doctype html><title>waiting</title><script>
    const port = new URLSearchParams(location.search).get("ws");
    let done = false;
    const say = (t) => { if (!done) { done = true; document.title = t; } };
    try {
      const ws = new WebSocket("ws://127.0.0.1:" + port + "/v1/ws");
      ws.onopen = () => ws.send(JSON.stringify({type: "list", id: 1, all: true}));
      ws.onmessage = (e) => say("answered " + e.data.slice(0, 80));
      ws.onerror = () => say("refused");
      ws.onclose = (e) => say("closed " + e.code);
    } catch (e) { say("threw " + e); }
    setTimeout(() => say("silent"), 10000);
    </script>"""
    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = PAGE if not self.path.startswith("/__cua/") else b'{"ok": true, "app": "attack", "seed": 0}'
            self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
            self.wfile.write(body)
        do_POST = do_GET
        def log_message(self, *a): pass
    class Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        def get_request(self):
            conn, _ = self.socket.accept(); return conn, ("unix", 0)
    tcp = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["CUA_APP_PORT"])), Page)
    unix = Unix(os.environ["CUA_APP_SOCKET"], Page)
    threading.Thread(target=unix.serve_forever, daemon=True).start()
    print("ready", flush=True)
    tcp.serve_forever()
''')


async def _page_verdict(sandbox: Any, ws_port: int) -> str:
    origin = "/".join(sandbox.observation.url.split("/")[:3])
    obs = await sandbox.act(Goto(url=f"{origin}/?ws={ws_port}"))
    assert obs.error is None and obs.url.endswith(f"?ws={ws_port}"), obs
    for _ in range(300):
        (title,) = await sandbox.query([TitleQuery()])
        if title.value and title.value != "waiting":
            return str(title.value)
        await asyncio.sleep(0.1)
    raise AssertionError("the page never reported")


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["shared", "container"])
async def test_a_page_in_a_sandbox_cannot_open_the_servers_websocket(
        tmp_path: Path, isolation: str) -> None:
    script = tmp_path / "attack_service.py"
    script.write_text(ATTACK_SERVICE)
    config = {"isolation": isolation, "start_url": "/?ws=0", "extra_ro_binds": [str(tmp_path)],
              "services": [{"name": "page", "argv": [sys.executable, str(script)], "port": 8000}]}
    async with serve_in_background(auth=False) as victim, cua.connect(victim.url, None, default_timeout=120) as me:
        port = int(victim.url.split(":")[2].split("/")[0])
        sb = await me.create("browser", config=config)
        verdict = await _page_verdict(sb, port)
        assert not verdict.startswith("answered"), verdict
        if isolation == "shared":
            # the refusal is the Origin check: the same page on an allow-listed origin gets in
            origin = "/".join(sb.observation.url.split("/")[:3])
            async with serve_in_background(auth=False, allowed_origins=(origin,)) as lenient:
                allowed = await _page_verdict(sb, int(lenient.url.split(":")[2].split("/")[0]))
            assert allowed.startswith("answered"), allowed
        base = http_base(victim)
        async with httpx.AsyncClient(base_url=base) as http:
            metrics = (await http.get("/v1/metrics", params={"format": "json"})).json()
        assert metrics["refused_origins"] >= (1 if isolation == "shared" else 0)
        await sb.close()


@pytest.mark.slow
async def test_a_page_looping_alert_cannot_grow_a_non_reading_clients_queue() -> None:
    """A page that raises dialogs (and console lines) without end, watched by a client that
    stopped reading: those events are dropped once its outbox backs up, and counted."""
    limits = ConnectionLimits(outbox_soft_bytes=256 << 10, outbox_hard_bytes=64 << 20, slow_grace_s=600)
    loop = ("data:text/html,<script>setInterval(() => { for (let i = 0; i < 20; i++) {"
            " console.log('c'.repeat(20000)); alert('a'.repeat(20000)); } }, 0)</script>")
    async with serve_in_background(limits=limits) as server:
        headers = {"Authorization": f"Bearer {server.token}"}
        # no client pings: a client that does not read would not see their pongs either
        async with ws_connect(server.url, additional_headers=headers, max_size=None, max_queue=1,
                              ping_interval=None) as raw:
            await hello(raw, None)
            made = await raw_request(raw, {"type": "create", "id": 2, "kind": "browser",
                                           "config": {**SHARED, "start_url": loop}})
            assert made["type"] == "result", made
            raw.transport.pause_reading()
            base = http_base(server)
            async with httpx.AsyncClient(base_url=base, headers=headers) as http:
                for _ in range(1200):
                    data = (await http.get("/v1/metrics", params={"format": "json"})).json()
                    if data["frames_dropped"] > 200:
                        break
                    await asyncio.sleep(0.1)
                assert data["frames_dropped"] > 200, data
                assert (await http.get("/v1/health")).json()["ok"] is True
            raw.transport.resume_reading()
            assert (await raw_request(raw, {"type": "ping", "id": 3}))["type"] == "result"  # it catches up
