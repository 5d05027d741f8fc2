"""Gallery: the phone's photos, albums and trash, as a phone's photo app has them.

Pages (bottom navigation): `/` (every photo not in the trash, newest first, by month, in
a grid), `/albums` (albums with a cover and a count; a new album) and `/albums/{id}`
(its photos; Delete album asks first and keeps the photos), `/favourites`, `/trash`
(photos in the trash, each restorable or deleted forever; Empty trash asks first).
`/photos/{id}` shows one photo full screen with Favourite (a toggle), Details (date,
size, resolution, camera, place, album), Move to album (a sheet of albums) and Delete
(moves it to the trash after a confirmation); inside the phone shell, Share sends the
photo's caption, date and place through the shell's share sheet (`window.cuaPhone.share`).
`/photos/{id}.png` is the picture, a PNG Pillow draws (`draw.py`).
"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.tasks.apps.base import AppDB, WebApp, esc
from cua.tasks.apps.gallery.draw import draw_photo
from cua.tasks.apps.phone import Notification, app_bar, bottom_nav, confirm_dialog, icon, icon_button, phone_page

SCHEMA = """
CREATE TABLE albums (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE photos (
    id INTEGER PRIMARY KEY,
    caption TEXT NOT NULL,
    taken_at TEXT NOT NULL,
    orientation TEXT NOT NULL CHECK (orientation IN ('landscape','portrait','square')),
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    size_bytes INTEGER NOT NULL,
    camera TEXT NOT NULL,
    place TEXT NOT NULL DEFAULT '',
    album_id INTEGER REFERENCES albums(id) ON DELETE SET NULL,
    favourite INTEGER NOT NULL DEFAULT 0 CHECK (favourite IN (0, 1)),
    trashed_at TEXT,
    art_seed INTEGER NOT NULL
);
"""

#: (caption, place, album) of the trips and moments the photos are of.
SCENES = [("Beach day", "Cascais, Portugal", "Lisbon 2025"), ("Tram 28", "Lisbon, Portugal", "Lisbon 2025"),
          ("Sunset at Belém", "Lisbon, Portugal", "Lisbon 2025"), ("Pastéis de nata", "Lisbon, Portugal", "Lisbon 2025"),
          ("Shibuya crossing", "Tokyo, Japan", "Japan"), ("Fushimi Inari", "Kyoto, Japan", "Japan"),
          ("Ramen night", "Osaka, Japan", "Japan"), ("Mount Fuji", "Fujikawaguchiko, Japan", "Japan"),
          ("Birthday cake", "London, UK", "Family"), ("Grandma's garden", "Bath, UK", "Family"),
          ("First steps", "London, UK", "Family"), ("Sunday roast", "London, UK", "Family"),
          ("Park run", "Richmond, UK", ""), ("Receipt", "London, UK", ""), ("Whiteboard", "London, UK", "Work"),
          ("Team lunch", "London, UK", "Work"), ("Parking spot", "London, UK", ""), ("Wi-Fi password", "London, UK", ""),
          ("Snow in the park", "London, UK", ""), ("Concert", "Manchester, UK", ""), ("Dog at the beach", "Brighton, UK", "Pets"),
          ("Cat on the sofa", "London, UK", "Pets"), ("Cat asleep", "London, UK", "Pets"), ("Market flowers", "Berlin, Germany", ""),
          ("Brandenburg Gate", "Berlin, Germany", ""), ("Autumn leaves", "Kraków, Poland", ""), ("Old town", "Kraków, Poland", "")]
CAMERAS = [("Pixel 8 Pro", 4080, 3072), ("Pixel 8 Pro", 3072, 4080), ("Pixel 8 Pro", 3072, 3072), ("Pixel 6a", 4032, 3024)]
NAV = [("Photos", "/", "image"), ("Albums", "/albums", "album"), ("Favourites", "/favourites", "star"), ("Trash", "/trash", "delete")]


def human_size(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB" if n >= 1_000_000 else f"{n / 1000:.0f} kB"


class GalleryApp(WebApp):
    name = "gallery"
    title = "Gallery"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    assigned = {"photos": ("caption", "taken_at", "orientation", "width", "height", "size_bytes", "camera", "place", "art_seed")}
    derived = {"photos.album": ("photos.album_id",)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        albums: dict[str, int] = {}
        start = self.now() - dt.timedelta(days=400)
        for name in ["Lisbon 2025", "Japan", "Family", "Work", "Pets"]:
            albums[name] = db.insert("INSERT INTO albums (name, created_at) VALUES (?, ?)", (name, start.strftime("%Y-%m-%d %H:%M")))
        stamps = sorted(start + dt.timedelta(minutes=rng.randint(0, 400 * 1440)) for _ in range(72))
        for when in stamps:
            caption, place, album = rng.choice(SCENES)
            camera, w, h = rng.choice(CAMERAS)
            orientation = "landscape" if w > h else "portrait" if h > w else "square"
            in_album = albums.get(album) if album and rng.random() < 0.8 else None
            trashed = (self.now() - dt.timedelta(days=rng.randint(1, 25))).strftime("%Y-%m-%d %H:%M") if rng.random() < 0.06 else None
            db.execute(
                "INSERT INTO photos (caption, taken_at, orientation, width, height, size_bytes, camera, place, album_id, favourite,"
                " trashed_at, art_seed) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (caption, when.strftime("%Y-%m-%d %H:%M"), orientation, w, h, rng.randint(1_400_000, 5_800_000), camera,
                 place if rng.random() < 0.85 else "", in_album, int(rng.random() < 0.12), trashed, rng.randint(0, 2**31)))

    def state(self) -> dict[str, Any]:
        notes: list[Notification] = []
        return {"albums": self.db.all("SELECT * FROM albums ORDER BY id"),
                "photos": self.db.all("SELECT p.*, a.name AS album FROM photos p LEFT JOIN albums a ON a.id = p.album_id ORDER BY p.id"),
                "notifications": notes}

    def irreversible(self, change: Change) -> str | None:
        """A photo deleted for good (from the trash, or the trash emptied) cannot be restored."""
        steps = change.steps
        removed = change.kind == "removed" and len(steps) == 2 and steps[0].key == "photos" and steps[1].key is None
        return "delete_forever" if removed else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.photos),
            Route("/favourites", self.favourites),
            Route("/albums", self.albums, methods=["GET", "POST"]),
            Route("/albums/{aid:int}", self.album),
            Route("/albums/{aid:int}/delete", self.delete_album, methods=["POST"]),
            Route("/trash", self.trash),
            Route("/trash/empty", self.empty_trash, methods=["POST"]),
            Route("/photos/{pid:int}.png", self.picture),
            Route("/photos/{pid:int}", self.photo),
            Route("/photos/{pid:int}/{op:str}", self.photo_op, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, active: str = "", cls: str = "") -> Response:
        nav = bottom_nav(NAV, active, label="Gallery") if active else ""
        return phone_page(self, title, body, nav=nav, body_class=cls or ("with-nav" if active else ""), theme="#ffffff",
                          scripts=("/static/app/gallery.js",))

    @staticmethod
    def _alt(p: dict[str, Any]) -> str:
        return f'{p["caption"]}, {dt.datetime.fromisoformat(p["taken_at"]):%-d %B %Y}'

    def _grid(self, photos: list[dict[str, Any]], by_month: bool = True) -> str:
        out, month = [], ""
        cells: list[str] = []

        def flush() -> None:
            if cells:
                out.append(f'<ul class="grid">{"".join(cells)}</ul>')
                cells.clear()

        for p in photos:
            label = dt.datetime.fromisoformat(p["taken_at"]).strftime("%B %Y")
            if by_month and label != month:
                flush()
                out.append(f'<h2 class="month">{esc(label)}</h2>')
                month = label
            star = f'<span class="fav-mark">{icon("star")}</span>' if p["favourite"] else ""
            cells.append(f'<li><a class="cell" href="/photos/{p["id"]}" data-id="{p["id"]}"><img src="/photos/{p["id"]}.png" '
                         f'alt="{esc(self._alt(p))}" loading="lazy" width="120" height="120">{star}</a></li>')
        flush()
        return "".join(out)

    # --- lists ---

    async def photos(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM photos WHERE trashed_at IS NULL ORDER BY taken_at DESC, id DESC")
        body = app_bar("Photos") + (self._grid(rows) if rows else '<p class="empty">No photos</p>')
        return self._page("Photos", body, "Photos")

    async def favourites(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM photos WHERE trashed_at IS NULL AND favourite = 1 ORDER BY taken_at DESC, id DESC")
        body = app_bar("Favourites") + (self._grid(rows, by_month=False) if rows else '<p class="empty">No favourites yet</p>')
        return self._page("Favourites", body, "Favourites")

    async def albums(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            form = await request.form()
            name = " ".join(str(form.get("name", "")).split())[:60]
            existing = self.db.one("SELECT id FROM albums WHERE name = ?", (name,))
            if name and existing is None:
                aid = self.db.insert("INSERT INTO albums (name, created_at) VALUES (?, ?)", (name, self.now().strftime("%Y-%m-%d %H:%M")))
                return RedirectResponse(f"/albums/{aid}", status_code=303)
            error = ('<p class="error" role="alert">' + ("An album with that name already exists." if existing else "Give the album a name.")
                     + "</p>")
        rows = self.db.all(
            "SELECT a.*, COUNT(p.id) AS n, (SELECT id FROM photos WHERE album_id = a.id AND trashed_at IS NULL "
            "ORDER BY taken_at DESC LIMIT 1) AS cover FROM albums a LEFT JOIN photos p ON p.album_id = a.id AND p.trashed_at IS NULL "
            "GROUP BY a.id ORDER BY a.name COLLATE NOCASE")
        cards = "".join(
            f'<li><a class="album-card" href="/albums/{a["id"]}">'
            + (f'<img src="/photos/{a["cover"]}.png" alt="" width="160" height="160">' if a["cover"] else
               f'<span class="no-cover">{icon("album")}</span>')
            + f'<strong>{esc(a["name"])}</strong><span class="sub">{a["n"]} item{"" if a["n"] == 1 else "s"}</span></a></li>'
            for a in rows)
        new = ('<form method="post" action="/albums" class="new-album"><label for="album-name" class="sr-only">New album name</label>'
               '<input type="text" id="album-name" name="name" placeholder="New album name" maxlength="60" required>'
               f'<button type="submit" class="tonal-btn">{icon("add")}<span>Create</span></button></form>')
        body = app_bar("Albums") + new + error + f'<ul class="albums">{cards}</ul>'
        return self._page("Albums", body, "Albums")

    async def album(self, request: Request) -> Response:
        a = self.db.one("SELECT * FROM albums WHERE id = ?", (request.path_params["aid"],))
        if a is None:
            return RedirectResponse("/albums", status_code=303)
        rows = self.db.all("SELECT * FROM photos WHERE album_id = ? AND trashed_at IS NULL ORDER BY taken_at DESC, id DESC", (a["id"],))
        delete = (icon_button("delete", "Delete album", attrs='data-dialog="delete-album"')
                  + confirm_dialog("delete-album", "Delete this album?", f"“{a['name']}” will be deleted. Its photos stay in Photos.",
                                   f"/albums/{a['id']}/delete", "Delete"))
        body = (app_bar(a["name"], back="/albums", actions=delete)
                + f'<p class="count">{len(rows)} item{"" if len(rows) == 1 else "s"}</p>'
                + (self._grid(rows, by_month=False) if rows else '<p class="empty">This album is empty</p>'))
        return self._page(a["name"], body, "Albums")

    async def delete_album(self, request: Request) -> Response:
        self.db.execute("DELETE FROM albums WHERE id = ?", (request.path_params["aid"],))
        return RedirectResponse("/albums", status_code=303)

    async def trash(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM photos WHERE trashed_at IS NOT NULL ORDER BY trashed_at DESC, id DESC")
        items = "".join(
            f'<li class="trash-item" data-id="{p["id"]}"><img src="/photos/{p["id"]}.png" alt="{esc(self._alt(p))}" width="72" height="72">'
            f'<span class="trash-text"><strong>{esc(p["caption"])}</strong><span class="sub">'
            f'{max(0, 30 - (self.now() - dt.datetime.fromisoformat(p["trashed_at"])).days)} days left</span></span>'
            f'<form method="post" action="/photos/{p["id"]}/restore" class="inline"><button type="submit" class="icon-btn" '
            f'aria-label="Restore {esc(self._alt(p))}">{icon("restore")}</button></form>'
            f'<button type="button" class="icon-btn" data-dialog="purge-{p["id"]}" aria-label="Delete forever {esc(self._alt(p))}">'
            f'{icon("close")}</button>'
            + confirm_dialog(f"purge-{p['id']}", "Delete forever?", f"“{p['caption']}” will be deleted from this phone for good.",
                             f"/photos/{p['id']}/purge", "Delete") + "</li>"
            for p in rows)
        empty = (icon_button("delete", "Empty trash", attrs='data-dialog="empty-trash"')
                 + confirm_dialog("empty-trash", "Empty trash?", f"All {len(rows)} items in the trash will be deleted for good.",
                                  "/trash/empty", "Empty trash")) if rows else ""
        body = (app_bar("Trash", actions=empty)
                + '<p class="count">Items in the trash are deleted for good after 30 days.</p>'
                + (f'<ul class="trash">{items}</ul>' if rows else '<p class="empty">Trash is empty</p>'))
        return self._page("Trash", body, "Trash")

    async def empty_trash(self, request: Request) -> Response:
        self.db.execute("DELETE FROM photos WHERE trashed_at IS NOT NULL")
        return RedirectResponse("/trash", status_code=303)

    # --- one photo ---

    async def picture(self, request: Request) -> Response:
        p = self.db.one("SELECT art_seed, caption, orientation FROM photos WHERE id = ?", (request.path_params["pid"],))
        if p is None:
            return Response(status_code=404)
        return Response(draw_photo(p["art_seed"], p["caption"], p["orientation"]), media_type="image/png",
                        headers={"cache-control": "private, max-age=3600"})

    async def photo(self, request: Request) -> Response:
        p = self.db.one("SELECT p.*, a.name AS album FROM photos p LEFT JOIN albums a ON a.id = p.album_id WHERE p.id = ?",
                        (request.path_params["pid"],))
        if p is None:
            return RedirectResponse("/", status_code=303)
        pid = p["id"]
        back = "/trash" if p["trashed_at"] else f"/albums/{p['album_id']}" if p["album_id"] else "/"
        taken = dt.datetime.fromisoformat(p["taken_at"])
        details = (f'<dl class="details"><dt>Date</dt><dd>{taken:%A %-d %B %Y, %H:%M}</dd><dt>Size</dt>'
                   f'<dd>{human_size(p["size_bytes"])}</dd><dt>Resolution</dt><dd>{p["width"]} × {p["height"]} '
                   f'({p["width"] * p["height"] / 1e6:.1f} MP)</dd><dt>Camera</dt><dd>{esc(p["camera"])}</dd>'
                   f'<dt>Place</dt><dd>{esc(p["place"]) or "Unknown"}</dd><dt>Album</dt><dd>{esc(p["album"] or "None")}</dd></dl>')
        if p["trashed_at"]:
            actions = (f'<form method="post" action="/photos/{pid}/restore" class="inline"><button type="submit" class="bar-btn">'
                       f'{icon("restore")}<span>Restore</span></button></form>')
        else:
            albums = self.db.all("SELECT * FROM albums ORDER BY name COLLATE NOCASE")
            choices = "".join(
                f'<label class="choice"><input type="radio" name="album_id" value="{a["id"]}"{" checked" if a["id"] == p["album_id"] else ""}>'
                f'<span>{esc(a["name"])}</span></label>' for a in albums)
            move = (f'<dialog id="move-sheet" class="sheet" aria-labelledby="move-title"><h2 id="move-title">Move to album</h2>'
                    f'<form method="post" action="/photos/{pid}/move"><fieldset><legend class="sr-only">Album</legend>'
                    f'<label class="choice"><input type="radio" name="album_id" value=""{" checked" if not p["album_id"] else ""}>'
                    f'<span>No album</span></label>{choices}</fieldset><div class="dialog-actions"><button type="button" '
                    f'class="text-btn" data-close="move-sheet">Cancel</button><button type="submit" class="text-btn">Move</button>'
                    '</div></form></dialog>')
            fav = bool(p["favourite"])
            share = f'{p["caption"]} ({taken:%-d %B %Y}{", " + p["place"] if p["place"] else ""})'
            actions = (f'<form method="post" action="/photos/{pid}/favourite" class="inline"><button type="submit" class="bar-btn" '
                       f'aria-pressed="{"true" if fav else "false"}">{icon("star" if fav else "star_outline")}<span>Favourite</span>'
                       f'</button></form><button type="button" class="bar-btn" data-dialog="details-sheet">{icon("info")}'
                       f'<span>Details</span></button><button type="button" class="bar-btn" data-dialog="move-sheet">{icon("move")}'
                       f'<span>Move</span></button><button type="button" class="bar-btn share" data-share="{esc(share)}" hidden>'
                       f'{icon("send")}<span>Share</span></button>'
                       f'<button type="button" class="bar-btn" data-dialog="trash-dialog">{icon("delete")}'
                       '<span>Delete</span></button>' + move
                       + confirm_dialog("trash-dialog", "Move to trash?", "It will be deleted for good after 30 days in the trash.",
                                        f"/photos/{pid}/trash", "Move to trash"))
        sheet = (f'<dialog id="details-sheet" class="sheet" aria-labelledby="details-title"><h2 id="details-title">Details</h2>{details}'
                 '<div class="dialog-actions"><button type="button" class="text-btn" data-close="details-sheet">Close</button></div></dialog>')
        body = (app_bar(p["caption"], back=back, cls="viewer-bar")
                + f'<figure class="viewer"><img src="/photos/{pid}.png" alt="{esc(self._alt(p))}"><figcaption>{taken:%-d %b %Y · %H:%M}'
                  f'</figcaption></figure><div class="actions" role="toolbar" aria-label="Photo actions">{actions}</div>{sheet}')
        return self._page(p["caption"], body, cls="viewer-page")

    async def photo_op(self, request: Request) -> Response:
        pid, op = request.path_params["pid"], request.path_params["op"]
        p = self.db.one("SELECT * FROM photos WHERE id = ?", (pid,))
        if p is None:
            return RedirectResponse("/", status_code=303)
        stamp = self.now().strftime("%Y-%m-%d %H:%M")
        if op == "favourite" and p["trashed_at"] is None:
            self.db.execute("UPDATE photos SET favourite = 1 - favourite WHERE id = ?", (pid,))
        elif op == "move" and p["trashed_at"] is None:
            form = await request.form()
            raw = str(form.get("album_id", ""))
            album = self.db.one("SELECT id FROM albums WHERE id = ?", (int(raw),)) if raw.isdigit() and len(raw) <= 9 else None
            if album is not None or raw == "":
                self.db.execute("UPDATE photos SET album_id = ? WHERE id = ?", (album["id"] if album else None, pid))
        elif op == "trash" and p["trashed_at"] is None:
            self.db.execute("UPDATE photos SET trashed_at = ? WHERE id = ?", (stamp, pid))
            return RedirectResponse("/", status_code=303)
        elif op == "restore":
            self.db.execute("UPDATE photos SET trashed_at = NULL WHERE id = ?", (pid,))
            return RedirectResponse("/trash", status_code=303)
        elif op == "purge" and p["trashed_at"] is not None:
            self.db.execute("DELETE FROM photos WHERE id = ?", (pid,))
            return RedirectResponse("/trash", status_code=303)
        return RedirectResponse(f"/photos/{pid}", status_code=303)


APP = GalleryApp
