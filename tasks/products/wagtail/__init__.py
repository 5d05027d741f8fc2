"""Wagtail (PyPI `wagtail` 8, BSD-3-Clause, on Django 5.2) on SQLite, as a product app:
waitress (`serve_cua.py`, one request at a time) serves the Harbourlight site (`cmsite/`),
`seed_wagtail.py` fills it through Wagtail's own models, `state()` reads it. The Wagtail
admin (/admin/) is the UI tasks use.

The judge-facing state (times as Django stores them in SQLite, UTC text; a NULL as "" or 0):
- `pages`: every page of the tree (`wagtailcore_page`), with its type, parent, owner and
  lock holder by username, publishing fields, its promote fields (`seo_title`,
  `search_description`), and a blog post's own fields (`date`,
  `intro`, `body` (its text, block by block), `tags` and `authors` sorted and comma-joined);
- `revisions`: every revision (`wagtailcore_revision`) of a page: who saved it, when, its title;
- `page_log`: Wagtail's audit trail (`wagtailcore_pagelogentry`): every create, edit,
  publish, unpublish, move, revert, workflow step, lock, with its user -- a page published
  and then unpublished keeps both entries here, as in the page's History tab;
- `model_log`: the audit trail of snippets, images, documents, users (`wagtailcore_modellogentry`);
- `workflow_states`: each page's moderation (`wagtailcore_workflowstate`) with its current task's status;
- `users` (username, name, email, groups, superuser), `group_page_permissions`;
- `authors`, `categories` (snippets), `images`, `documents`, `form_submissions`.

Wagtail's search index (`wagtailsearch_indexentry` and its FTS5 table) is private: no judge
reads it. A post's `body` is its text as a reader sees it (`body_text`): the editor adds
block keys to the markup of every paragraph it saves. The instance's media folder is put back with the database on a reset.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.products.base import ProductApp
from cua.tasks.products.wagtail import build

__all__ = ["Wagtail"]

_SCHEMA = Path(__file__).parent / "schema.sql"
_LAUNCHER = Path(__file__).parent / "serve_cua.py"
_TAGS = re.compile(r"<[^>]*>")


def _s(value: Any) -> str:
    return "" if value is None else str(value)


def _i(value: Any) -> int:
    return int(value or 0)


def body_text(raw: Any) -> str:
    """A StreamField body as its reader sees it: one line per block, "type: text" (rich
    text without its markup: the editor adds block keys to every paragraph it saves), an
    image's or document's id."""
    try:
        blocks = json.loads(raw) if raw else []
    except json.JSONDecodeError:
        return ""
    lines = []
    for block in blocks if isinstance(blocks, list) else []:
        value = block.get("value") if isinstance(block, dict) else None
        text = html.unescape(_TAGS.sub("", value)) if isinstance(value, str) else json.dumps(value)
        lines.append(f"{block.get('type', '') if isinstance(block, dict) else ''}: {' '.join(text.split())}")
    return "\n".join(lines)


def _files(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root`: its path relative to `root` -> (size, mtime in ns)."""
    out: dict[str, tuple[int, int]] = {}
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            else:
                info = entry.stat(follow_symlinks=False)
                out[os.path.relpath(entry.path, root)] = (info.st_size, info.st_mtime_ns)
    return out


def _sync_tree(source: Path, target: Path) -> None:
    """Make `target` hold exactly `source`'s files: remove the others, copy those missing
    or changed (by size and time; copies keep the source's times). A reset after an episode
    that uploaded nothing touches no file."""
    want, have = _files(source), _files(target)
    for rel in have.keys() - want.keys():
        os.unlink(target / rel)
    for rel, stamp in want.items():
        if have.get(rel) != stamp:
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, target / rel)


