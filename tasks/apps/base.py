"""The framework every bundled web app is built on, and the app contract it serves.

An app is a Starlette application over one in-memory SQLite database. The framework
gives each app, for free, the control endpoints of the app contract (CONTRACT.md):
reset to a seed, state as JSON, read-only SQL, snapshot and restore. Those endpoints
answer only on the app's unix socket (the host's side), never on its TCP port (the
page's side), so an agent cannot read the answer key or reset the app; and the page side
refuses DNS-rebound and foreign-origin pages (`AppHostGuard` says who may talk to an app).

Seeding is deterministic: `seed(db, rng, seed)` builds the data from `random.Random(seed)`
and a fixed clock. The seeded database is serialized once and cached, so a reset is a
`deserialize` of cached bytes: well under a millisecond for hundreds of rows.
"""

from __future__ import annotations

import abc
import datetime as dt
import html
import json
import random
import sqlite3
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from cua.errors import BadRequest
from cua.exposure import OriginPolicy
from cua.gate import SAFE_METHODS, asgi_headers, from_another_origin, same_origin
from cua.judges.normalize import same_shown_text
from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule, read_query
from cua.tasks.apps.activity import ACTIVITY_TABLE, ActivityLog, ActivityRecorded, install
from cua.tasks.apps.i18n import translate
from cua.tasks.apps.plant import PLANT_TABLE, PlantRefused, plant, planted_html
from cua.variant import DEFAULT, DEFAULT_AXES, Variant, VariantAxes, parse_variant

__all__ = ["AppDB", "AppHostGuard", "WebApp", "CONTROL_PREFIX", "SHARED_STATIC", "build_asgi", "esc", "html_page",
           "page_side_refusal", "script_json"]

CONTROL_PREFIX = "/__cua/"
#: Where a real product (`cua.tasks.products`) finds its prebuilt database images, when its
#: service is told (`serve --images`): a container sandbox sees the host's cache only there.
IMAGES_ENV = "CUA_PRODUCT_IMAGES"
SHARED_STATIC = Path(__file__).parent / "static"
#: The apps' clock: seeded data and "today" in every app are relative to this instant,
#: so that state, screenshots and judges do not depend on the wall clock.
FIXED_NOW = dt.datetime(2026, 3, 2, 9, 0, 0)

_READ_ACTIONS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}


#: Most CPU a read-only state query may take. Every instance of the shared app host runs
#: on one event loop, so one sandbox's slow query (a recursive CTE) would otherwise hold
#: every other sandbox's pages and state reads for as long as it runs. CPU time of this
#: thread, not wall time: on a loaded machine a preempted query is not a slow one, and a
#: judge's read cut short by the scheduler would be a wrong verdict.
READ_QUERY_TIME_LIMIT_S = 0.5


def _same_text(a: Any, b: Any) -> int:
    """SQL `same_text(a, b)`: 1 when two texts show the same, whatever their runs of
    whitespace (a title the agent typed, looked up by a judge); case and character forms
    count, as for every stored text, but for two email addresses (`same_shown_text`)."""
    if not isinstance(a, str) or not isinstance(b, str):
        return 0
    return int(same_shown_text(a, b))


