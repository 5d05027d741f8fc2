"""The MiniWoB++ service: MiniWoB's own HTML tasks behind the app contract.

Pages are served from the `miniwob` package's html folder, unchanged except for one
added script (shim.js) that starts a seeded episode on load and reports MiniWoB's
reward, computed by MiniWoB's JavaScript, to `POST /cua/episode`. The service keeps
those reports in SQLite, so judges read them with an SqlQuery or the app state, and
the control endpoints (reset, snapshot, restore) work as for every bundled app.
"""

from __future__ import annotations

import html
import json
import random
import re
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from cua.tasks.apps.base import AppDB, WebApp

SCHEMA = """
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY, task TEXT NOT NULL, seed TEXT, utterance TEXT NOT NULL, done INTEGER NOT NULL,
    reward REAL NOT NULL, raw_reward REAL NOT NULL, reason TEXT
);
"""
SHIM = Path(__file__).parent / "shim.js"
TASK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


def html_root() -> Path:
    """The `miniwob` package's html folder (core/, common/, miniwob/ tasks)."""
    try:
        import miniwob
    except ImportError as exc:  # the optional dependency of the `tasks` extra
        raise RuntimeError("MiniWoB++ needs the `miniwob` package: pip install 'cua[tasks]'") from exc
    return Path(miniwob.__file__).parent / "html"


class MiniWobApp(WebApp):
    name = "miniwob"
    title = "MiniWoB++"
    schema = SCHEMA

    def __init__(self) -> None:
        self.root = html_root()
        super().__init__()

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        """No data: each episode's problem comes from MiniWoB's JS, seeded by the page URL."""

    def state(self) -> dict[str, Any]:
        episodes = [{**e, "done": bool(e["done"])} for e in self.db.all("SELECT * FROM episodes ORDER BY id")]
        return {"episodes": episodes, "last": episodes[-1] if episodes else None}

    def task_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "miniwob").glob("*.html"))

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/miniwob/{task}.html", self.task_page),
            Route("/cua/shim.js", self.shim),
            Route("/cua/episode", self.episode, methods=["POST"]),
            Mount("/core", StaticFiles(directory=self.root / "core")),
            Mount("/common", StaticFiles(directory=self.root / "common")),
        ]

    async def index(self, request: Request) -> Response:
        links = "".join(f'<li><a href="/miniwob/{n}.html?seed=0">{html.escape(n)}</a></li>' for n in self.task_names())
        return HTMLResponse(f"<!doctype html><title>MiniWoB++</title><h1>MiniWoB++ tasks</h1><ul>{links}</ul>")

    async def task_page(self, request: Request) -> Response:
        task = request.path_params["task"]
        path = self.root / "miniwob" / f"{task}.html"
        if not TASK_NAME.match(task) or not path.is_file():
            return HTMLResponse("<p>No such MiniWoB task.</p>", status_code=404)
        page = path.read_text(encoding="utf-8")
        shim = '<script src="/cua/shim.js"></script>'
        # Before </body>: after every task script, before the load event that starts episodes.
        page = page.replace("</body>", shim + "</body>", 1) if "</body>" in page else page + shim
        return HTMLResponse(page, headers={"cache-control": "no-store"})

    async def shim(self, request: Request) -> Response:
        return Response(SHIM.read_text(encoding="utf-8"), media_type="text/javascript")

    async def episode(self, request: Request) -> Response:
        try:
            data = json.loads(await request.body())
            row = (str(data["task"])[:64], None if data.get("seed") is None else str(data["seed"])[:64],
                   str(data.get("utterance", ""))[:2000], int(bool(data["done"])), float(data["reward"]),
                   float(data["raw_reward"]), None if data.get("reason") is None else str(data["reason"])[:500])
        except (ValueError, KeyError, TypeError) as exc:
            return JSONResponse({"error": f"bad episode report: {exc}"}, status_code=400)
        self.db.execute("INSERT INTO episodes (task, seed, utterance, done, reward, raw_reward, reason) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        return JSONResponse({"ok": True})


APP = MiniWobApp