class Wagtail(ProductApp):
    name = "wagtail"
    title = "Harbourlight"
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    private_tables = ("wagtailsearch_indexentry", "wagtailsearch_indexentry_fts")
    assigned: ClassVar[dict[str, tuple[str, ...]]] = {
        "wagtailcore_page": ("path", "depth", "numchild", "url_path", "translation_key", "content_type_id",
                             "latest_revision_id", "live_revision_id", "draft_title", "has_unpublished_changes",
                             "first_published_at", "last_published_at", "latest_revision_created_at"),
        "wagtailcore_revision": ("content", "object_str", "base_content_type_id", "content_type_id", "object_id"),
        "wagtailcore_pagelogentry": ("uuid", "data", "label", "content_changed", "deleted", "content_type_id"),
        "wagtailcore_modellogentry": ("uuid", "data", "label", "content_changed", "deleted", "content_type_id"),
    }
    state_keys: ClassVar[dict[str, str]] = {
        "wagtailcore_page": "pages", "wagtailcore_revision": "revisions", "wagtailcore_pagelogentry": "page_log",
        "wagtailcore_modellogentry": "model_log", "wagtailcore_workflowstate": "workflow_states",
        "auth_user": "users", "wagtailcore_grouppagepermission": "group_page_permissions", "cms_author": "authors",
        "cms_blogcategory": "categories", "wagtailimages_image": "images", "wagtaildocs_document": "documents",
        "wagtailforms_formsubmission": "form_submissions",
    }
    derived: ClassVar[dict[str, tuple[str, ...]]] = {
        "pages.type": ("django_content_type.model",),
        "pages.parent": ("wagtailcore_page.path",),
        "pages.owner": ("wagtailcore_page.owner_id", "auth_user.username"),
        "pages.locked_by": ("wagtailcore_page.locked_by_id", "auth_user.username"),
        "pages.date": ("cms_blogpage.date",),
        "pages.intro": ("cms_blogpage.intro",),
        "pages.body": ("cms_blogpage.body",),
        "pages.tags": ("cms_blogpagetag.tag_id", "cms_blogpagetag.content_object_id", "taggit_tag.name"),
        "pages.authors": ("cms_blogpage_authors.author_id", "cms_blogpage_authors.blogpage_id", "cms_author.name"),
        "revisions.page": ("wagtailcore_revision.object_id",),
        "revisions.user": ("wagtailcore_revision.user_id", "auth_user.username"),
        "revisions.title": ("wagtailcore_revision.content",),
        "page_log.user": ("wagtailcore_pagelogentry.user_id", "auth_user.username"),
        "page_log.page": ("wagtailcore_pagelogentry.page_id",),
        "page_log.revision": ("wagtailcore_pagelogentry.revision_id",),
        "model_log.user": ("wagtailcore_modellogentry.user_id", "auth_user.username"),
        "model_log.model": ("wagtailcore_modellogentry.content_type_id", "django_content_type.model"),
        "workflow_states.page": ("wagtailcore_workflowstate.object_id",),
        "workflow_states.requested_by": ("wagtailcore_workflowstate.requested_by_id", "auth_user.username"),
        "workflow_states.task_status": ("wagtailcore_workflowstate.current_task_state_id",
                                        "wagtailcore_taskstate.status"),
        "users.name": ("auth_user.first_name", "auth_user.last_name"),
        "users.groups": ("auth_user_groups.group_id", "auth_user_groups.user_id", "auth_group.name"),
        "group_page_permissions.group": ("wagtailcore_grouppagepermission.group_id", "auth_group.name"),
        "group_page_permissions.permission": ("wagtailcore_grouppagepermission.permission_id",
                                              "auth_permission.codename"),
        "images.collection": ("wagtailimages_image.collection_id", "wagtailcore_collection.name"),
        "documents.collection": ("wagtaildocs_document.collection_id", "wagtailcore_collection.name"),
    }

    def __init__(self) -> None:
        self._media: Path | None = None
        super().__init__()

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        self._socket = control_socket
        self._media = data_dir / "media"
        return data_dir / "wagtail.db"

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        env = build.site_env(data_dir / "wagtail.db", data_dir / "media")
        argv = [str(build.wagtail_python()), str(_LAUNCHER), "--port", str(port), "--socket", self._socket]
        return argv, env

    # --- the media folder follows the database ---

    def reset(self, seed: int) -> None:
        super().reset(seed)
        if self._media is not None:  # the live instance: its uploads and renditions go, the seed's files come back
            _sync_tree(build.media_image(seed), self._media)

    # --- the judge-facing state ---

    def state(self) -> dict[str, Any]:
        db = self.db
        users = {int(r["id"]): _s(r["username"]) for r in db.all("SELECT id, username FROM auth_user")}
        models = {int(r["id"]): _s(r["model"]) for r in db.all("SELECT id, model FROM django_content_type")}
        tags: dict[int, list[str]] = {}
        for r in db.all("SELECT t.content_object_id AS page, g.name FROM cms_blogpagetag t "
                        "JOIN taggit_tag g ON g.id = t.tag_id"):
            tags.setdefault(int(r["page"]), []).append(_s(r["name"]))
        authors: dict[int, list[str]] = {}
        for r in db.all("SELECT ba.blogpage_id AS page, a.name FROM cms_blogpage_authors ba "
                        "JOIN cms_author a ON a.id = ba.author_id"):
            authors.setdefault(int(r["page"]), []).append(_s(r["name"]))
        blog = {int(r["page_ptr_id"]): r for r in db.all("SELECT page_ptr_id, date, intro, body FROM cms_blogpage")}
        rows = db.all("SELECT * FROM wagtailcore_page ORDER BY path")
        by_path = {_s(r["path"]): int(r["id"]) for r in rows}
        pages = []
        for r in rows:
            pid, path = int(r["id"]), _s(r["path"])
            b = blog.get(pid)
            pages.append({
                "id": pid, "parent": by_path.get(path[:-4], 0), "depth": _i(r["depth"]), "path": path,
                "type": models.get(_i(r["content_type_id"]), ""), "title": _s(r["title"]),
                "draft_title": _s(r["draft_title"]), "slug": _s(r["slug"]), "url_path": _s(r["url_path"]),
                "seo_title": _s(r["seo_title"]), "search_description": _s(r["search_description"]),
                "live": _i(r["live"]), "has_unpublished_changes": _i(r["has_unpublished_changes"]),
                "owner": users.get(_i(r["owner_id"]), ""), "locked": _i(r["locked"]),
                "locked_by": users.get(_i(r["locked_by_id"]), ""),
                "first_published_at": _s(r["first_published_at"]), "last_published_at": _s(r["last_published_at"]),
                "go_live_at": _s(r["go_live_at"]), "expire_at": _s(r["expire_at"]), "expired": _i(r["expired"]),
                "latest_revision": _i(r["latest_revision_id"]), "live_revision": _i(r["live_revision_id"]),
                "date": _s(b["date"]) if b else "", "intro": _s(b["intro"]) if b else "",
                "body": body_text(b["body"]) if b else "",
                "tags": ",".join(sorted(tags.get(pid, []))), "authors": ",".join(sorted(authors.get(pid, []))),
            })
        page_ct = {k for k, v in models.items()}
        revisions = []
        for r in db.all("SELECT id, object_id, user_id, created_at, approved_go_live_at, content, base_content_type_id "
                        "FROM wagtailcore_revision ORDER BY id"):
            try:
                title = _s(json.loads(r["content"]).get("title"))
            except (json.JSONDecodeError, AttributeError):
                title = ""
            if _i(r["base_content_type_id"]) in page_ct and models.get(_i(r["base_content_type_id"])) == "page":
                revisions.append({"id": int(r["id"]), "page": _i(r["object_id"]), "user": users.get(_i(r["user_id"]), ""),
                                  "created_at": _s(r["created_at"]), "approved_go_live_at": _s(r["approved_go_live_at"]),
                                  "title": title})
        page_log = [{"id": int(r["id"]), "page": _i(r["page_id"]), "action": _s(r["action"]),
                     "user": users.get(_i(r["user_id"]), ""), "timestamp": _s(r["timestamp"]), "label": _s(r["label"]),
                     "revision": _i(r["revision_id"]), "content_changed": _i(r["content_changed"]),
                     "deleted": _i(r["deleted"]), "data": _s(r["data"])}
                    for r in db.all("SELECT * FROM wagtailcore_pagelogentry ORDER BY id")]
        model_log = [{"id": int(r["id"]), "model": models.get(_i(r["content_type_id"]), ""),
                      "object": _s(r["object_id"]), "action": _s(r["action"]),
                      "user": users.get(_i(r["user_id"]), ""), "timestamp": _s(r["timestamp"]), "label": _s(r["label"]),
                      "data": _s(r["data"])}
                     for r in db.all("SELECT * FROM wagtailcore_modellogentry ORDER BY id")]
        task_status = {int(r["id"]): _s(r["status"]) for r in db.all("SELECT id, status FROM wagtailcore_taskstate")}
        workflow_states = [{"id": int(r["id"]), "page": _i(r["object_id"]), "status": _s(r["status"]),
                            "requested_by": users.get(_i(r["requested_by_id"]), ""), "created_at": _s(r["created_at"]),
                            "task_status": task_status.get(_i(r["current_task_state_id"]), "")}
                           for r in db.all("SELECT * FROM wagtailcore_workflowstate ORDER BY id")]
        groups: dict[int, list[str]] = {}
        for r in db.all("SELECT ug.user_id, g.name FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id"):
            groups.setdefault(int(r["user_id"]), []).append(_s(r["name"]))
        user_rows = [{"id": _s(r["username"]), "username": _s(r["username"]),
                      "name": f"{_s(r['first_name'])} {_s(r['last_name'])}".strip(), "email": _s(r["email"]),
                      "groups": ",".join(sorted(groups.get(int(r["id"]), []))), "is_superuser": _i(r["is_superuser"]),
                      "is_active": _i(r["is_active"])}
                     for r in db.all("SELECT * FROM auth_user ORDER BY username")]
        gpp = [{"id": int(r["id"]), "group": _s(r["gname"]), "page": _i(r["page_id"]), "permission": _s(r["codename"])}
               for r in db.all("SELECT gp.id, g.name AS gname, gp.page_id, p.codename FROM wagtailcore_grouppagepermission gp "
                               "JOIN auth_group g ON g.id = gp.group_id JOIN auth_permission p ON p.id = gp.permission_id "
                               "ORDER BY gp.id")]
        collections = {int(r["id"]): _s(r["name"]) for r in db.all("SELECT id, name FROM wagtailcore_collection")}
        authors_rows = [{"id": int(r["id"]), "name": _s(r["name"]), "role": _s(r["role"]), "bio": _s(r["bio"])}
                        for r in db.all("SELECT * FROM cms_author ORDER BY id")]
        categories = [{"id": int(r["id"]), "name": _s(r["name"]), "slug": _s(r["slug"])}
                      for r in db.all("SELECT * FROM cms_blogcategory ORDER BY id")]
        images = [{"id": int(r["id"]), "title": _s(r["title"]), "file": _s(r["file"]),
                   "collection": collections.get(_i(r["collection_id"]), "")}
                  for r in db.all("SELECT id, title, file, collection_id FROM wagtailimages_image ORDER BY id")]
        documents = [{"id": int(r["id"]), "title": _s(r["title"]), "file": _s(r["file"]),
                      "collection": collections.get(_i(r["collection_id"]), "")}
                     for r in db.all("SELECT id, title, file, collection_id FROM wagtaildocs_document ORDER BY id")]
        submissions = [{"id": int(r["id"]), "page": _i(r["page_id"]), "form_data": _s(r["form_data"]),
                        "submit_time": _s(r["submit_time"])}
                       for r in db.all("SELECT * FROM wagtailforms_formsubmission ORDER BY id")]
        return {"pages": pages, "revisions": revisions, "page_log": page_log, "model_log": model_log,
                "workflow_states": workflow_states, "users": user_rows, "group_page_permissions": gpp,
                "authors": authors_rows, "categories": categories, "images": images, "documents": documents,
                "form_submissions": submissions}

    def irreversible(self, change: Change) -> str | None:
        """A page deleted (its row gone) is Wagtail's destructive page action."""
        steps = change.steps
        if change.kind == "removed" and len(steps) == 2 and steps[0].key == "pages" and steps[1].key is None:
            return "page_deleted"
        return None
