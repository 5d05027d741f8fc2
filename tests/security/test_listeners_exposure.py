"""Every HTTP or websocket listener the kit starts, held to the rules of `cua serve` and
`cua policy serve` (tests/security/test_security.py, tests/policy/test_policy_server_exposure.py; the
rollout service has its own tests): the report's `--serve`, the recorder's live view (one
task, and the queue) and the bundled app hosts (issue 28).

The report and the live view need the token printed in their URL; every listener refuses a
foreign browser Origin and, bound to loopback, a Host that does not name loopback (DNS
rebinding). The app hosts take no token -- the sandbox's browser loads them by URL alone --
so their rules are the Host, and no state change from another origin's page.

The fast tests speak plain HTTP and websockets; the slow ones are pages in a real headless
Chromium, where `evil.example` and `rebind.example` resolve to 127.0.0.1: a foreign page
(another site, or another port of 127.0.0.1, the same site) cannot read or drive each
listener, a rebound page is refused, and the person's own page, opened from the printed
URL, still works (screenshots of it are written to $CUA_SCREENSHOTS when that is set).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from _foreign_page import NO_CORS_POST, SCRIPT_INCLUDE, WS_ATTEMPT, chromium, foreign_site  # tests/'s own helpers
from _live_view import TASK, live_view, next_text, serving  # tests/'s own helpers
from _runs import make_run  # tests/'s own helpers: an eval run as the report reads it
from playwright.async_api import Page
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus

from cua.actions import Click
from cua.cli import main as cli
from cua.episode import EpisodeContext
from cua.episode.local import open_local
from cua.record.queue import Job, RecordQueue
from cua.record.service import RecorderService
from cua.report.build import ReportBuilder
from cua.report.serve import ReportServer
from cua.tasks.apps import load_app
from cua.tasks.apps.base import build_asgi
from cua.tasks.registry import get_template

EVIL = "http://evil.example"


# --- helpers ---------------------------------------------------------------------------

async def handshake(port: int, path: str, host: str, *, origin: str | None = None) -> int:
    """The HTTP status of a websocket handshake written by hand, so that the Host header can
    lie as a DNS-rebound page's does (clients derive Host from the URL)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        await writer.drain()
        return int((await asyncio.wait_for(reader.readline(), 30)).split()[1])
    finally:
        writer.close()


@contextmanager
def report_server(tmp_path: Path, **kwargs: Any) -> Iterator[ReportServer]:
    run = make_run(tmp_path / "run", {("todo.rename@1", 0): True, ("todo.rename@1", 1): False})
    server = ReportServer(ReportBuilder(run, live=True), interval=0.5, **kwargs).start()
    try:
        yield server
    finally:
        server.close()