def _read_only(action: int, *_: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READ_ACTIONS else sqlite3.SQLITE_DENY


class AppDB:
    """One app instance's database: in memory, resettable from cached seed images."""

    def __init__(self, schema: str) -> None:
        self.schema = schema
        self.conn = self._connect()

    @staticmethod
    def _connect() -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA foreign_keys = ON")
        conn.create_function("same_text", 2, _same_text, deterministic=True)
        return conn

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def insert(self, sql: str, params: Any = ()) -> int:
        """Run one INSERT and return the new row's id."""
        rowid = self.conn.execute(sql, params).lastrowid
        if rowid is None:
            raise sqlite3.ProgrammingError(f"not an INSERT of one row: {sql[:80]}")
        return rowid

    def all(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return [dict(row) for row in self.conn.execute(sql, params)]

    def one(self, sql: str, params: Any = ()) -> dict[str, Any] | None:
        row = self.conn.execute(sql, params).fetchone()
        return dict(row) if row is not None else None

    def scalar(self, sql: str, params: Any = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return row[0] if row is not None else None

    def snapshot(self) -> bytes:
        return self.conn.serialize()

    def restore(self, image: bytes, *, trusted: bool = False) -> None:
        """Replace the database with `image`; on bad bytes raise sqlite3.DatabaseError and keep
        the current database untouched (the image is loaded and checked on a fresh connection).
        `trusted` images (the app's own cached seeds) skip the integrity check."""
        if not image:
            raise sqlite3.DatabaseError("empty database image")  # deserialize() raises MemoryError on b""
        fresh = self._connect()
        try:
            fresh.deserialize(image)
            if not trusted:
                check = fresh.execute("PRAGMA quick_check").fetchone()
                if check is None or check[0] != "ok":
                    raise sqlite3.DatabaseError(f"database image fails its integrity check: {check}")
                if not fresh.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise sqlite3.DatabaseError("database image holds no tables")
        except BaseException:
            fresh.close()
            raise
        fresh.execute("PRAGMA foreign_keys = ON")
        install(fresh)  # an image from before the activity log (an old snapshot) gets an empty one
        old, self.conn = self.conn, fresh
        old.close()

    def tables(self) -> list[str]:
        """The app's own tables (not SQLite's, not the activity log, not planted injections)."""
        rows = self.conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name NOT IN (?, ?) "
            "ORDER BY name", (ACTIVITY_TABLE, PLANT_TABLE))
        return [r[0] for r in rows]

    def dump(self) -> dict[str, list[dict[str, Any]]]:
        """Every table's rows, ordered by rowid: the default state a judge reads."""
        return {t: self.all(f'SELECT * FROM "{t}" ORDER BY rowid') for t in self.tables()}

    def read_only_query(self, sql: str, params: list[Any], *,
                        time_limit_s: float = READ_QUERY_TIME_LIMIT_S) -> list[dict[str, Any]]:
        """Rows of a read-only query; one that takes more than `time_limit_s` of CPU is
        interrupted (sqlite3.OperationalError "interrupted")."""
        deadline = time.thread_time() + time_limit_s
        self.conn.set_authorizer(_read_only)
        self.conn.set_progress_handler(lambda: time.thread_time() > deadline, 1000)
        try:
            return self.all(sql, params)
        finally:
            self.conn.set_progress_handler(None, 0)
            self.conn.set_authorizer(None)


class WebApp(abc.ABC):
    """Subclass per app: a schema, a deterministic seed, routes, and (optionally) a state view."""

    name: ClassVar[str]
    title: ClassVar[str]
    schema: ClassVar[str]
    #: Folder of the app's own static files, served under /static/app/.
    static_dir: ClassVar[Path | None] = None
    #: table -> the columns the app fills or computes itself (a reference number, the
    #: sender of a sent message, a copied price, a vote score): no agent input sets them
    #: to an arbitrary value, so judge QA's probes do not write them. Timestamps need no entry.
    assigned: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: "collection.field" of `state()` -> the "table.column"s it is computed from, for a
    #: field that is no column (a note's `folder` path from `notes.folder_id`): a judge that
    #: reads the field reads those columns (`cua.judges.completeness`). The judge-side rule
    #: takes an app's generated columns -- the ones no check need read on a row the agent
    #: adds -- to be its primary keys, its bookkeeping timestamps and `assigned`.
    derived: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: The keys of a nested record of `state()` that is no table row ("sheets.cells.*": a
    #: cell) -> its fixed fields: a judge that reads each of them reads the whole record.
    records: ClassVar[dict[str, tuple[str, ...]]] = {}
    #: table -> the key of `state()` that lists its rows, where the two differ ("cart_items": "cart").
    state_keys: ClassVar[dict[str, str]] = {}
    #: query parameter -> how the app reads it (its canonical form and default). The routes
    #: read them through `query()`, and the task loader gives the same rules to every `url`
    #: check on the app, so a URL is judged by what the app makes of it ("from=atl" is
    #: "from=ATL", "page=1" is no page) and the two cannot drift apart. An app that declares
    #: any declares every parameter its pages read (the judge ignores undeclared ones).
    query_params: ClassVar[dict[str, QueryRule]] = {}
    #: Whether the bundled apps' shared host (`multiserve`) may serve it; a real product
    #: (`cua.tasks.products`) runs its own server in a process of its own instead.
    shared_host: ClassVar[bool] = True
    #: The appearance variants the app supports (`cua.variant`): every app takes every theme
    #: (themes.css recolours its design tokens); an app with a `layout.css` and translated
    #: UI lists its layouts and locales.
    variant_axes: ClassVar[VariantAxes] = DEFAULT_AXES

    @classmethod
    def service_options(cls) -> list[str]:
        """Options the app's service command line adds after its name (a real product's
        `--images FOLDER`); none for an app of this framework."""
        return []

    def serve_own(self, port: int, socket_path: str, seed: int) -> int | None:
        """Serve this app in a process of its own, when this framework's ASGI server is not
        what serves it (a real product's own server, `cua.tasks.products`): the exit status.
        None: the framework serves it (`cua.tasks.apps.serve`)."""
        return None

    @classmethod
    def schema_db(cls) -> sqlite3.Connection:
        """An empty database of the app's schema, with the app's SQL functions: what a
        judge's query reads is learned by preparing it here, without seeding the app."""
        conn = AppDB._connect()
        conn.executescript(cls.schema)
        install(conn)  # judges read the activity log too
        return conn

    def query(self, request: Request) -> dict[str, Any]:
        """The declared query parameters of `request`, as `query_params` says the app reads them."""
        return read_query(self.query_params, request.query_params.multi_items())

    def __init__(self) -> None:
        self.db = AppDB(self.schema)
        self._seed_images: OrderedDict[int, bytes] = OrderedDict()
        self.current_seed: int | None = None
        #: How the pages look and read (theme, layout, locale); set by each reset, never by a page.
        self.variant: Variant = DEFAULT
        #: The audit trail of this instance's writes (`cua.tasks.apps.activity`).
        self.activity = ActivityLog(lambda: self.db.conn, self.state, self.irreversible)
        self.reset(0)

    # --- what an app defines ---

    @abc.abstractmethod
    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        """Fill the freshly created schema. Use only `rng` and `FIXED_NOW`."""

    @abc.abstractmethod
    def routes(self) -> list[BaseRoute]: ...

    def state(self) -> dict[str, Any]:
        """The JSON judges read. Default: every table. Override to add derived views."""
        return self.db.dump()

    def irreversible(self, change: Change) -> str | None:
        """The irreversible operation a change of `state()` is, if any (a message sent, an
        order placed): its name in the activity log, where a judge sees it even when the
        record is erased afterwards. Default: none."""
        return None

    def restore(self, image: bytes) -> None:
        """Replace the database with a snapshot's image (see `AppDB.restore`)."""
        self.db.restore(image)
        self.activity.forget()

    # --- the contract's operations ---

    def reset(self, seed: int) -> None:
        image = self._seed_images.get(seed)
        if image is None:
            fresh = AppDB._connect()
            fresh.executescript(self.schema)
            self.db.conn, old = fresh, self.db.conn
            try:
                self.seed(self.db, random.Random(seed), seed)
            finally:
                self.db.conn = old
            image = fresh.serialize()
            fresh.close()
            self._seed_images[seed] = image
            while len(self._seed_images) > 16:
                self._seed_images.popitem(last=False)
        self.db.restore(image, trusted=True)
        self.activity.forget()
        self.current_seed = seed

    def set_variant(self, variant: Variant) -> None:
        """Show the pages in `variant` from now on (the data stay as they are); BadRequest
        for a value the app does not support."""
        self.variant = self.variant_axes.check(variant, self.name)

    def t(self, text: str) -> str:
        """`text` (the app's English UI text) in the variant's locale."""
        return translate(self.variant.locale, text)

    def now(self) -> dt.datetime:
        return FIXED_NOW


def esc(value: Any) -> str:
    """`value` as HTML text, safe in element content and in quoted attribute values: every
    app writes seeded and user-typed text into its pages through this one escaper."""
    return html.escape(str(value), quote=True)


def script_json(value: Any) -> str:
    """`value` as JSON to put inside a `<script type="application/json">` block: `<`, `>`
    and `&` as JSON escapes, so no text in it can close the block or open a comment."""
    return json.dumps(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_page(app: WebApp, title: str, body: str, *, nav: list[tuple[str, str]] | None = None,
              scripts: list[str] | None = None, head: str = "") -> HTMLResponse:
    """Wrap a body in the shared layout: header, nav links, shared and app stylesheets.
    `title` and the nav labels are text (a record's name may be among them); `body` and
    `head` are markup the app built with `esc`."""
    nav_html = "".join(f'<a href="{esc(href)}" data-nav="{esc(href)}">{esc(app.t(label))}</a>'
                       for label, href in (nav or []))
    # the frame's shared layouts go between the app's look and its own layout rules, which refine them
    sheets = "".join(f'<link rel="stylesheet" href="{href}">' for name, href in (
        ("app.css", "/static/app/app.css"), ("layout.css", "/static/cua/layouts.css"), ("layout.css", "/static/app/layout.css"))
        if app.static_dir and (app.static_dir / name).exists())
    script_tags = "".join(f'<script src="{s}"></script>' for s in (scripts or []))
    v = app.variant
    return HTMLResponse(
        f'<!doctype html><html lang="{esc(v.locale)}" data-theme="{esc(v.theme)}" data-layout="{esc(v.layout)}">'
        # a phone lays the page out at its own width (the apps' phone layouts); a desktop ignores it
        '<head><meta charset=utf-8><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)} · {esc(app.title)}</title>"
        '<link rel="stylesheet" href="/static/cua/base.css"><link rel="stylesheet" href="/static/cua/themes.css">'
        f"{sheets}{head}</head><body>"
        f'<header class="appbar"><span class="brand">{esc(app.title)}</span><nav>{nav_html}</nav></header>'
        f'{planted_html(app.db.conn)}<main>{body}</main>{script_tags}</body></html>'
    )


def _control_routes(app: WebApp) -> list[BaseRoute]:
    async def health(_: Request) -> Response:
        return JSONResponse({"ok": True, "app": app.name, "seed": app.current_seed})

    async def reset(request: Request) -> Response:
        body = await request.body()
        payload = json.loads(body) if body else {}
        if not isinstance(payload, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        seed = payload.get("seed", 0)
        if not isinstance(seed, int):
            return JSONResponse({"error": "seed must be an integer"}, status_code=400)
        try:  # no variant: the app's default look, so that a reset is the same whatever came before
            variant = app.variant_axes.check(parse_variant(payload.get("variant") or {}), app.name)
        except BadRequest as exc:
            return JSONResponse({"error": exc.message, "field": exc.details.get("field")}, status_code=400)
        started = time.perf_counter()
        app.reset(seed)
        if payload.get("plant"):  # prompt injections (cua.attack): part of the state the episode starts from
            try:
                plant(app.db.conn, app.name, payload["plant"])
            except PlantRefused as exc:
                app.reset(seed)
                return JSONResponse({"error": f"plant refused: {exc}", "field": "plant"}, status_code=400)
            app.activity.forget()
        app.variant = variant
        return JSONResponse({"ok": True, "seed": seed, "variant": variant.model_dump(mode="json"),
                             "ms": (time.perf_counter() - started) * 1000})

    async def state(_: Request) -> Response:
        return JSONResponse(app.state())

    async def sql(request: Request) -> Response:
        payload = await request.json()
        if not isinstance(payload, dict):
            return JSONResponse({"error": "the body must be a JSON object"}, status_code=400)
        try:
            rows = app.db.read_only_query(str(payload["query"]), list(payload.get("params") or []))
        except (sqlite3.Error, KeyError) as exc:
            return JSONResponse({"error": f"{type(exc).__name__}: {exc}"}, status_code=400)
        return JSONResponse({"rows": rows})

    async def snapshot(_: Request) -> Response:
        return Response(app.db.snapshot(), media_type="application/octet-stream",
                        headers={"x-cua-seed": str(app.current_seed)})

    async def restore(request: Request) -> Response:
        image = await request.body()
        try:
            app.restore(image)
        except sqlite3.Error as exc:
            return JSONResponse({"error": f"not a database image: {exc}"}, status_code=400)
        return JSONResponse({"ok": True})

    p = CONTROL_PREFIX
    return [
        Route(p + "health", health),
        Route(p + "reset", _control_call(reset), methods=["POST"]),
        Route(p + "state", state),
        Route(p + "sql", _control_call(sql), methods=["POST"]),
        Route(p + "snapshot", snapshot),
        Route(p + "restore", _control_call(restore), methods=["POST"]),
    ]


def _control_call(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    """A control endpoint that reads a body: a body that is no JSON is the caller's 400, and
    a caller that hung up mid-body (a reset cancelled with its rollout) gets no answer
    rather than a traceback in the host's log; the app is left as it was, since the
    endpoint reads the whole body before it changes anything."""
    async def call(request: Request) -> Response:
        try:
            return await handler(request)
        except ClientDisconnect:
            return Response(status_code=499)  # nobody reads it
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return JSONResponse({"error": f"the body is not JSON: {exc}"}, status_code=400)
    return call


#: The rules of the page side (TCP): the app host binds loopback only, for the sandbox's browser.
_LOOPBACK = OriginPolicy.for_bind("127.0.0.1")


def page_side_refusal(method: str, path: str, headers: dict[str, str]) -> tuple[int, str] | None:
    """Why the app host refuses a request that came over TCP (the pages' side), as (HTTP
    status, reason); None when it serves it. See `AppHostGuard`."""
    if path.startswith(CONTROL_PREFIX):
        return 404, "not found"
    host_refusal = _LOOPBACK.refusal(None, headers.get("host"))
    if host_refusal is not None:
        return 403, host_refusal
    origin = headers.get("origin")
    if method not in SAFE_METHODS and origin is not None and not same_origin(origin, headers.get("host")):
        return 403, f"a page of origin {origin!r} may not change this app"
    if from_another_origin(headers) and not (headers.get("sec-fetch-mode") == "navigate" and method in ("GET", "HEAD")):
        return 403, "another origin's page may only navigate to this app"
    return None


class AppHostGuard:
    """Who may talk to an app host. The host (its unix socket: no client address) may use
    everything; a TCP client -- a page of the sandbox's browser, or of any browser on the
    machine -- is held to these rules, before any route:

    - the control endpoints (`/__cua/`: reset, state, SQL, snapshot, restore) are not there
      (404): an agent must not read the answer key or reset the app, and no page may either;
    - the Host must name loopback (the host binds 127.0.0.1 and the sandbox's browser loads
      http://127.0.0.1:PORT or http://localhost:PORT): a DNS-rebound page sends its own
      domain as Host, so it cannot read or drive the app;
    - a request that may change state (any method but GET, HEAD, OPTIONS, and a websocket
      handshake) whose browser Origin is not the app's own is refused: no page of another
      origin -- another sandbox's app on another port, a site in the person's browser --
      can submit the app's forms (a cross-origin form or no-cors POST needs no preflight);
    - a request the browser marks as made by another origin's page (Fetch Metadata
      `Sec-Fetch-Site`) is served only as a top-level or frame navigation by GET: a link
      from another app still opens it, but no foreign page can load its pages as images
      or scripts (some GETs change state: opening a message marks it read).

    There is no token: the sandbox's own browser must load the app with nothing but its
    URL (which an agent sees), so the Origin and Host rules are what keep other pages out.
    A client that sends no Origin (no browser: a judge's probe, curl) is not a page, and
    passes the Origin rule as it does at `cua serve`."""

    def __init__(self, inner: ASGIApp) -> None:
        self.inner = inner

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and scope.get("client"):
            # a websocket handshake is a GET that may change state: held to the unsafe methods' rule
            method = "WEBSOCKET" if scope["type"] == "websocket" else str(scope.get("method", "GET"))
            refusal = page_side_refusal(method, scope["path"], asgi_headers(scope))
            if refusal is not None:
                status, reason = refusal
                if scope["type"] == "websocket":
                    await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
                else:
                    await JSONResponse({"error": reason}, status_code=status)(scope, receive, send)
                return
        await self.inner(scope, receive, send)


def build_asgi(app: WebApp) -> ASGIApp:
    mounts: list[BaseRoute] = [Mount("/static/cua", StaticFiles(directory=SHARED_STATIC), name="cua-static")]
    if app.static_dir is not None:
        mounts.append(Mount("/static/app", StaticFiles(directory=app.static_dir), name="app-static"))
    starlette = Starlette(routes=[*_control_routes(app), *mounts, *app.routes()])
    return AppHostGuard(ActivityRecorded(starlette, app.activity, CONTROL_PREFIX))
