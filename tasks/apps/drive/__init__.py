"""Drive: one person's cloud file drive (Stratus Drive) for Noor Haddad.

Pages: `/folders/{id}` (a folder: the folder tree, breadcrumbs, its items as a list or a grid,
new folder, upload), `/items/{id}` (details: type, exact size, owner, modified, location,
access, and a preview of text, CSV and image files), `/items/{id}/rename`, `/items/{id}/move`
(a folder picker), copy, star, delete to trash, `/items/{id}/share` (people as viewer,
commenter or editor; change or remove access; the "anyone with the link" switch),
`/items/{id}/versions` (restore a version), `/shared` (shared with me), `/recent`, `/starred`,
`/trash` (restore, empty behind a confirmation), `/search` (name, type, owner, modified).

The drive assigns ids, sizes (a text's UTF-8 length), types and dates (the app's clock). The
rules the server keeps whatever a page sends: a name is 1-255 characters without `/` and
unique in its folder; only the owner renames, moves, shares, trashes or restores versions;
nothing moves into itself; an upload or copy that would pass the storage quota is refused
with the space it needs and the space left; a share names a known person and a role. A
refused request gets a page that says why (400/403/404), never a change. History: sharing
is never forgotten (`share_log` keeps each add, change, removal and link switch), a restored
version is a new version, and emptying the trash is a `purge` in the activity log.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import random
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.drive import locale
from cua.tasks.apps.drive.seed import ROLES, TYPES, seed_drive
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE, locale TEXT NOT NULL);
CREATE TABLE items (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES items(id),
                    kind TEXT NOT NULL CHECK (kind IN ('folder', 'file')), name TEXT NOT NULL, type TEXT NOT NULL,
                    mime TEXT NOT NULL DEFAULT '', size_bytes INTEGER NOT NULL DEFAULT 0 CHECK (size_bytes >= 0),
                    owner_id INTEGER NOT NULL REFERENCES people(id), created_at TEXT NOT NULL, modified_at TEXT NOT NULL,
                    modified_by INTEGER REFERENCES people(id), starred INTEGER NOT NULL DEFAULT 0,
                    trashed INTEGER NOT NULL DEFAULT 0, trashed_at TEXT,
                    label TEXT NOT NULL DEFAULT '' CHECK (label IN ('', 'confidential')),
                    link_access TEXT NOT NULL DEFAULT 'restricted' CHECK (link_access IN ('restricted', 'anyone')));
CREATE INDEX items_parent ON items (parent_id);
CREATE TABLE versions (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items(id), number INTEGER NOT NULL,
                       size_bytes INTEGER NOT NULL, content TEXT NOT NULL DEFAULT '', author_id INTEGER NOT NULL REFERENCES people(id),
                       created_at TEXT NOT NULL, note TEXT NOT NULL DEFAULT '', UNIQUE (item_id, number));
CREATE TABLE shares (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items(id), person_id INTEGER NOT NULL REFERENCES people(id),
                     role TEXT NOT NULL CHECK (role IN ('viewer', 'commenter', 'editor')), created_at TEXT NOT NULL,
                     UNIQUE (item_id, person_id));
CREATE TABLE share_log (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL, person_id INTEGER,
                        action TEXT NOT NULL CHECK (action IN ('add', 'change', 'remove', 'link_on', 'link_off')),
                        role TEXT NOT NULL DEFAULT '', logged_at TEXT NOT NULL);
CREATE TABLE settings (id INTEGER PRIMARY KEY CHECK (id = 1), quota_bytes INTEGER NOT NULL);
"""

ME = 1
ROOT = 1
UPLOAD_TYPES = {".txt": "text", ".md": "text", ".csv": "csv"}
MAX_UPLOAD = 1024 * 1024
NAV = [("My Drive", "/folders/1"), ("Shared with me", "/shared"), ("Recent", "/recent"), ("Starred", "/starred"),
       ("Trash", "/trash")]
MODIFIED = {"": "Any time", "today": "Today", "7": "Last 7 days", "30": "Last 30 days", "365": "Last year"}
TYPE_LABELS = {"folder": "Folder", "pdf": "PDF", "document": "Document", "spreadsheet": "Spreadsheet",
               "presentation": "Presentation", "image": "Image", "video": "Video", "audio": "Audio", "archive": "Archive",
               "text": "Text", "csv": "CSV"}


class Refused(Exception):
    """A request the drive's rules refuse: shown with the reason, nothing changes. `message`
    is the English template (`{name}` fields filled from `fields`), so the page translates the
    sentence before filling it; the exception's text is the English one."""

    def __init__(self, message: str, status: int = 400, /, **fields: str) -> None:
        super().__init__(message.format(**fields))
        self.message, self.status, self.fields = message, status, fields


def human_size(n: int) -> str:
    """Bytes as the drive shows them in en-US: `812 B`, `1.4 KB`, `23.5 MB`, `2.07 GB` (1 KB = 1,024 bytes)."""
    return locale.size(n, "en-US")


def clean_name(raw: str) -> str:
    """A name as typed, with runs of whitespace made one space; Refused when the drive cannot hold it."""
    name = " ".join(str(raw).split())
    if not name:
        raise Refused("Enter a name.")
    if "/" in name or name in (".", ".."):
        raise Refused("A name cannot contain '/' or be '.' or '..'.")
    if len(name) > 255:
        raise Refused("A name is at most 255 characters.")
    return name


def upload_type(name: str) -> str:
    """The type of an uploaded text file, from its extension; Refused for anything else."""
    ext = Path(name).suffix.lower()
    if ext not in UPLOAD_TYPES:
        raise Refused("Only text files can be uploaded here: a name ending in .txt, .md or .csv.")
    return UPLOAD_TYPES[ext]