async def screenshot(page: Page, name: str) -> None:
    folder = os.environ.get("CUA_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        await page.screenshot(path=str(Path(folder) / f"{name}.png"))


# --- the report's --serve ----------------------------------------------------------------

def test_the_report_needs_its_token_and_refuses_foreign_origins_and_rebound_hosts(tmp_path: Path) -> None:
    with report_server(tmp_path) as server:
        root = f"http://127.0.0.1:{server.port}"
        base = f"{root}/report"  # the run's folder is served: the report points at its frames
        assert server.token and server.url == f"{base}/index.html?token={server.token}"
        for path in ("/index.html", "/", "/data/index.js", "/report.js", "/index.html?token=wrong",
                     "/index.html?token=%C3%A9", "/index.html?t=" + server.token, "/../episodes.jsonl"):
            assert httpx.get(base + path).status_code == 401, path
        with httpx.Client() as browser:  # keeps its cookies, as a browser does
            opened = browser.get(server.url)
            assert opened.status_code == 200 and "report.js" in opened.text
            cookie = opened.headers["set-cookie"]
            assert f"cua_report_{server.port}=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
            # the page's own later loads carry the cookie (and its polls a `?t=` of their own)
            for headers in ({}, {"sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"}):
                assert browser.get(f"{base}/data/index.js?t=123", headers=headers).status_code == 200, headers
            # the cookie is not the page's when the browser says another origin's page sent it
            for site in ("cross-site", "same-site"):
                assert browser.get(f"{base}/data/index.js", headers={"sec-fetch-site": site}).status_code == 401
            # a foreign Origin, or a rebound Host, is refused even with the token
            assert browser.get(server.url, headers={"origin": EVIL}).status_code == 403
            assert browser.get(server.url, headers={"origin": "null"}).status_code == 403
            for host in (f"evil.example:{server.port}", "rebind.example", f"192.0.2.7:{server.port}"):
                assert browser.get(server.url, headers={"host": host}).status_code == 403, host
            assert browser.get(f"{base}/report.js", headers={"origin": root}).status_code == 200  # its own origin
        bearer = {"authorization": f"Bearer {server.token}"}
        assert httpx.get(f"{base}/data/index.js", headers=bearer).status_code == 200  # scripts and tools
        assert httpx.post(f"{base}/index.html", headers={"origin": EVIL}).status_code == 403


def test_the_report_without_auth_stays_on_loopback_and_still_checks_origins(tmp_path: Path) -> None:
    with report_server(tmp_path, auth=False) as server:
        assert server.token is None and server.url == f"http://127.0.0.1:{server.port}/report/index.html"
        assert httpx.get(server.url).status_code == 200
        assert httpx.get(server.url, headers={"origin": EVIL}).status_code == 403
        assert httpx.get(server.url, headers={"host": f"evil.example:{server.port}"}).status_code == 403
    run = make_run(tmp_path / "other", {("todo.rename@1", 0): True})
    with pytest.raises(ValueError, match="without auth"):
        ReportServer(ReportBuilder(run), host="0.0.0.0", auth=False)
    with pytest.raises(ValueError, match="no wildcards"):
        ReportServer(ReportBuilder(run), allowed_origins=["*"])


def test_the_report_cli_refuses_no_auth_off_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = make_run(tmp_path / "run", {("todo.rename@1", 0): True})
    assert cli(["report", str(run), "--serve", "--no-auth", "--host", "0.0.0.0"]) == 2
    assert "refusing to serve 0.0.0.0 without auth" in capsys.readouterr().err


# --- the recorder's live view --------------------------------------------------------------

async def test_the_live_view_needs_its_token_and_refuses_foreign_origins_and_rebound_hosts() -> None:
    async with live_view() as (port, token, session):
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base) as http:
            for query in ("", "?t=", "?t=wrong", "?t=%C3%A9", f"?token={token}"):
                assert (await http.get("/" + query)).status_code == 401, query
            assert (await http.get(f"/?t={token}")).status_code == 200
            assert (await http.get(f"/?t={token}", headers={"origin": base})).status_code == 200
            assert (await http.get(f"/?t={token}", headers={"origin": EVIL})).status_code == 403
            assert (await http.get(f"/?t={token}", headers={"host": f"evil.example:{port}"})).status_code == 403
        ws = f"ws://127.0.0.1:{port}/ws"
        for url, origin in ((ws, None), (f"{ws}?t=wrong", None), (f"{ws}?t={token}", EVIL),
                            (f"{ws}?t={token}", f"http://127.0.0.1:{port + 1}")):
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(url, origin=origin):  # type: ignore[arg-type]
                    pass
            assert refused.value.response.status_code == 403, (url, origin)
        assert await handshake(port, f"/ws?t={token}", f"rebind.example:{port}") == 403
        assert await handshake(port, f"/ws?t={token}", f"rebind.example:{port}", origin=f"http://rebind.example:{port}") \
            == 403
        assert session.steps == 0 and not session.viewers
        # the page's own origin, with the token, drives the sandbox
        async with ws_connect(f"{ws}?t={token}", origin=base) as own:  # type: ignore[arg-type]
            status = json.loads(await asyncio.wait_for(own.recv(), 30))
            assert status["type"] == "status" and status["task_id"] == TASK
            await own.send("[not an object]")  # answered, and the page stays connected
            assert (await next_text(own))["type"] == "rejected"
            await own.send(json.dumps({"type": "action", "action": {"type": "click", "x": 10, "y": 10}}))
            while session.steps < 1:
                await asyncio.wait_for(own.recv(), 30)
        assert session.steps == 1


