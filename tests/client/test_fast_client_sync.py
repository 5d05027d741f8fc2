"""`cua.sync_api`, the blocking facade, on the fake kind through a real server in a thread:
the same calls as the async client, from plain code."""

from __future__ import annotations

from cua import sync_api
from cua.actions import Click
from cua.observation import ObserveOptions
from cua.server.app import serve_in_thread
from cua.state import AppStateQuery, DomQuery


def test_the_blocking_facade_drives_the_same_server() -> None:
    """`cua.sync_api`: the same calls without async, from plain code, on a server in a thread."""
    with serve_in_thread(max_sandboxes=2) as running, sync_api.connect(running.url, running.token) as c:
        sandbox = c.create("fake")
        try:
            sandbox.reset(seed=4)
            (box,) = sandbox.query([DomQuery(selector="#inc", prop="bbox")])
            x, y = box.value["x"] + 3, box.value["y"] + 3
            (before,) = sandbox.query([AppStateQuery()])
            snap = sandbox.snapshot()
            assert sandbox.act(Click(x=x, y=y)).error is None
            twin = sandbox.fork(snap)
            try:
                (mine,), (theirs,) = sandbox.query([AppStateQuery()]), twin.query([AppStateQuery()])
                assert mine.value["count"] == before.value["count"] + 1 and theirs.value == before.value
            finally:
                twin.close()
            frames = sandbox.stream(ObserveOptions(format="png"), max_fps=20)
            assert next(frames).data[:4] == b"\x89PNG"
            frames.close()  # type: ignore[attr-defined]
            assert [i.id for i in c.list()] == [sandbox.id]
        finally:
            sandbox.close()
