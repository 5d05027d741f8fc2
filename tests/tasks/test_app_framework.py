"""The app contract as the host sees it: a real app process, its TCP port and its unix socket."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest


@pytest.fixture(scope="module")
def todo_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sock = tmp_path_factory.mktemp("app") / "todo.sock"
    with subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "todo", "--port", str(port),
                           "--socket", str(sock), "--seed", "1"], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            yield port, sock
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _control(sock: Path) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(sock)), base_url="http://app", timeout=30)


def test_control_endpoints_answer_only_on_the_socket(todo_app: tuple[int, Path]) -> None:
    port, sock = todo_app
    page = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
    assert page.status_code == 200 and "Lists" in page.text
    for path in ("/__cua/state", "/__cua/snapshot", "/__cua/health"):
        assert httpx.get(f"http://127.0.0.1:{port}{path}", timeout=30).status_code == 404
    assert httpx.post(f"http://127.0.0.1:{port}/__cua/reset", json={"seed": 2}, timeout=30).status_code == 404
    with _control(sock) as c:
        assert c.get("/__cua/health").json() == {"ok": True, "app": "todo", "seed": 1}


def test_reset_is_deterministic_and_restore_refuses_garbage(todo_app: tuple[int, Path]) -> None:
    _, sock = todo_app
    with _control(sock) as c:
        c.post("/__cua/reset", json={"seed": 5})
        five = c.get("/__cua/state").json()
        c.post("/__cua/reset", json={"seed": 6})
        assert c.get("/__cua/state").json() != five
        c.post("/__cua/reset", json={"seed": 5})
        assert c.get("/__cua/state").json() == five
        image = c.get("/__cua/snapshot").content
        for garbage in (b"not a database", image[: len(image) // 3], b""):
            r = c.post("/__cua/restore", content=garbage)
            assert r.status_code == 400 and "error" in r.json()
            assert c.get("/__cua/state").json() == five  # the app keeps its data
        assert c.post("/__cua/restore", content=image).status_code == 200
        assert c.get("/__cua/state").json() == five
        refused = c.post("/__cua/sql", json={"query": "UPDATE todos SET done = 1"})
        assert refused.status_code == 400
        assert c.post("/__cua/reset", json={"seed": "five"}).status_code == 400