async def test_the_recording_queue_has_the_live_views_gate(tmp_path: Path) -> None:
    queue = RecordQueue([Job(template=get_template(TASK), seed=0)])

    @asynccontextmanager
    async def opener(kind: str, config: Any) -> AsyncIterator[Any]:
        async with open_local(kind, config) as handle:
            yield handle

    service = RecorderService(queue, opener, tmp_path / "rec")
    async with serving(service.app) as port:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base) as http:
            assert (await http.get("/")).status_code == 401
            assert (await http.get(f"/?t={service.token}")).status_code == 200
            assert (await http.get(f"/?t={service.token}", headers={"origin": EVIL})).status_code == 403
            assert (await http.get(f"/?t={service.token}", headers={"host": "rebind.example"})).status_code == 403
        for url, origin in ((f"ws://127.0.0.1:{port}/ws", base), (f"ws://127.0.0.1:{port}/ws?t={service.token}", EVIL)):
            with pytest.raises(InvalidStatus) as refused:
                async with ws_connect(url, origin=origin):  # type: ignore[arg-type]
                    pass
            assert refused.value.response.status_code == 403
        assert not service.stations and queue.progress()["kept"] == 0


# --- the bundled app hosts -----------------------------------------------------------------

def test_an_app_host_refuses_rebound_hosts_and_state_changes_from_other_origins() -> None:
    app = load_app("todo")
    web = TestClient(build_asgi(app), base_url="http://127.0.0.1:8000")
    lists = len(app.state()["lists"])
    own = "http://127.0.0.1:8000"
    # a page of another origin -- a site, another sandbox's app on another port, a data: page
    for origin in (EVIL, "http://127.0.0.1:8001", "http://localhost:8000", "null"):
        response = web.post("/lists", data={"name": "Pwned"}, headers={"origin": origin})
        assert response.status_code == 403, origin
    # a DNS-rebound page: its Host is its own domain, whatever it sends
    for host in ("rebind.example:8000", "rebind.example"):
        assert web.get("/", headers={"host": host}).status_code == 403
        assert web.post("/lists", data={"name": "Pwned"}, headers={"host": host, "origin": f"http://{host}"}).status_code \
            == 403
    # another origin's page may navigate to the app (a link), not load it as a resource
    assert web.get("/", headers={"sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate"}).status_code == 200
    for site in ("cross-site", "same-site"):
        assert web.get("/", headers={"sec-fetch-site": site, "sec-fetch-mode": "no-cors"}).status_code == 403
        response = web.post("/lists", data={"name": "Pwned"}, headers={"sec-fetch-site": site, "sec-fetch-mode": "navigate"})
        assert response.status_code == 403
    with pytest.raises(WebSocketDisconnect) as refused:
        with web.websocket_connect("/anything", headers={"origin": EVIL}):
            pass
    assert refused.value.code == 1008
    assert len(app.state()["lists"]) == lists
    # the app's own page, and clients that are no page (no Origin), change it
    assert web.post("/lists", data={"name": "Mine"}, headers={"origin": own, "sec-fetch-site": "same-origin"},
                    follow_redirects=False).status_code == 303
    assert web.post("/lists", data={"name": "Scripted"}, follow_redirects=False).status_code == 303
    assert web.get("/", headers={"host": "localhost:8000"}).status_code == 200
    assert [row["name"] for row in app.state()["lists"]][-2:] == ["Mine", "Scripted"]


