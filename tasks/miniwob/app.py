"""The MiniWoB++ service: MiniWoB's own HTML tasks behind the app contract.

Pages are served from the `miniwob` package's html folder, unchanged except for one
added script (shim.js) that starts a seeded episode on load and reports MiniWoB's
reward, computed by MiniWoB's JavaScript. The service, not the page, decides what an
episode is, so that a page cannot be talked into a second try:

- one episode per (task, seed) per reset: the first page load opens it (`open`), a
  reload while it runs resumes it with the time already spent (the same seed draws
  the same problem), and a load after it ended shows only the end screen;
- the first end is the one that counts (`end` updates the row only while it is open);
- a report (open, utterance, end) is taken only from the task's own page: a script's
  request of `/miniwob/<task>.html` on the service's own origin, as the browser stamps
  it (tasks/apps/page_reports.py); a `data:` page, another origin's page or a form the
  agent built is answered 403 and changes nothing;
- the time limit is the task's own (`core.EPISODE_MAX_TIME` as the task page sets it:
  MiniWoB's 10 s default, or e.g. search-engine's 20 s) unless the service was started
  `untimed`, which every episode row records (`time_limit_ms` NULL).

The rows live in SQLite (table `episodes`), so judges read them with an SqlQuery and
the control endpoints (reset, snapshot, restore) work as for every bundled app.
"""

from __future__ import annotations

import html
import json
import random
import re
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from cua.tasks.apps.base import AppDB, WebApp
from cua.tasks.apps.page_reports import foreign_report

SCHEMA = """
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY, task TEXT NOT NULL, seed TEXT NOT NULL, utterance TEXT NOT NULL DEFAULT '',
    started_ms INTEGER NOT NULL, time_limit_ms INTEGER, loads INTEGER NOT NULL DEFAULT 1,
    done INTEGER NOT NULL DEFAULT 0, ended_ms INTEGER, reward REAL, raw_reward REAL, reason TEXT,
    UNIQUE (task, seed)
);
"""
SHIM = Path(__file__).parent / "shim.js"
TASK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
#: MiniWoB's own default (core.js), used when a page reports no limit of its own.
DEFAULT_TIME_LIMIT_MS = 10_000


def html_root() -> Path:
    """The `miniwob` package's html folder (core/, common/, miniwob/ tasks)."""
    try:
        import miniwob
    except ImportError as exc:  # the optional dependency of the `tasks` extra
        raise RuntimeError("MiniWoB++ needs the `miniwob` package: pip install 'cua[tasks]'") from exc
    return Path(miniwob.__file__).parent / "html"


class BadReport(ValueError):
    """A page sent a malformed episode report (the page's fault: answered 400)."""

    status = 400


class ForeignReport(BadReport):
    """A report that does not come from the task's own page (answered 403, never stored)."""

    status = 403


def _refused(exc: Exception) -> Response:
    status = exc.status if isinstance(exc, BadReport) else 400
    return JSONResponse({"error": f"bad episode report: {exc}"}, status_code=status)


def _text(data: dict[str, Any], key: str, limit: int) -> str:
    value = data.get(key)
    if value is None:
        raise BadReport(f"missing {key!r}")
    return str(value)[:limit]


def _now_ms() -> int:
    return int(time.time() * 1000)


