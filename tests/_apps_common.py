"""A bundled app served in process for its tests (test_apps_a, test_apps_b): the page's
side through Starlette's TestClient, whose requests carry a `client` address the framework
treats as TCP, and the control side called without one, as the unix socket does."""

from __future__ import annotations

from typing import Any

from starlette.testclient import TestClient

from cua.tasks.apps import load_app
from cua.tasks.apps.base import build_asgi

__all__ = ["Control", "open_app"]


class Control:
    """Calls the control endpoints (`/__cua/...`) the way the unix socket does: with no client address."""

    def __init__(self, asgi: Any) -> None:
        async def no_client(scope: Any, receive: Any, send: Any) -> None:
            await asgi({**scope, "client": None}, receive, send)

        self.client = TestClient(no_client)

    def get(self, path: str) -> Any:
        return self.client.get(path)

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.client.post(path, **kwargs)

    def state(self) -> dict[str, Any]:
        return self.get("/__cua/state").json()

    def reset(self, seed: int = 0) -> None:
        assert self.post("/__cua/reset", json={"seed": seed}).status_code == 200

    def sql(self, query: str, params: list[Any] | None = None) -> Any:
        return self.post("/__cua/sql", json={"query": query, "params": params or []})


def open_app(name: str) -> tuple[Any, TestClient, Control]:
    """(the app object, the page's client, the control side) of bundled app `name`, fresh."""
    app = load_app(name)
    asgi = build_asgi(app)
    # the page side as the sandbox's browser reaches it: the app host refuses a non-loopback Host
    return app, TestClient(asgi, base_url="http://127.0.0.1"), Control(asgi)