@contextmanager
def app_process(name: str = "todo") -> Iterator[tuple[int, Path]]:
    """`python -m cua.tasks.apps.serve NAME --port 0`, as a person runs it (no socket):
    yields the page's port and the control socket it printed."""
    with subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", name, "--port", "0"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            line = proc.stdout.readline()
            found = re.search(r"open http://127\.0\.0\.1:(\d+)/ \(control endpoints on the unix socket (\S+);", line)
            assert found, line
            yield int(found[1]), Path(found[2])
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def control(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://app", timeout=30)


def test_an_app_runs_without_a_socket_and_prints_the_url_to_open() -> None:
    with app_process() as (port, sock):
        assert sock.exists() and (sock.parent.stat().st_mode & 0o077) == 0  # a private folder
        page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        assert page.status_code == 200 and "Lists" in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/__cua/state", timeout=30).status_code == 404
        with control(sock) as c:
            assert c.get("/__cua/health").json()["app"] == "todo"
    assert not sock.parent.exists()  # removed on exit


# --- from pages in a real browser ----------------------------------------------------------

@pytest.mark.slow
async def test_pages_cannot_read_the_served_report_and_the_persons_page_works(tmp_path: Path) -> None:
    with report_server(tmp_path) as server, foreign_site() as other:
        async with chromium() as browser:
            context = await browser.new_context(viewport={"width": 1300, "height": 800})
            mine = await context.new_page()
            await mine.goto(server.url)  # the URL the command printed: the person's page
            await mine.wait_for_function("document.body.dataset.ready === '1'")
            assert await mine.inner_text("[data-card=episodes] .v") == "2"
            await mine.click("table.episodes tr[data-key='todo.rename@1__s0'] a")
            await mine.wait_for_selector(".episode .shot img")
            # each frame loaded or failed (a loaded one has a width): read too early, a frame still
            # on its way reads 0 as a refused one does
            await mine.wait_for_function("[...document.querySelectorAll('.episode .shot img')].every(i => i.complete)")
            widths = await mine.eval_on_selector_all(".episode .shot img", "els => els.map(e => e.naturalWidth)")
            assert widths and all(w > 0 for w in widths)  # frames load with the page's cookie
            await screenshot(mine, "report")

            # in the same browser (the cookie is there), pages of another site and of another
            # port of 127.0.0.1 (the same site) include the report's data as scripts
            data = f"http://127.0.0.1:{server.port}/report/data/index.js"
            for origin in (f"http://evil.example:{other}", f"http://127.0.0.1:{other}"):
                foreign = await context.new_page()
                await foreign.goto(origin + "/")
                assert await foreign.evaluate(SCRIPT_INCLUDE, data) == "refused", origin
                await foreign.close()
            # a rebound page, even one that knows the token, and a browser without the token
            rebound = await mine.goto(server.url.replace("127.0.0.1", "rebind.example"))
            assert rebound is not None and rebound.status == 403
            stranger = await (await browser.new_context()).new_page()
            refused = await stranger.goto(server.url.split("?")[0])
            assert refused is not None and refused.status == 401


@pytest.mark.slow
async def test_pages_cannot_drive_the_live_view_and_the_persons_page_works() -> None:
    async with live_view() as (port, token, session), chromium() as browser:
        with foreign_site() as other:
            context = await browser.new_context(viewport={"width": 1400, "height": 900})
            for origin in (f"http://evil.example:{other}", f"http://127.0.0.1:{other}"):
                foreign = await context.new_page()
                await foreign.goto(origin + "/")
                for url in (f"ws://127.0.0.1:{port}/ws", f"ws://127.0.0.1:{port}/ws?t={token}"):  # even with it
                    verdict = await foreign.evaluate(WS_ATTEMPT, url)
                    assert verdict.startswith("closed"), (origin, url, verdict)
                await foreign.evaluate(NO_CORS_POST, [f"http://127.0.0.1:{port}/?t={token}", "x=1"])
                await foreign.close()
            rebound = await (await context.new_page()).goto(f"http://rebind.example:{port}/?t={token}")
            assert rebound is not None and rebound.status == 403
            assert session.steps == 0 and not session.viewers

            mine = await context.new_page()  # the URL `cua record` prints
            await mine.goto(f"http://127.0.0.1:{port}/?t={token}")
            await mine.wait_for_function("document.getElementById('screen').naturalWidth > 0")
            assert "counter" in (await mine.inner_text("#instruction")).lower()
            box = await mine.locator("#screen").bounding_box()
            assert box is not None and session.last is not None
            oracle = session.instance.oracle(EpisodeContext(session.handle, session.last))
            click = await anext(oracle)  # where the task's oracle would click: the + button
            await oracle.aclose()
            assert isinstance(click, Click)
            await mine.mouse.click(box["x"] + click.x, box["y"] + click.y)
            await mine.wait_for_function("document.getElementById('steps').textContent === '1 steps'")
            assert session.steps == 1 and session.last.step == 1
            await screenshot(mine, "live_view")


@pytest.mark.slow
async def test_pages_cannot_change_an_app_and_its_own_page_and_links_still_work() -> None:
    with app_process() as (port, sock), foreign_site() as other, control(sock) as ctl:
        names = lambda: [row["name"] for row in ctl.get("/__cua/state").json()["lists"]]  # noqa: E731
        before = names()
        async with chromium() as browser:
            context = await browser.new_context()
            for origin in (f"http://evil.example:{other}", f"http://127.0.0.1:{other}"):
                foreign = await context.new_page()
                await foreign.goto(origin + "/")
                await foreign.evaluate(NO_CORS_POST, [f"http://127.0.0.1:{port}/lists", "name=Pwned"])
                verdict = await foreign.evaluate(WS_ATTEMPT, f"ws://127.0.0.1:{port}/")
                assert verdict.startswith("closed"), verdict
                # a link from another origin still opens the app (tasks link apps to each other)
                await foreign.evaluate(f"location.href = 'http://127.0.0.1:{port}/'")
                await foreign.wait_for_url(f"http://127.0.0.1:{port}/")
                assert "Lists" in await foreign.inner_text("h1")
                await foreign.close()
            assert names() == before
            rebound = await (await context.new_page()).goto(f"http://rebind.example:{port}/")
            assert rebound is not None and rebound.status == 403
            own = await context.new_page()  # the sandbox's browser on the app's own page
            await own.goto(f"http://127.0.0.1:{port}/")
            await own.fill("#new-list", "Groceries")
            await own.click("form[action='/lists'] button")
            await own.wait_for_url(re.compile(r"/lists/\d+$"))
        assert names() == [*before, "Groceries"]


# --- the office suite's SMTP sink (not HTTP, but reachable from the sandbox's pages) --------

def test_the_smtp_sink_takes_no_mail_from_a_web_pages_post(tmp_path: Path) -> None:
    """A page in the office desktop's browser can POST to the sink's loopback port: its body,
    spelling SMTP commands, must not become a sent message that a judge would count."""
    import smtplib
    import socket
    import time

    sink = Path(__file__).resolve().parents[2] / "tasks" / "suites" / "office" / "smtp_sink.py"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    outbox = tmp_path / "outbox"
    server = subprocess.Popen([sys.executable, str(sink), str(outbox), str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                attack = socket.create_connection(("127.0.0.1", port), timeout=10)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the SMTP sink did not start"
                time.sleep(0.05)  # polling for the port to listen
        body = ("x\r\nEHLO x\r\nMAIL FROM:<me@example.test>\r\nRCPT TO:<boss@example.test>\r\nDATA\r\n"
                "Subject: forged\r\n\r\nsent by a web page\r\n.\r\nQUIT\r\n")
        request = (f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: {EVIL}\r\nContent-Type: text/plain\r\n"
                   f"Content-Length: {len(body)}\r\n\r\n{body}")
        with attack:
            attack.sendall(request.encode())  # as a browser writes a small request: all at once
            answer = b""
            while chunk := attack.recv(4096):  # the sink closes the session
                answer += chunk
        assert answer.startswith(b"220 ") and b"354" not in answer, answer
        with smtplib.SMTP("127.0.0.1", port, timeout=10) as client:  # a mailer is served as before
            client.sendmail("me@example.test", ["friend@example.test"], b"Subject: real\r\n\r\nhello\r\n")
    finally:
        server.terminate()
        server.wait(10)
    stored = sorted(outbox.glob("*.eml"))
    assert [p.read_bytes().split(b"\r\n")[1] for p in stored] == [b"Subject: real"]