class MiniWobApp(WebApp):
    name = "miniwob"
    title = "MiniWoB++"
    schema = SCHEMA

    def __init__(self, *, timed: bool = True) -> None:
        self.root = html_root()
        #: False: no time limit (an explicit option; every row says so with time_limit_ms NULL).
        self.timed = timed
        super().__init__()

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        """No data: each episode's problem comes from MiniWoB's JS, seeded by the page URL."""

    def state(self) -> dict[str, Any]:
        episodes = [{**e, "done": bool(e["done"])} for e in self.db.all("SELECT * FROM episodes ORDER BY id")]
        return {"episodes": episodes, "timed": self.timed}

    def task_names(self) -> list[str]:
        return sorted(p.stem for p in (self.root / "miniwob").glob("*.html"))

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.index),
            Route("/miniwob/{task}.html", self.task_page),
            Route("/cua/shim.js", self.shim),
            Route("/cua/episode/open", self.open_episode, methods=["POST"]),
            Route("/cua/episode/utterance", self.utterance, methods=["POST"]),
            Route("/cua/episode/end", self.end_episode, methods=["POST"]),
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
        return Response(SHIM.read_text(encoding="utf-8"), media_type="text/javascript",
                        headers={"cache-control": "no-store"})

    async def _report(self, request: Request) -> dict[str, Any]:
        try:
            data = json.loads(await request.body())
        except ValueError as exc:
            raise BadReport(f"not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise BadReport("a report is a JSON object")
        task = _text(data, "task", 64)
        refused = foreign_report(request, f"/miniwob/{task}.html")
        if refused is not None:
            raise ForeignReport(refused)
        return data

    def _row(self, task: str, seed: str) -> dict[str, Any] | None:
        return self.db.one("SELECT * FROM episodes WHERE task = ? AND seed = ?", (task, seed))

    async def open_episode(self, request: Request) -> Response:
        """A task page has loaded: open its episode, resume it, or say it is over.

        Answer: `status` ("new", "resume" or "over"), `limit_ms` (0: no limit),
        `elapsed_ms` since the episode first opened, and for "over" the stored result.
        A page that drew its problem before asking (the shim's in-page restart) sends its
        `utterance` along, stored as `utterance` stores it: once."""
        try:
            data = await self._report(request)
            task, seed = _text(data, "task", 64), _text(data, "seed", 64)
            page_limit = int(data.get("page_limit_ms") or DEFAULT_TIME_LIMIT_MS)
            utterance = "" if data.get("utterance") is None else _text(data, "utterance", 4000)
        except (BadReport, ValueError, TypeError) as exc:
            return _refused(exc)
        now = _now_ms()
        row = self._row(task, seed)
        if row is None:
            limit = page_limit if self.timed else None
            self.db.execute("INSERT INTO episodes (task, seed, utterance, started_ms, time_limit_ms) VALUES (?, ?, ?, ?, ?)",
                            (task, seed, utterance, now, limit))
            return JSONResponse({"status": "new", "limit_ms": limit or 0, "elapsed_ms": 0})
        self.db.execute("UPDATE episodes SET loads = loads + 1, utterance = CASE WHEN utterance = '' THEN ? "
                        "ELSE utterance END WHERE id = ?", (utterance, row["id"]))
        answer = {"limit_ms": row["time_limit_ms"] or 0, "elapsed_ms": max(0, now - row["started_ms"])}
        if row["done"]:
            return JSONResponse({**answer, "status": "over", "reward": row["reward"], "raw_reward": row["raw_reward"],
                                 "reason": row["reason"], "utterance": row["utterance"]})
        return JSONResponse({**answer, "status": "resume"})

    async def utterance(self, request: Request) -> Response:
        """The problem the page drew: stored once (a resumed page draws the same one)."""
        try:
            data = await self._report(request)
            task, seed, text = _text(data, "task", 64), _text(data, "seed", 64), _text(data, "utterance", 4000)
        except BadReport as exc:
            return _refused(exc)
        self.db.execute("UPDATE episodes SET utterance = ? WHERE task = ? AND seed = ? AND utterance = ''",
                        (text, task, seed))
        return JSONResponse({"ok": True})

    async def end_episode(self, request: Request) -> Response:
        """MiniWoB ended the episode: the first end is stored, any later one ignored."""
        try:
            data = await self._report(request)
            task, seed = _text(data, "task", 64), _text(data, "seed", 64)
            reward, raw = float(data["reward"]), float(data["raw_reward"])
            reason = None if data.get("reason") is None else str(data["reason"])[:500]
        except (BadReport, KeyError, ValueError, TypeError) as exc:
            return _refused(exc)
        cursor = self.db.execute("UPDATE episodes SET done = 1, ended_ms = ?, reward = ?, raw_reward = ?, reason = ? "
                                 "WHERE task = ? AND seed = ? AND done = 0", (_now_ms(), reward, raw, reason, task, seed))
        return JSONResponse({"counted": cursor.rowcount == 1})


APP = MiniWobApp
