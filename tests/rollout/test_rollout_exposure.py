"""The rollout service meets the exposure rules of `cua serve` (issue 28): a token on every
route but /health (the token proxy's included), foreign browser Origins refused with or
without it, a loopback bind refusing a rebound Host, and no auth off loopback refused.
Over real HTTP and websockets, and from a page in a real headless Chromium, on the fake
kind (sandboxes in this process)."""

from __future__ import annotations

import asyncio
import http.server
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from cua.rollout.server import RunningRollouts, serve_rollouts

TASK = "fake.set_counter@1"
EVIL = "http://evil.example"


def ws_url(running: RunningRollouts, query: str = "") -> str:
    return running.url.replace("http://", "ws://", 1) + "/ws" + query


async def raw_handshake(url: str, host: str, headers: dict[str, str]) -> int:
    """The status of a websocket handshake to /ws written by hand, so the Host can lie as a
    DNS-rebound page's does (clients derive it from the URL)."""
    address = httpx.URL(url)
    reader, writer = await asyncio.open_connection(address.host, address.port)
    try:
        lines = ["GET /ws HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
                 *(f"{k}: {v}" for k, v in headers.items())]
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        return int((await asyncio.wait_for(reader.readline(), 30)).split()[1])
    finally:
        writer.close()


async def test_every_route_but_health_needs_the_token(tmp_path: Path) -> None:
    async with serve_rollouts(tmp_path, local=True) as running, httpx.AsyncClient(base_url=running.url) as http:
        assert running.token
        routes = [("POST", "/rollouts"), ("POST", "/policy_version"), ("POST", "/envs"), ("POST", "/envs/x/step"),
                  ("DELETE", "/envs/x"), ("POST", "/proxy/r1/v1/chat/completions"), ("GET", "/proxy/r1/v1/models"),
                  ("GET", "/docs"), ("GET", "/openapi.json")]
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": running.token}):
            for method, path in routes:
                response = await http.request(method, path, headers=headers, json={"task": TASK})
                assert response.status_code == 401, (method, path, headers)
                assert response.json()["error"]["code"] == "unauthorized"
        # the token in the URL opens nothing over HTTP (a page's no-cors request could carry it there)
        assert (await http.post(f"/envs?token={running.token}", json={"task": TASK})).status_code == 401
        assert len(running.envs) == 0
        health = await http.get("/health")
        assert health.status_code == 200 and health.json()["auth"] is True
        assert health.json()["refused"]["token"] == 3 * len(routes) + 1
        created = await http.post("/envs", json={"task": TASK}, headers=running.headers)
        assert created.status_code == 200 and len(running.envs) == 1
        with pytest.raises(InvalidStatus) as refused:
            async with websockets.connect(ws_url(running)):
                pass
        assert refused.value.response.status_code == 403
        for url, headers in ((ws_url(running), running.headers), (ws_url(running, f"?token={running.token}"), {})):
            async with websockets.connect(url, additional_headers=headers) as ws:
                await ws.send(json.dumps({"id": 1, "op": "policy_version", "version": 2}))
                assert json.loads(await ws.recv()) == {"id": 1, "result": {"policy_version": 2}}


async def test_foreign_origins_and_rebound_hosts_are_refused_with_the_token(tmp_path: Path) -> None:
    async with serve_rollouts(tmp_path, local=True, allowed_origins=["http://localhost:5173"]) as running, \
            httpx.AsyncClient(base_url=running.url, headers=running.headers) as http:
        port = httpx.URL(running.url).port
        for path in ("/health", "/envs", "/proxy/r1/v1/chat/completions"):
            for origin in (EVIL, "null"):
                response = await http.post(path, headers={"Origin": origin, "Content-Type": "text/plain"},
                                           content=json.dumps({"task": TASK}))
                assert response.status_code == 403 and response.json()["error"]["code"] == "forbidden"
            for host in (f"evil.example:{port}", "evil.example", f"192.0.2.7:{port}"):
                response = await http.post(path, headers={"Host": host}, json={"task": TASK})
                assert response.status_code == 403 and "not loopback" in response.json()["error"]["message"]
        assert len(running.envs) == 0
        ok = await http.post("/envs", headers={"Origin": "http://localhost:5173"}, json={"task": TASK})
        assert ok.status_code == 200 and len(running.envs) == 1
        with pytest.raises(InvalidStatus) as refused:
            async with websockets.connect(ws_url(running), origin=EVIL, additional_headers=running.headers):
                pass
        assert refused.value.response.status_code == 403
        assert await raw_handshake(running.url, f"evil.example:{port}", running.headers) == 403
        assert await raw_handshake(running.url, f"localhost:{port}", running.headers) == 101


