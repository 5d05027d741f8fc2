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


def test_control_bodies_that_are_no_json_object_are_refused_and_change_nothing(todo_app: tuple[int, Path]) -> None:
    _, sock = todo_app
    with _control(sock) as c:
        c.post("/__cua/reset", json={"seed": 5})
        before = c.get("/__cua/state").json()
        for path in ("/__cua/reset", "/__cua/sql"):
            for body in (b"{not json", b"[1, 2]", b"\xff\xfe", b"7"):
                r = c.post(path, content=body)
                assert r.status_code == 400 and "error" in r.json(), (path, body, r.status_code)
        assert c.get("/__cua/state").json() == before


def test_a_caller_that_hangs_up_mid_body_leaves_no_traceback_and_the_app_as_it_was(tmp_path: Path) -> None:
    """A reset cancelled with its rollout closes the connection before its body is sent."""
    sock = tmp_path / "todo.sock"
    with subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "todo", "--port", "0", "--socket", str(sock),
                           "--seed", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
            with _control(sock) as c:
                before = c.get("/__cua/state").json()
            for path in ("/__cua/reset", "/__cua/sql", "/__cua/restore"):
                with socket.socket(socket.AF_UNIX) as raw:
                    raw.connect(str(sock))
                    raw.sendall(f"POST {path} HTTP/1.1\r\nhost: app\r\ncontent-type: application/json\r\n"
                                f"content-length: 4000\r\n\r\n{{\"seed\": 3".encode())
            with _control(sock) as c:  # answered after the hang-ups: the host is well, the data unchanged
                assert c.get("/__cua/state").json() == before
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err