class DriveApp(WebApp):
    name = "drive"
    title = "Stratus Drive"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: the drive fills these itself: what a file is and weighs, who touched it, what a version notes
    assigned = {"items": ("type", "mime", "size_bytes", "owner_id", "modified_by", "trashed_at"),
                "versions": ("number", "size_bytes", "author_id", "note"),
                "share_log": ("role",)}
    query_params = {"view": QueryRule(strip=True), "q": QueryRule(strip=True), "type": QueryRule(strip=True),
                    "owner": QueryRule(strip=True), "modified": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_drive(db, rng, self.now())

    def irreversible(self, change: Change) -> str | None:
        """Emptying the trash erases an item for good: no later request brings it back."""
        steps = change.steps
        if change.kind == "removed" and len(steps) == 2 and steps[0].key == "items":
            return "purge"
        return None

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        return [
            Route("/", g(self.home)),
            Route("/folders/{fid:int}", g(self.folder)),
            Route("/folders/{fid:int}/new", g(self.new_folder), methods=["POST"]),
            Route("/folders/{fid:int}/upload", g(self.upload), methods=["GET", "POST"]),
            Route("/items/{iid:int}", g(self.details)),
            Route("/items/{iid:int}/raw", g(self.raw)),
            Route("/items/{iid:int}/star", g(self.star), methods=["POST"]),
            Route("/items/{iid:int}/rename", g(self.rename), methods=["GET", "POST"]),
            Route("/items/{iid:int}/move", g(self.move), methods=["GET", "POST"]),
            Route("/items/{iid:int}/copy", g(self.copy), methods=["POST"]),
            Route("/items/{iid:int}/trash", g(self.trash_item), methods=["POST"]),
            Route("/items/{iid:int}/restore", g(self.restore_item), methods=["POST"]),
            Route("/items/{iid:int}/share", g(self.share), methods=["GET", "POST"]),
            Route("/items/{iid:int}/share/{pid:int}", g(self.change_share), methods=["POST"]),
            Route("/items/{iid:int}/link", g(self.link), methods=["POST"]),
            Route("/items/{iid:int}/versions", g(self.versions)),
            Route("/items/{iid:int}/versions/{number:int}/restore", g(self.restore_version), methods=["POST"]),
            Route("/shared", g(self.shared)),
            Route("/recent", g(self.recent)),
            Route("/starred", g(self.starred)),
            Route("/trash", g(self.trash)),
            Route("/trash/empty", g(self.empty_trash), methods=["GET", "POST"]),
            Route("/search", g(self.search)),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                result: Response = await handler(request)
                return result
            except Refused as exc:
                return self._page(self.t("Cannot do that"), f'<div class="alert" role="alert" data-error>{esc(self._refusal(exc))}</div>'
                                  f'<p><a href="/folders/1" data-action="back">{self.t("Back to My Drive")}</a></p>', status=exc.status)
        return run

    def t(self, text: str) -> str:
        """`text` in the variant's locale: the drive's own catalogue, then the shared one."""
        if self.variant.locale == "de-DE" and text in locale.DE:
            return locale.DE[text]
        return super().t(text)

    def _refusal(self, exc: Refused) -> str:
        """A refusal's sentence in the page's locale (the verb of `doing` translated too)."""
        return self.t(exc.message).format(**{k: self.t(v) if k == "doing" else v for k, v in exc.fields.items()})

    def _size(self, n: int) -> str:
        return locale.size(n, self.variant.locale)

    def _bytes(self, n: int) -> str:
        """`12,345 bytes` / `12.345 Bytes`."""
        return self.t("{n} bytes").format(n=locale.number(n, self.variant.locale))

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _people(self) -> dict[int, dict[str, Any]]:
        return {p["id"]: p for p in self.db.all("SELECT * FROM people ORDER BY id")}

    def _item(self, iid: int) -> dict[str, Any]:
        item = self.db.one("SELECT * FROM items WHERE id = ?", (iid,))
        if item is None or not self._visible(item):
            raise Refused("No such file or folder.", 404)
        return item

    def _ancestors(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """The folders above `item`, outermost first."""
        out: list[dict[str, Any]] = []
        parent = item["parent_id"]
        while parent is not None and len(out) < 64:
            row = self.db.one("SELECT * FROM items WHERE id = ?", (parent,))
            if row is None:
                break
            out.insert(0, row)
            parent = row["parent_id"]
        return out

    def _in_trash(self, item: dict[str, Any]) -> bool:
        return bool(item["trashed"]) or any(a["trashed"] for a in self._ancestors(item))

    def _visible(self, item: dict[str, Any]) -> bool:
        """Mine, or shared with me (itself or a folder above it)."""
        if item["owner_id"] == ME:
            return True
        chain = [item, *self._ancestors(item)]
        return any(self.db.scalar("SELECT 1 FROM shares WHERE item_id = ? AND person_id = ?", (i["id"], ME)) for i in chain)

    def _owned(self, iid: int, doing: str) -> dict[str, Any]:
        item = self._item(iid)
        if item["owner_id"] != ME:
            owner = self._people()[item["owner_id"]]["name"]
            raise Refused("Only the owner, {owner}, can {doing} “{name}”.", 403, owner=owner, doing=doing, name=item["name"])
        return item

    def _live_owned(self, iid: int, doing: str) -> dict[str, Any]:
        item = self._owned(iid, doing)
        if self._in_trash(item):
            raise Refused("“{name}” is in the trash: restore it first.", name=item["name"])
        return item

    def _folder(self, fid: int) -> dict[str, Any]:
        folder = self._item(fid)
        if folder["kind"] != "folder":
            raise Refused("That is a file, not a folder.", 404)
        return folder

    def used_bytes(self) -> int:
        """What counts against the quota: every file I own, the trash included (emptying it frees space)."""
        return int(self.db.scalar("SELECT COALESCE(SUM(size_bytes), 0) FROM items WHERE owner_id = ? AND kind = 'file'", (ME,)))

    def _check_quota(self, adding: int) -> None:
        quota = int(self.db.scalar("SELECT quota_bytes FROM settings WHERE id = 1"))
        free = max(0, quota - self.used_bytes())
        if adding > free:
            lang = self.variant.locale
            raise Refused("Not enough storage: this needs {need} ({need_bytes} bytes) and only {free} ({free_bytes} bytes) is free. "
                          "Empty the trash or delete files to make room.", need=self._size(adding), need_bytes=locale.number(adding, lang),
                          free=self._size(free), free_bytes=locale.number(free, lang))

    def _name_free(self, parent: int, name: str, but: int | None = None) -> None:
        clash = self.db.scalar("SELECT id FROM items WHERE parent_id = ? AND name = ? AND trashed = 0 AND id != ?",
                               (parent, name, but or 0))
        if clash is not None:
            raise Refused("“{name}” already exists in this folder: choose another name.", name=name)

    def _touch(self, iid: int) -> None:
        """A change of the file's content (a restored version): its modified time and who made it."""
        self.db.execute("UPDATE items SET modified_at = ?, modified_by = ? WHERE id = ?", (self._stamp(), ME, iid))

    def _log_share(self, iid: int, person: int | None, action: str, role: str = "") -> None:
        self.db.insert("INSERT INTO share_log (item_id, person_id, action, role, logged_at) VALUES (?,?,?,?,?)",
                       (iid, person, action, role, self._stamp()))

    # --- page parts ---

    def _page(self, title: str, body: str, *, current: int | None = None, status: int = 200) -> HTMLResponse:
        resp = html_page(self, title, f'<div class="drive" data-region="drive">{self._sidebar(current)}<div class="content" data-region="content">'
                         f'{self._searchbar()}<h1 class="page-title">{esc(title)}</h1>{body}</div></div>', nav=NAV)
        resp.status_code = status
        return resp

    def _searchbar(self, values: dict[str, str] | None = None) -> str:
        q = (values or {}).get("q", "")
        return ('<form class="searchbar" role="search" method="get" action="/search">'
                f'<input type="search" name="q" value="{esc(q)}" aria-label="{self.t("Search in Drive")}" placeholder="{self.t("Search in Drive")}" '
                f'data-field="search"><button type="submit" data-action="search">{self.t("Search")}</button></form>')

    def _sidebar(self, current: int | None) -> str:
        folders = self.db.all("SELECT id, parent_id, name FROM items WHERE kind = 'folder' AND owner_id = ? AND trashed = 0 "
                              "ORDER BY name COLLATE NOCASE", (ME,))
        children: dict[int | None, list[dict[str, Any]]] = {}
        for f in folders:
            children.setdefault(f["parent_id"], []).append(f)

        def node(f: dict[str, Any], level: int) -> str:
            kids = children.get(f["id"], [])
            expanded = ' aria-expanded="true"' if kids else ""
            selected = "true" if f["id"] == current else "false"
            group = f'<ul role="group">{"".join(node(k, level + 1) for k in kids)}</ul>' if kids else ""
            return (f'<li role="treeitem" aria-level="{level}" aria-selected="{selected}"{expanded} data-folder-id="{f["id"]}">'
                    f'<a href="/folders/{f["id"]}" data-tree-folder="{f["id"]}">{esc(self._folder_name(f))}</a>{group}</li>')

        root = next((f for f in folders if f["id"] == ROOT), None)
        tree = node(root, 1) if root else ""
        quota = int(self.db.scalar("SELECT quota_bytes FROM settings WHERE id = 1"))
        used = self.used_bytes()
        pct = min(100, round(used * 100 / quota)) if quota else 100
        t_ = self.t
        usage = t_("{used} of {quota} used · {free} free").format(used=self._size(used), quota=self._size(quota),
                                                                   free=self._size(max(0, quota - used)))
        return (f'<aside class="side" aria-label="{t_("Drive navigation")}" data-region="side">'
                f'<a class="button primary new" href="/folders/{current or ROOT}/upload" data-action="upload">{t_("Upload a file")}</a>'
                f'<ul role="tree" aria-label="{t_("Folders")}" class="tree">{tree}</ul>'
                f'<div class="storage" data-used-bytes="{used}" data-quota-bytes="{quota}" data-free-bytes="{max(0, quota - used)}">'
                f'<div role="meter" aria-label="{t_("Storage used")}" aria-valuemin="0" aria-valuemax="100" aria-valuenow="{pct}" '
                f'class="meter"><span style="width: {pct}%"></span></div>'
                f'<p>{esc(usage)}</p></div></aside>')

    def _date(self, stamp: str) -> str:
        day = stamp[:10]
        if day == self.now().date().isoformat():
            return stamp[11:16]
        return locale.date(dt.date.fromisoformat(day), self.variant.locale)

    def _icon(self, item: dict[str, Any]) -> str:
        return f'<span class="icon icon-{esc(item["type"])}" aria-hidden="true"></span>'

    def _href(self, item: dict[str, Any]) -> str:
        return f"/folders/{item['id']}" if item["kind"] == "folder" else f"/items/{item['id']}"

    def _attrs(self, item: dict[str, Any]) -> str:
        return (f'data-item-id="{item["id"]}" data-name="{esc(item["name"])}" data-kind="{item["kind"]}" data-type="{item["type"]}" '
                f'data-size-bytes="{item["size_bytes"]}" data-owner-id="{item["owner_id"]}" data-starred="{item["starred"]}" '
                f'data-label="{esc(item["label"])}" data-link="{item["link_access"]}"')

    def _star_button(self, item: dict[str, Any]) -> str:
        on = bool(item["starred"])
        return (f'<form method="post" action="/items/{item["id"]}/star" class="inline"><input type="hidden" name="starred" '
                f'value="{0 if on else 1}"><button type="submit" class="star" aria-pressed="{"true" if on else "false"}" '
                f'data-action="star" aria-label="{esc(self.t("Star {name}").format(name=item["name"]))}">{"★" if on else "☆"}</button></form>')

    def _listing(self, items: list[dict[str, Any]], view: str, *, trash: bool = False, location: bool = False) -> str:
        people = self._people()
        t_ = self.t
        if not items:
            return f'<p class="empty" data-empty>{t_("Nothing here.")}</p>'

        def badge(i: dict[str, Any]) -> str:
            out = f'<span class="badge conf" data-badge="confidential">{t_("Confidential")}</span>' if i["label"] == "confidential" else ""
            if i["link_access"] == "anyone":
                out += f'<span class="badge link" data-badge="link">{t_("Link")}</span>'
            return out

        def actions(i: dict[str, Any]) -> str:
            if trash:
                return (f'<form method="post" action="/items/{i["id"]}/restore" class="inline"><button type="submit" '
                        f'data-action="restore" aria-label="{esc(t_("Restore {name}").format(name=i["name"]))}">{t_("Restore")}</button></form>')
            return self._star_button(i) + (f'<a class="button ghost" href="/items/{i["id"]}" data-action="details" '
                                           f'aria-label="{esc(t_("Details of {name}").format(name=i["name"]))}">{t_("Details")}</a>')

        def where(i: dict[str, Any]) -> str:
            chain = self._ancestors(i)
            return " / ".join(self._folder_name(a) for a in chain) or t_("Shared with me")

        if view == "grid":
            cells = "".join(
                f'<div role="gridcell" class="tile" {self._attrs(i)}>{self._icon(i)}'
                f'<a class="name" href="{self._href(i)}">{esc(i["name"])}</a>{badge(i)}'
                f'<span class="meta">{"" if i["kind"] == "folder" else esc(self._size(i["size_bytes"]))}</span>{actions(i)}</div>'
                for i in items)
            return f'<div role="grid" aria-label="{t_("Files")}" class="grid" data-view="grid"><div role="row" class="tiles">{cells}</div></div>'
        loc_head = f'<th scope="col">{t_("Location")}</th>' if location else ""
        rows = "".join(
            f'<tr {self._attrs(i)}><td class="name">{self._icon(i)}<a href="{self._href(i)}">{esc(i["name"])}</a>{badge(i)}</td>'
            f'<td data-owner>{t_("me") if i["owner_id"] == ME else esc(people[i["owner_id"]]["name"])}</td>'
            + (f'<td class="loc">{esc(where(i))}</td>' if location else "")
            + f'<td data-modified="{esc(i["modified_at"])}">{esc(self._date(i["modified_at"]))}</td>'
            f'<td class="size" title="{esc(self._bytes(i["size_bytes"]))}">{"—" if i["kind"] == "folder" else esc(self._size(i["size_bytes"]))}</td>'
            f'<td class="acts">{actions(i)}</td></tr>' for i in items)
        return (f'<table class="files" aria-label="{t_("Files")}" data-view="list"><thead><tr><th scope="col">{t_("Name")}</th>'
                f'<th scope="col">{t_("Owner")}</th>'
                f'{loc_head}<th scope="col">{t_("Deleted" if trash else "Modified")}</th><th scope="col">{t_("Size")}</th><th scope="col">'
                f'<span class="sr-only">{t_("Actions")}</span></th></tr></thead><tbody>{rows}</tbody></table>')

    def _folder_name(self, folder: dict[str, Any]) -> str:
        """A folder's name as shown: the root is `My Drive` in every locale's words; the others are data."""
        return self.t(folder["name"]) if folder["id"] == ROOT else str(folder["name"])

    def _view_switch(self, base: str, view: str, joiner: str = "?") -> str:
        return (f'<div class="views" role="group" aria-label="{self.t("View")}">'
                + "".join(f'<a class="button ghost" href="{esc(base)}{joiner}view={v}" data-view-switch="{v}" '
                          f'aria-pressed="{"true" if view == v else "false"}">{self.t(label)}</a>' for v, label in (("list", "List"), ("grid", "Grid")))
                + "</div>")

    @staticmethod
    def _view(q: dict[str, Any]) -> str:
        return "grid" if q.get("view") == "grid" else "list"

    def _error(self, error: str) -> str:
        return f'<div class="alert" role="alert" data-error>{esc(error)}</div>' if error else ""

    # --- folders ---

    async def home(self, _: Request) -> Response:
        return RedirectResponse(f"/folders/{ROOT}", status_code=303)

    async def folder(self, request: Request) -> Response:
        folder = self._folder(request.path_params["fid"])
        if self._in_trash(folder):
            raise Refused("“{name}” is in the trash: restore it to open it.", 404, name=folder["name"])
        view = self._view(self.query(request))
        items = self.db.all("SELECT * FROM items WHERE parent_id = ? AND trashed = 0 ORDER BY kind = 'file', name COLLATE NOCASE",
                            (folder["id"],))
        crumbs = [*self._ancestors(folder), folder]
        trail = "".join(f'<li><a href="/folders/{c["id"]}" data-crumb="{c["id"]}">{esc(self._folder_name(c))}</a></li>' for c in crumbs[:-1])
        trail += f'<li aria-current="page" data-crumb="{folder["id"]}">{esc(self._folder_name(folder))}</li>'
        mine = folder["owner_id"] == ME
        t_ = self.t
        tools = (f'<form method="post" action="/folders/{folder["id"]}/new" class="newfolder"><label for="nf-name">{t_("New folder")}</label>'
                 f'<input id="nf-name" name="name" required maxlength="255" data-field="folder-name" placeholder="{t_("Folder name")}">'
                 f'<button type="submit" data-action="new-folder">{t_("Create folder")}</button></form>') if mine else ""
        body = (f'<nav aria-label="{t_("Breadcrumb")}" class="crumbs"><ol>{trail}</ol></nav>'
                f'<div class="toolbar">{tools}{self._view_switch("/folders/" + str(folder["id"]), view)}</div>'
                f'<div data-folder="{folder["id"]}">{self._listing(items, view)}</div>')
        return self._page(self._folder_name(folder), body, current=folder["id"])

    async def new_folder(self, request: Request) -> Response:
        parent = self._live_owned(request.path_params["fid"], "add to")
        if parent["kind"] != "folder":
            raise Refused("That is a file, not a folder.", 404)
        name = clean_name(str((await request.form()).get("name", "") or ""))
        self._name_free(parent["id"], name)
        stamp = self._stamp()
        fid = self.db.insert("INSERT INTO items (parent_id, kind, name, type, owner_id, created_at, modified_at, modified_by) "
                             "VALUES (?, 'folder', ?, 'folder', ?, ?, ?, ?)", (parent["id"], name, ME, stamp, stamp, ME))
        return RedirectResponse(f"/folders/{fid}", status_code=303)

    async def upload(self, request: Request) -> Response:
        folder = self._live_owned(request.path_params["fid"], "upload to")
        if folder["kind"] != "folder":
            raise Refused("That is a file, not a folder.", 404)
        error, name, content = "", "", ""
        if request.method == "POST":
            async with request.form() as form:  # closes a chosen file's spooled copy
                name = str(form.get("name", "") or "").strip()
                content = str(form.get("content", "") or "")
                chosen = form.get("file")
                data = await chosen.read(MAX_UPLOAD + 1) if chosen is not None and not isinstance(chosen, str) and chosen.filename else None
                chosen_name = chosen.filename if chosen is not None and not isinstance(chosen, str) else None
            try:
                if data is not None:
                    if len(data) > MAX_UPLOAD:
                        raise Refused("A file to upload here is at most 1 MB.")
                    try:
                        content = data.decode("utf-8")
                    except UnicodeDecodeError:
                        raise Refused("The chosen file is not UTF-8 text.") from None
                    name = name or chosen_name or ""
                name = clean_name(name)
                typ = upload_type(name)
                content = content.replace("\r\n", "\n")
                size = len(content.encode("utf-8"))
                if size > MAX_UPLOAD:
                    raise Refused("A file to upload here is at most 1 MB.")
                self._name_free(folder["id"], name)
                self._check_quota(size)
            except Refused as exc:
                error = self._refusal(exc)
            else:
                stamp = self._stamp()
                iid = self.db.insert("INSERT INTO items (parent_id, kind, name, type, mime, size_bytes, owner_id, created_at, modified_at, "
                                     "modified_by) VALUES (?, 'file', ?, ?, ?, ?, ?, ?, ?, ?)",
                                     (folder["id"], name, typ, TYPES[typ][1], size, ME, stamp, stamp, ME))
                self.db.insert("INSERT INTO versions (item_id, number, size_bytes, content, author_id, created_at, note) "
                               "VALUES (?, 1, ?, ?, ?, ?, 'Uploaded')", (iid, size, content, ME, stamp))
                return RedirectResponse(f"/items/{iid}", status_code=303)
        t_ = self.t
        body = (self._error(error) +
                f'<div class="dialog" role="dialog" aria-labelledby="up-h" aria-modal="true"><h2 id="up-h">'
                f'{esc(t_("Upload to {folder}").format(folder=self._folder_name(folder)))}</h2>'
                f'<form method="post" action="/folders/{folder["id"]}/upload" enctype="multipart/form-data" class="form" data-form="upload">'
                f'<label for="up-name">{t_("File name")}</label><input id="up-name" name="name" value="{esc(name)}" maxlength="255" '
                'placeholder="notes.txt" data-field="name">'
                f'<label for="up-content">{t_("Content")}</label><textarea id="up-content" name="content" rows="10" data-field="content">{esc(content)}</textarea>'
                f'<label for="up-file">{t_("Or choose a text file")}</label><input id="up-file" type="file" name="file" accept=".txt,.md,.csv,text/plain,text/csv" data-field="file">'
                f'<p class="muted">{t_("Text files only (.txt, .md, .csv), up to 1 MB. The file counts against your storage.")}</p>'
                f'<div class="row"><button type="submit" class="primary" data-action="confirm-upload">{t_("Upload")}</button>'
                f'<a class="button" href="/folders/{folder["id"]}" data-action="cancel">{t_("Cancel")}</a></div></form></div>')
        return self._page(t_("Upload a file"), body, current=folder["id"], status=400 if error else 200)

    # --- an item ---

    async def details(self, request: Request) -> Response:
        item = self._item(request.path_params["iid"])
        people = self._people()
        chain = self._ancestors(item)
        t_ = self.t
        location = " / ".join(self._folder_name(a) for a in chain) or t_("Shared with me")
        trashed = self._in_trash(item)
        mine = item["owner_id"] == ME
        shares = self.db.all("SELECT s.*, p.name FROM shares s JOIN people p ON p.id = s.person_id WHERE s.item_id = ? ORDER BY p.name",
                             (item["id"],))
        access = ", ".join(f'{s["name"]} ({t_(s["role"])})' for s in shares) or t_("Only the owner")
        size = "—" if item["kind"] == "folder" else f'{self._size(item["size_bytes"])} ({self._bytes(item["size_bytes"])})'
        modifier = people.get(item["modified_by"] or item["owner_id"], people[item["owner_id"]])
        iid = item["id"]
        if trashed:
            acts = (f'<form method="post" action="/items/{iid}/restore" class="inline"><button type="submit" class="primary" '
                    f'data-action="restore" aria-label="{esc(t_("Restore {name}").format(name=item["name"]))}">{t_("Restore")}</button></form>'
                    if item["trashed"] and mine else "")
        else:
            acts = self._star_button(item)
            if item["kind"] == "folder":
                acts += f'<a class="button" href="/folders/{iid}" data-action="open">{t_("Open")}</a>'
            else:
                acts += (f'<form method="post" action="/items/{iid}/copy" class="inline"><button type="submit" data-action="copy">'
                         f'{t_("Make a copy")}</button></form>'
                         f'<a class="button" href="/items/{iid}/versions" data-action="versions">{t_("Version history")}</a>')
            if mine:
                acts += (f'<a class="button primary" href="/items/{iid}/share" data-action="share">{t_("Share")}</a>'
                         f'<a class="button" href="/items/{iid}/rename" data-action="rename">{t_("Rename")}</a>'
                         f'<a class="button" href="/items/{iid}/move" data-action="move">{t_("Move")}</a>'
                         f'<form method="post" action="/items/{iid}/trash" class="inline"><button type="submit" class="danger" '
                         f'data-action="trash">{t_("Move to trash")}</button></form>')
        badges = (f'<span class="badge conf" data-badge="confidential">{t_("Confidential")}</span>' if item["label"] == "confidential" else "")
        modified = t_("{date} by {name}").format(date=self._date(item["modified_at"]), name=modifier["name"])
        info = (f'<dl class="facts" {self._attrs(item)}><dt>{t_("Type")}</dt><dd data-fact="type">{esc(self._type_label(item["type"]))}</dd>'
                f'<dt>{t_("Size")}</dt><dd data-fact="size">{esc(size)}</dd>'
                f'<dt>{t_("Owner")}</dt><dd data-fact="owner">{esc(people[item["owner_id"]]["name"])}{" " + t_("(me)") if mine else ""}</dd>'
                f'<dt>{t_("Modified")}</dt><dd data-fact="modified">{esc(modified)}</dd>'
                f'<dt>{t_("Created")}</dt><dd>{esc(self._date(item["created_at"]))}</dd>'
                f'<dt>{t_("Location")}</dt><dd data-fact="location">{esc(location)}{" " + t_("(in the trash)") if trashed else ""}</dd>'
                f'<dt>{t_("Who has access")}</dt><dd data-fact="access">{esc(access)}</dd>'
                f'<dt>{t_("Link sharing")}</dt><dd data-fact="link">'
                f'{t_("Anyone with the link can view" if item["link_access"] == "anyone" else "Restricted")}</dd></dl>')
        body = (f'<div class="badges">{badges}</div><div class="actions" role="toolbar" aria-label="{t_("File actions")}">{acts}</div>'
                f'<div class="detail">{info}<section class="preview" aria-label="{t_("Preview")}">{self._preview(item)}</section></div>')
        return self._page(item["name"], body, current=chain[-1]["id"] if chain and chain[-1]["owner_id"] == ME else None)

    def _type_label(self, typ: str) -> str:
        return self.t(TYPE_LABELS.get(typ, typ))

    def _content(self, item: dict[str, Any]) -> str:
        return str(self.db.scalar("SELECT content FROM versions WHERE item_id = ? ORDER BY number DESC LIMIT 1", (item["id"],)) or "")

    def _preview(self, item: dict[str, Any]) -> str:
        if item["type"] == "text":
            return f'<pre data-preview="text">{esc(self._content(item))}</pre>'
        if item["type"] == "csv":
            rows = list(csv.reader(io.StringIO(self._content(item))))
            if not rows:
                return f'<p data-preview="csv">{self.t("An empty CSV file.")}</p>'
            head = "".join(f'<th scope="col">{esc(c)}</th>' for c in rows[0])
            body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows[1:101])
            more = (f'<p class="muted">{self.t("Showing 100 of {n} rows.").format(n=locale.number(len(rows) - 1, self.variant.locale))}</p>'
                    if len(rows) > 101 else "")
            return f'<table class="csv" data-preview="csv"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}'
        if item["type"] == "image":
            alt = esc(self.t("Preview of {name}").format(name=item["name"]))
            return f'<img data-preview="image" src="/items/{item["id"]}/raw" alt="{alt}" width="480" height="320">'
        return f'<p class="muted" data-preview="none">{esc(self.t("No preview for {type} files.").format(type=self._type_label(item["type"])))}</p>'

    async def raw(self, request: Request) -> Response:
        item = self._item(request.path_params["iid"])
        if item["type"] in ("text", "csv"):
            return Response(self._content(item), media_type="text/plain; charset=utf-8")
        if item["type"] != "image":
            raise Refused("This file has no preview.", 404)
        digest = hashlib.sha256(f"{item['id']}:{item['name']}".encode()).digest()
        hues = [digest[i] * 360 // 256 for i in range(3)]
        shapes = "".join(f'<circle cx="{60 + digest[3 + k] * 360 // 256}" cy="{40 + digest[6 + k] * 240 // 256}" r="{30 + digest[9 + k] % 70}" '
                         f'fill="hsl({hues[k]} 60% 60%)" opacity="0.8"/>' for k in range(3))
        svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="480" height="320" viewBox="0 0 480 320">'
               f'<rect width="480" height="320" fill="hsl({hues[0]} 40% 85%)"/>{shapes}</svg>')
        return Response(svg, media_type="image/svg+xml")

    async def star(self, request: Request) -> Response:
        item = self._item(request.path_params["iid"])
        if self._in_trash(item):
            raise Refused("“{name}” is in the trash: restore it first.", name=item["name"])
        on = str((await request.form()).get("starred", "")) == "1"
        self.db.execute("UPDATE items SET starred = ? WHERE id = ?", (int(on), item["id"]))
        back = urlsplit(request.headers.get("referer", ""))  # back to the page the star was on, on this app only
        path = back.path + (f"?{back.query}" if back.query else "")
        if back.netloc != request.headers.get("host") or not path.startswith("/") or path.startswith("//"):
            path = self._href(item)
        return RedirectResponse(path, status_code=303)

    async def rename(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "rename")
        error, value = "", item["name"]
        if request.method == "POST":
            value = str((await request.form()).get("name", "") or "")
            try:
                name = clean_name(value)
                if item["parent_id"] is not None:
                    self._name_free(item["parent_id"], name, but=item["id"])
            except Refused as exc:
                error = self._refusal(exc)
            else:
                if name != item["name"]:  # a new name is no new content: the modified time stays
                    self.db.execute("UPDATE items SET name = ? WHERE id = ?", (name, item["id"]))
                return RedirectResponse(self._href(item), status_code=303)
        t_ = self.t
        body = (self._error(error) + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="rn-h"><h2 id="rn-h">{t_("Rename")}</h2>'
                f'<form method="post" action="/items/{item["id"]}/rename" class="form" data-form="rename">'
                f'<label for="rn-name">{t_("New name")}</label><input id="rn-name" name="name" value="{esc(value)}" required maxlength="255" data-field="name">'
                f'<div class="row"><button type="submit" class="primary" data-action="save-rename">{t_("Rename")}</button>'
                f'<a class="button" href="{self._href(item)}" data-action="cancel">{t_("Cancel")}</a></div></form></div>')
        return self._page(t_("Rename {name}").format(name=item["name"]), body, status=400 if error else 200)

    def _descendant_ids(self, iid: int) -> set[int]:
        rows = self.db.all("WITH RECURSIVE d(id) AS (SELECT ? UNION ALL SELECT i.id FROM items i JOIN d ON i.parent_id = d.id) "
                           "SELECT id FROM d", (iid,))
        return {r["id"] for r in rows}

    async def move(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "move")
        if item["id"] == ROOT:
            raise Refused("My Drive itself cannot be moved.")
        error = ""
        if request.method == "POST":
            raw = str((await request.form()).get("target", "") or "")
            try:
                if not raw.isdigit():
                    raise Refused("Choose a folder to move it to.")
                target = self._folder(int(raw))
                if target["owner_id"] != ME or self._in_trash(target):
                    raise Refused("Choose one of your folders in My Drive.")
                if target["id"] in self._descendant_ids(item["id"]):
                    raise Refused("A folder cannot move into itself or into a folder inside it.")
                if target["id"] == item["parent_id"]:
                    raise Refused("“{name}” is already in “{target}”.", name=item["name"], target=self._folder_name(target))
                self._name_free(target["id"], item["name"])
            except Refused as exc:
                error = self._refusal(exc)
            else:
                self.db.execute("UPDATE items SET parent_id = ? WHERE id = ?", (target["id"], item["id"]))
                return RedirectResponse(f"/folders/{target['id']}", status_code=303)
        blocked = self._descendant_ids(item["id"])
        folders = self.db.all("SELECT id, parent_id, name FROM items WHERE kind = 'folder' AND owner_id = ? AND trashed = 0 "
                              "ORDER BY name COLLATE NOCASE", (ME,))
        children: dict[int | None, list[dict[str, Any]]] = {}
        for f in folders:
            children.setdefault(f["parent_id"], []).append(f)

        def node(f: dict[str, Any], level: int) -> str:
            kids = children.get(f["id"], [])
            off = f["id"] in blocked
            here = self.t(" (current location)") if f["id"] == item["parent_id"] else ""
            group = f'<ul role="group">{"".join(node(k, level + 1) for k in kids)}</ul>' if kids else ""
            expanded = ' aria-expanded="true"' if kids else ""
            return (f'<li role="treeitem" aria-level="{level}"{expanded} aria-selected="false" '
                    f'data-folder-id="{f["id"]}"><label class="pick"><input type="radio" name="target" value="{f["id"]}" '
                    f'data-target="{f["id"]}" aria-label="{esc(self._folder_name(f))}{esc(here)}"{" disabled" if off else ""}> '
                    f'{esc(self._folder_name(f))}{esc(here)}</label>{group}</li>')

        root = next((f for f in folders if f["id"] == ROOT), None)
        t_ = self.t
        body = (self._error(error) + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="mv-h">'
                f'<h2 id="mv-h">{esc(t_("Move “{name}” to…").format(name=item["name"]))}</h2>'
                f'<form method="post" action="/items/{item["id"]}/move" class="form" data-form="move">'
                f'<ul role="tree" aria-label="{t_("Choose a folder")}" class="tree picker">{node(root, 1) if root else ""}</ul>'
                f'<div class="row"><button type="submit" class="primary" data-action="confirm-move">{t_("Move here")}</button>'
                f'<a class="button" href="{self._href(item)}" data-action="cancel">{t_("Cancel")}</a></div></form></div>')
        return self._page(t_("Move {name}").format(name=item["name"]), body, status=400 if error else 200)

    async def copy(self, request: Request) -> Response:
        item = self._item(request.path_params["iid"])
        if item["kind"] != "file":
            raise Refused("Folders cannot be copied: copy the files inside them.")
        if self._in_trash(item):
            raise Refused("“{name}” is in the trash: restore it first.", name=item["name"])
        parent = item["parent_id"] if item["owner_id"] == ME else ROOT
        self._check_quota(item["size_bytes"])
        name, n = f"Copy of {item['name']}", 2
        while self.db.scalar("SELECT 1 FROM items WHERE parent_id = ? AND name = ? AND trashed = 0", (parent, name)):
            name, n = f"Copy {n} of {item['name']}", n + 1
        stamp = self._stamp()
        new = self.db.insert("INSERT INTO items (parent_id, kind, name, type, mime, size_bytes, owner_id, created_at, modified_at, modified_by, label) "
                             "VALUES (?, 'file', ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (parent, name, item["type"], item["mime"], item["size_bytes"], ME, stamp, stamp, ME, item["label"]))
        self.db.insert("INSERT INTO versions (item_id, number, size_bytes, content, author_id, created_at, note) VALUES (?, 1, ?, ?, ?, ?, ?)",
                       (new, item["size_bytes"], self._content(item), ME, stamp, f"Copied from {item['name']}"))
        return RedirectResponse(f"/items/{new}", status_code=303)

    async def trash_item(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "delete")
        if item["id"] == ROOT:
            raise Refused("My Drive itself cannot be deleted.")
        self.db.execute("UPDATE items SET trashed = 1, trashed_at = ? WHERE id = ?", (self._stamp(), item["id"]))
        return RedirectResponse(f"/folders/{item['parent_id'] or ROOT}", status_code=303)

    async def restore_item(self, request: Request) -> Response:
        item = self._owned(request.path_params["iid"], "restore")
        if not item["trashed"]:
            raise Refused("“{name}” is not in the trash.", name=item["name"])
        parent = item["parent_id"]
        above = self.db.one("SELECT * FROM items WHERE id = ?", (parent,)) if parent is not None else None
        if above is None or self._in_trash(above):
            parent = ROOT  # its folder is gone or in the trash too: it comes back to My Drive
        name, n = item["name"], 2
        stem, ext = Path(item["name"]).stem, Path(item["name"]).suffix
        while self.db.scalar("SELECT 1 FROM items WHERE parent_id = ? AND name = ? AND trashed = 0 AND id != ?", (parent, name, item["id"])):
            name, n = f"{stem} ({n}){ext}", n + 1
        self.db.execute("UPDATE items SET trashed = 0, trashed_at = NULL, parent_id = ?, name = ? WHERE id = ?", (parent, name, item["id"]))
        return RedirectResponse("/trash", status_code=303)

    # --- sharing ---

    async def share(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "share")
        people = self._people()
        error = ""
        if request.method == "POST":
            form = await request.form()
            raw, role = str(form.get("person", "") or "").strip(), str(form.get("role", "") or "")
            try:
                match = [p for p in people.values() if raw and (str(p["id"]) == raw or p["email"].lower() == raw.lower())]
                if not match:
                    raise Refused("Choose a person from the list (or type their email address exactly).")
                person = match[0]
                if person["id"] == ME:
                    raise Refused("You own this file already.")
                if role not in ROLES:
                    raise Refused("Choose what they can do: viewer, commenter or editor.")
                if self.db.scalar("SELECT 1 FROM shares WHERE item_id = ? AND person_id = ?", (item["id"], person["id"])):
                    raise Refused("{name} already has access: change their role in the list below.", name=person["name"])
            except Refused as exc:
                error = self._refusal(exc)
            else:
                self.db.insert("INSERT INTO shares (item_id, person_id, role, created_at) VALUES (?,?,?,?)",
                               (item["id"], person["id"], role, self._stamp()))
                self._log_share(item["id"], person["id"], "add", role)
                return RedirectResponse(f"/items/{item['id']}/share", status_code=303)
        shares = self.db.all("SELECT s.*, p.name, p.email FROM shares s JOIN people p ON p.id = s.person_id WHERE s.item_id = ? "
                             "ORDER BY p.name", (item["id"],))
        have = {s["person_id"] for s in shares}

        t_ = self.t

        def row(s: dict[str, Any]) -> str:
            opts = "".join(f'<option value="{r}"{" selected" if r == s["role"] else ""}>{t_(r.title())}</option>' for r in ROLES)
            return (f'<li class="person" data-share-person="{s["person_id"]}" data-role="{s["role"]}"><span><strong>{esc(s["name"])}</strong>'
                    f'<span class="muted">{esc(s["email"])}</span></span>'
                    f'<form method="post" action="/items/{item["id"]}/share/{s["person_id"]}" class="inline">'
                    f'<select name="role" aria-label="{esc(t_("Role of {name}").format(name=s["name"]))}" data-role-of="{s["person_id"]}">{opts}'
                    f'<option value="remove">{t_("Remove access")}</option></select>'
                    f'<button type="submit" data-action="save-access" aria-label="{esc(t_("Update access for {name}").format(name=s["name"]))}">'
                    f'{t_("Save")}</button></form></li>')

        owner = people[ME]
        choices = f'<option value="">{t_("Choose a person…")}</option>' + "".join(
            f'<option value="{p["id"]}">{esc(p["name"])} ({esc(p["email"])})</option>' for p in people.values()
            if p["id"] != ME and p["id"] not in have)
        roles = "".join(f'<option value="{r}"{" selected" if r == "viewer" else ""}>{t_(r.title())}</option>' for r in ROLES)
        anyone = item["link_access"] == "anyone"
        warn = (f'<p class="warn" role="note" data-confidential-warning>{t_("This file is labelled Confidential.")}</p>'
                if item["label"] == "confidential" else "")
        body = (self._error(error) + f'<div class="dialog" role="dialog" aria-modal="true" aria-labelledby="sh-h">'
                f'<h2 id="sh-h">{esc(t_("Share “{name}”").format(name=item["name"]))}</h2>{warn}'
                f'<form method="post" action="/items/{item["id"]}/share" class="form addshare" data-form="share">'
                f'<label for="sh-person">{t_("Add people")}</label><select id="sh-person" name="person" data-field="person">{choices}</select>'
                f'<label for="sh-role">{t_("Role")}</label><select id="sh-role" name="role" data-field="role">{roles}</select>'
                f'<button type="submit" class="primary" data-action="add-share">{t_("Share")}</button></form>'
                f'<h3>{t_("People with access")}</h3><ul class="people" aria-label="{t_("People with access")}"><li class="person owner">'
                f'<span><strong>{esc(owner["name"])}</strong><span class="muted">{esc(owner["email"])}</span></span><span>{t_("Owner")}</span></li>'
                f'{"".join(row(s) for s in shares)}</ul>'
                f'<h3>{t_("General access")}</h3>'
                f'<form method="post" action="/items/{item["id"]}/link" class="linkform"><input type="hidden" name="anyone" value="{0 if anyone else 1}">'
                f'<button type="submit" role="switch" aria-checked="{"true" if anyone else "false"}" data-action="link-toggle" '
                f'data-link="{item["link_access"]}">{t_("Anyone with the link can view")}</button>'
                f'<span class="muted">{t_("On: anyone who has the link can open it." if anyone else "Off: only the people above can open it.")}</span></form>'
                f'<p><a class="button" href="/items/{item["id"]}" data-action="done">{t_("Done")}</a></p></div>')
        return self._page(t_("Share {name}").format(name=item["name"]), body, status=400 if error else 200)

    async def change_share(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "share")
        pid = request.path_params["pid"]
        share = self.db.one("SELECT * FROM shares WHERE item_id = ? AND person_id = ?", (item["id"], pid))
        if share is None:
            raise Refused("That person has no access to change.", 404)
        role = str((await request.form()).get("role", "") or "")
        if role == "remove":
            self.db.execute("DELETE FROM shares WHERE id = ?", (share["id"],))
            self._log_share(item["id"], pid, "remove", share["role"])
        elif role in ROLES:
            if role != share["role"]:
                self.db.execute("UPDATE shares SET role = ? WHERE id = ?", (role, share["id"]))
                self._log_share(item["id"], pid, "change", role)
        else:
            raise Refused("Choose viewer, commenter, editor, or remove access.")
        return RedirectResponse(f"/items/{item['id']}/share", status_code=303)

    async def link(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "share")
        anyone = str((await request.form()).get("anyone", "")) == "1"
        value = "anyone" if anyone else "restricted"
        if value != item["link_access"]:
            self.db.execute("UPDATE items SET link_access = ? WHERE id = ?", (value, item["id"]))
            self._log_share(item["id"], None, "link_on" if anyone else "link_off", "viewer" if anyone else "")
        return RedirectResponse(f"/items/{item['id']}/share", status_code=303)

    # --- versions ---

    async def versions(self, request: Request) -> Response:
        item = self._item(request.path_params["iid"])
        if item["kind"] != "file":
            raise Refused("Folders have no versions.")
        people = self._people()
        rows = self.db.all("SELECT * FROM versions WHERE item_id = ? ORDER BY number DESC", (item["id"],))
        can = item["owner_id"] == ME and not self._in_trash(item)
        t_ = self.t

        def row(v: dict[str, Any], current: bool) -> str:
            when = self._date(v["created_at"]) + ("" if v["created_at"][:10] == self.now().date().isoformat() else f' {v["created_at"][11:16]}')
            act = (f'<span class="badge" data-current>{t_("Current")}</span>' if current else
                   (f'<form method="post" action="/items/{item["id"]}/versions/{v["number"]}/restore" class="inline"><button type="submit" '
                    f'data-action="restore-version" aria-label="{t_("Restore version {n}").format(n=v["number"])}">{t_("Restore")}</button></form>'
                    if can else ""))
            return (f'<tr data-version="{v["number"]}" data-created="{esc(v["created_at"])}" data-size-bytes="{v["size_bytes"]}">'
                    f'<td>{t_("Version {n}").format(n=v["number"])}</td><td>{esc(when)}</td><td>{esc(people[v["author_id"]]["name"])}</td>'
                    f'<td title="{esc(self._bytes(v["size_bytes"]))}">{esc(self._size(v["size_bytes"]))}</td><td>{esc(v["note"])}</td><td>{act}</td></tr>')

        body = (f'<table class="files versions" aria-label="{t_("Versions")}"><thead><tr><th scope="col">{t_("Version")}</th>'
                f'<th scope="col">{t_("Saved")}</th><th scope="col">{t_("By")}</th><th scope="col">{t_("Size")}</th><th scope="col">{t_("Note")}</th>'
                f'<th scope="col"><span class="sr-only">{t_("Actions")}</span></th>'
                f'</tr></thead><tbody>{"".join(row(v, k == 0) for k, v in enumerate(rows))}</tbody></table>'
                f'<p><a class="button" href="/items/{item["id"]}" data-action="back-to-file">{t_("Back to the file")}</a></p>')
        return self._page(t_("Versions of {name}").format(name=item["name"]), body)

    async def restore_version(self, request: Request) -> Response:
        item = self._live_owned(request.path_params["iid"], "restore a version of")
        number = request.path_params["number"]
        old = self.db.one("SELECT * FROM versions WHERE item_id = ? AND number = ?", (item["id"], number))
        if old is None:
            raise Refused("No such version.", 404)
        latest = int(self.db.scalar("SELECT MAX(number) FROM versions WHERE item_id = ?", (item["id"],)))
        if number == latest:
            raise Refused("That version is the current one already.")
        if old["size_bytes"] > item["size_bytes"]:
            self._check_quota(old["size_bytes"] - item["size_bytes"])
        stamp = self._stamp()
        self.db.insert("INSERT INTO versions (item_id, number, size_bytes, content, author_id, created_at, note) VALUES (?,?,?,?,?,?,?)",
                       (item["id"], latest + 1, old["size_bytes"], old["content"], ME, stamp, f"Restored from version {number}"))
        self.db.execute("UPDATE items SET size_bytes = ? WHERE id = ?", (old["size_bytes"], item["id"]))
        self._touch(item["id"])
        return RedirectResponse(f"/items/{item['id']}/versions", status_code=303)

    # --- views ---

    def _visible_items(self, where: str, params: tuple[Any, ...] = (), order: str = "name COLLATE NOCASE", limit: int = 500) -> list[dict[str, Any]]:
        rows = self.db.all(f"SELECT * FROM items WHERE parent_id IS NOT NULL OR owner_id != {ME} ORDER BY {order}")
        chosen = self.db.all(f"SELECT id FROM items WHERE {where}", params)
        keep = {r["id"] for r in chosen}
        out = [r for r in rows if r["id"] in keep and self._visible(r) and not self._in_trash(r)]
        return out[:limit]

    async def shared(self, request: Request) -> Response:
        view = self._view(self.query(request))
        items = self.db.all("SELECT i.* FROM items i JOIN shares s ON s.item_id = i.id AND s.person_id = ? WHERE i.owner_id != ? "
                            "AND i.trashed = 0 ORDER BY i.modified_at DESC, i.id", (ME, ME))
        return self._page(self.t("Shared with me"), self._view_switch("/shared", view) + self._listing(items, view, location=False))

    async def recent(self, request: Request) -> Response:
        view = self._view(self.query(request))
        items = self._visible_items("kind = 'file'", order="modified_at DESC, id DESC", limit=40)
        return self._page(self.t("Recent"), self._view_switch("/recent", view) + self._listing(items, view, location=True))

    async def starred(self, request: Request) -> Response:
        view = self._view(self.query(request))
        items = self._visible_items("starred = 1")
        return self._page(self.t("Starred"), self._view_switch("/starred", view) + self._listing(items, view, location=True))

    async def trash(self, request: Request) -> Response:
        items = self.db.all("SELECT * FROM items WHERE trashed = 1 AND owner_id = ? ORDER BY trashed_at DESC, id DESC", (ME,))
        for i in items:
            i["modified_at"] = i["trashed_at"] or i["modified_at"]
        t_ = self.t
        empty = (f'<a class="button danger" href="/trash/empty" data-action="empty-trash">{t_("Empty trash")}</a>' if items else "")
        body = (f'<p class="muted">{t_("Items in the trash still count against your storage.")} {empty}</p>'
                + self._listing(items, "list", trash=True))
        return self._page(t_("Trash"), body)

    async def empty_trash(self, request: Request) -> Response:
        top = self.db.all("SELECT id FROM items WHERE trashed = 1 AND owner_id = ?", (ME,))
        if not top:
            raise Refused("The trash is already empty.")
        doomed: set[int] = set()
        for t in top:
            doomed |= self._descendant_ids(t["id"])
        if request.method == "POST":
            marks = ",".join("?" * len(doomed))
            ids = tuple(sorted(doomed))
            self.db.execute(f"DELETE FROM versions WHERE item_id IN ({marks})", ids)
            self.db.execute(f"DELETE FROM shares WHERE item_id IN ({marks})", ids)
            self.db.execute(f"UPDATE items SET parent_id = NULL WHERE id IN ({marks})", ids)
            self.db.execute(f"DELETE FROM items WHERE id IN ({marks})", ids)
            return RedirectResponse("/trash", status_code=303)
        size = int(self.db.scalar(f"SELECT COALESCE(SUM(size_bytes), 0) FROM items WHERE id IN ({','.join('?' * len(doomed))})",
                                  tuple(doomed)))
        t_ = self.t
        body = ('<div class="dialog" role="alertdialog" aria-modal="true" aria-labelledby="et-h" aria-describedby="et-d">'
                f'<h2 id="et-h">{t_("Delete {n} items forever?").format(n=len(doomed))}</h2><p id="et-d">'
                f'{esc(t_("Everything in the trash is deleted for good ({size}). This cannot be undone.").format(size=self._size(size)))}</p>'
                '<form method="post" action="/trash/empty" class="row">'
                f'<button type="submit" class="danger" data-action="confirm-empty">{t_("Delete forever")}</button>'
                f'<a class="button" href="/trash" data-action="keep">{t_("Cancel")}</a></form></div>')
        return self._page(t_("Empty trash"), body)

    async def search(self, request: Request) -> Response:
        q = {k: str(v or "") for k, v in self.query(request).items()}  # an absent parameter reads as None
        where: list[str] = ["1 = 1"]
        params: list[Any] = []
        error = ""
        if q["q"]:
            where.append("name LIKE ?")
            params.append(f"%{q['q']}%")
        if q["type"]:
            if q["type"] not in TYPE_LABELS:
                error = self.t("Choose a type from the list, not {value!r}.").format(value=q["type"])
            else:
                where.append("type = ?")
                params.append(q["type"])
        if q["owner"]:
            if q["owner"] == "me":
                where.append(f"owner_id = {ME}")
            elif q["owner"] == "others":
                where.append(f"owner_id != {ME}")
            elif q["owner"].isdigit() and int(q["owner"]) in self._people():
                where.append("owner_id = ?")
                params.append(int(q["owner"]))
            else:
                error = self.t("Choose an owner from the list.")
        if q["modified"]:
            if q["modified"] not in MODIFIED:
                error = self.t("Choose a time from the list.")
            else:
                days = 0 if q["modified"] == "today" else int(q["modified"])
                since = (self.now().date() - dt.timedelta(days=days)).isoformat()
                where.append("substr(modified_at, 1, 10) >= ?")
                params.append(since)
        if error:
            where, params = ["1 = 0"], []
        searched = any(q[k] for k in ("q", "type", "owner", "modified"))
        items = self._visible_items(" AND ".join(where), tuple(params)) if searched else []
        view = self._view(q)
        people = self._people()
        t_ = self.t
        types = f'<option value="">{t_("Any type")}</option>' + "".join(
            f'<option value="{t}"{" selected" if q["type"] == t else ""}>{esc(t_(label))}</option>' for t, label in TYPE_LABELS.items())
        owners = (f'<option value="">{t_("Anyone")}</option>' + f'<option value="me"{" selected" if q["owner"] == "me" else ""}>{t_("Owned by me")}</option>'
                  + f'<option value="others"{" selected" if q["owner"] == "others" else ""}>{t_("Not owned by me")}</option>' + "".join(
                      f'<option value="{p["id"]}"{" selected" if q["owner"] == str(p["id"]) else ""}>{esc(p["name"])}</option>'
                      for p in people.values() if p["id"] != ME))
        mods = "".join(f'<option value="{k}"{" selected" if q["modified"] == k else ""}>{esc(t_(v))}</option>' for k, v in MODIFIED.items())
        form = ('<form method="get" action="/search" class="filters" data-form="search">'
                f'<label>{t_("Name contains")}<input name="q" value="{esc(q["q"])}" data-filter="q"></label>'
                f'<label>{t_("Type")}<select name="type" data-filter="type">{types}</select></label>'
                f'<label>{t_("Owner")}<select name="owner" data-filter="owner">{owners}</select></label>'
                f'<label>{t_("Modified")}<select name="modified" data-filter="modified">{mods}</select></label>'
                f'<input type="hidden" name="view" value="{view}">'
                f'<button type="submit" class="primary" data-action="apply-filters">{t_("Search")}</button></form>')
        found = t_("1 result") if len(items) == 1 else t_("{n} results").format(n=len(items))
        count = f'<p role="status" data-result-count="{len(items)}">{found}</p>' if searched else ""
        qs = "&".join(f"{k}={esc(q[k])}" for k in ("q", "type", "owner", "modified") if q[k])
        body = (self._error(error) + form + count + self._view_switch(f"/search?{qs}" if qs else "/search", view, "&" if qs else "?")
                + (self._listing(items, view, location=True) if searched else ""))
        return self._page(t_("Search"), body, status=400 if error else 200)


APP = DriveApp