async def test_no_auth_is_loopback_only_unless_explicitly_unsafe(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="without auth"):
        async with serve_rollouts(tmp_path, local=True, no_auth=True, host="0.0.0.0"):
            pass
    with pytest.raises(ValueError, match="wildcards"):
        async with serve_rollouts(tmp_path, local=True, allowed_origins=["*"]):
            pass
    async with serve_rollouts(tmp_path, local=True, no_auth=True) as running, \
            httpx.AsyncClient(base_url=running.url) as http:
        assert running.token is None and (await http.get("/health")).json()["auth"] is False
        assert (await http.post("/envs", json={"task": TASK})).status_code == 200
        # without auth the Origin rule still holds
        assert (await http.post("/envs", json={"task": TASK}, headers={"Origin": EVIL})).status_code == 403
    cli = [sys.executable, "-m", "cua.cli", "rollout", "serve", "--local", "--runs", str(tmp_path)]
    refused = subprocess.run([*cli, "--host", "0.0.0.0", "--no-auth"], capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "without auth" in refused.stderr


def test_cli_prints_a_generated_token_that_opens_the_service(tmp_path: Path) -> None:
    with subprocess.Popen([sys.executable, "-m", "cua.cli", "rollout", "serve", "--local", "--port", "0",
                           "--runs", str(tmp_path)], stdout=subprocess.PIPE, text=True,
                          env={k: v for k, v in os.environ.items() if k != "CUA_ROLLOUT_TOKEN"}) as proc:
        try:
            assert proc.stdout is not None
            lines = [proc.stdout.readline() for _ in range(3)]
            assert lines[0].startswith("cua rollout serve: http://127.0.0.1:"), lines
            url = lines[0].split()[3]
            assert lines[1].startswith("token: "), lines
            token = lines[1].split()[1]
            assert httpx.post(f"{url}/policy_version", json={"version": 1}).status_code == 401
            answer = httpx.post(f"{url}/policy_version", json={"version": 1}, headers={"Authorization": f"Bearer {token}"})
            assert answer.status_code == 200 and answer.json() == {"policy_version": 1}
        finally:
            proc.terminate()
            proc.wait(timeout=60)


# --- from a page in a real browser ------------------------------------------------------

PAGE = b"<!doctype html><title>elsewhere</title><p>a page on another origin</p>"

ATTACK = """async (a) => {
  const out = {};
  try {  // a "simple" request: no preflight, sent whatever the answer
    await fetch(a.base + "/envs", {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"},
                                   body: JSON.stringify({task: a.task, seed: 0})});
    out.fetch = "sent";
  } catch (e) { out.fetch = "threw " + e; }
  const socket = (url) => new Promise((resolve) => {
    const ws = new WebSocket(url);
    ws.onopen = () => ws.send(JSON.stringify({id: 1, op: "create", task: a.task, seed: 0}));
    ws.onmessage = (e) => { resolve("answered " + e.data.slice(0, 60)); ws.close(); };
    ws.onclose = (e) => resolve("closed " + e.code);
    setTimeout(() => resolve("silent"), 20000);
  });
  out.ws = await socket(a.ws);
  out.ws_with_token = await socket(a.ws + "?token=" + a.token);  // even a page that learnt the token
  return out;
}"""


@pytest.fixture
def foreign_page() -> Iterator[str]:
    """A page served from another loopback port: another origin than the service's."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(PAGE)))
            self.end_headers()
            self.wfile.write(PAGE)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


async def _attack(page_url: str, running: RunningRollouts) -> dict[str, str]:
    from playwright.async_api import async_playwright

    from cua.sandboxes.browser.launcher import find_executable

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_executable().path,
                                           args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = await browser.new_page()
            await page.goto(page_url)
            result: dict[str, str] = await page.evaluate(ATTACK, {"base": running.url, "ws": ws_url(running),
                                                                  "task": TASK, "token": running.token or ""})
            return result
        finally:
            await browser.close()


@pytest.mark.slow
async def test_a_page_in_a_real_browser_cannot_drive_the_service(tmp_path: Path, foreign_page: str) -> None:
    async with serve_rollouts(tmp_path / "a", local=True) as running:
        result = await _attack(foreign_page, running)
        assert result["fetch"] == "sent"  # the browser sent it; the service refused it
        assert result["ws"].startswith("closed") and result["ws_with_token"].startswith("closed"), result
        assert len(running.envs) == 0, "a page created an environment"
        async with httpx.AsyncClient() as http:
            refused = (await http.get(f"{running.url}/health")).json()["refused"]
        assert refused["origin"] == 3
    # the refusal is the Origin rule: the same page, allow-listed, gets in with the token
    async with serve_rollouts(tmp_path / "b", local=True, allowed_origins=[foreign_page]) as lenient:
        result = await _attack(foreign_page, lenient)
        assert result["ws"].startswith("closed") and result["ws_with_token"].startswith("answered"), result
        assert len(lenient.envs) == 1  # the token-less no-cors fetch did not make one
