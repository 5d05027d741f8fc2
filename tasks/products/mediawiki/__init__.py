"""MediaWiki (Debian package `mediawiki`, 1.39 LTS, GPL-2.0-or-later) on SQLite, as a
product app: `php -S` serves it, `seed.php` fills it, `state()` reads it.

The judge-facing state (`state()`) is MediaWiki's own tables, read plainly:
- `pages`: every page by id, with its full title ("Talk:Millbrook Park"), namespace,
  current wikitext (page -> latest revision -> main slot -> content -> text), whether it is
  a redirect and where to, its categories (categorylinks) and protections (page_restrictions);
- `revisions`: every revision (the page's history: parent, user, time, summary, minor flag,
  size, sha1); an edit undone is still here, as on the wiki's history page;
- `users` (with their groups), `watched` (MediaWiki's `watchlist`: who watches which
  title, keyed "user|title", since a page and its talk page are watched together), `logs` (MediaWiki's
  `logging`: moves, deletions, protections, account and rights changes), `deleted`
  (`archive`: the revisions of deleted pages).

`recentchanges` and the rest of the schema are not in it (the recent changes feed repeats
revisions and logs); judges read any table by SQL. The product's own audit trail
(`revision`, `logging`, `archive`) is in the state, so the activity log's per-request diffs
of it (`cua.tasks.products.service`) show every edit, move, deletion and protection an
episode made, including those undone later; `irreversible()` names deletions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.apps.activity import added_row
from cua.tasks.products.base import ProductApp
from cua.tasks.products.mediawiki import build
from cua.tasks.products.mediawiki.settings import SITE_NAME, local_settings

__all__ = ["NAMESPACES", "MediaWiki", "full_title"]

#: MediaWiki's namespace numbers and their names on this wiki.
NAMESPACES = {0: "", 1: "Talk", 2: "User", 3: "User talk", 4: "Riverbend Wiki", 5: "Riverbend Wiki talk",
              6: "File", 7: "File talk", 8: "MediaWiki", 9: "MediaWiki talk", 10: "Template", 11: "Template talk",
              12: "Help", 13: "Help talk", 14: "Category", 15: "Category talk"}
_ROUTER = Path(__file__).parent / "router.php"
#: MediaWiki's schema less its private tables (see the file's header).
_SCHEMA = Path(__file__).parent / "schema.sql"


def full_title(namespace: int, db_key: str) -> str:
    """A page's title as the wiki shows it ("Talk:Millbrook Park") from its namespace and key."""
    text = str(db_key).replace("_", " ")
    prefix = NAMESPACES.get(int(namespace), f"Namespace {namespace}")
    return f"{prefix}:{text}" if prefix else text


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


class MediaWiki(ProductApp):
    name = "mediawiki"
    title = SITE_NAME
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    private_tables = ("searchindex", "l10n_cache", "objectcache", "querycache", "querycachetwo", "querycache_info",
                      "module_deps", "job", "updatelog")
    #: Columns MediaWiki fills itself: sizes, hashes, counters, tokens, derived flags.
    assigned: ClassVar[dict[str, tuple[str, ...]]] = {
        "page": ("page_len", "page_random", "page_touched", "page_links_updated", "page_latest", "page_lang",
                 "page_content_model"),
        "revision": ("rev_len", "rev_sha1", "rev_timestamp", "rev_parent_id", "rev_actor", "rev_comment_id"),
        "user": ("user_password", "user_newpassword", "user_token", "user_editcount", "user_touched",
                 "user_registration", "user_email_token", "user_email_token_expires", "user_password_expires"),
        "actor": ("actor_user", "actor_name"),
        "recentchanges": ("rc_this_oldid", "rc_last_oldid", "rc_old_len", "rc_new_len", "rc_timestamp", "rc_actor",
                          "rc_comment_id", "rc_cur_id"),
        "logging": ("log_actor", "log_comment_id", "log_timestamp", "log_page", "log_params"),
        "content": ("content_size", "content_sha1", "content_address", "content_model"),
        "slots": ("slot_content_id", "slot_origin"),
        "site_stats": ("ss_total_edits", "ss_good_articles", "ss_total_pages", "ss_users", "ss_active_users",
                       "ss_images"),
        "category": ("cat_pages", "cat_subcats", "cat_files"),
        "categorylinks": ("cl_sortkey", "cl_timestamp", "cl_sortkey_prefix", "cl_collation", "cl_type"),
        "archive": ("ar_len", "ar_sha1", "ar_actor", "ar_comment_id", "ar_timestamp", "ar_parent_id"),
    }

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        settings = data_dir / "LocalSettings.php"
        settings.write_text(local_settings(data_dir, build.l10n_dir(), control_socket=control_socket))
        return data_dir / f"{build.DB_NAME}.sqlite"

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        argv = [build.PHP, "-d", "opcache.enable_cli=1", "-S", f"127.0.0.1:{port}", "-t", str(build.INSTALL_PATH), str(_ROUTER)]
        return argv, build.php_env(data_dir / "LocalSettings.php")

    # --- the judge-facing state ---

    def state(self) -> dict[str, Any]:
        db = self.db
        cats: dict[int, list[str]] = {}
        for r in db.all("SELECT cl_from, cl_to FROM categorylinks ORDER BY cl_from, cl_to"):
            cats.setdefault(int(r["cl_from"]), []).append(_text(r["cl_to"]).replace("_", " "))
        prot: dict[int, dict[str, str]] = {}
        for r in db.all("SELECT pr_page, pr_type, pr_level FROM page_restrictions ORDER BY pr_page, pr_type"):
            prot.setdefault(int(r["pr_page"]), {})[_text(r["pr_type"])] = _text(r["pr_level"])
        redirects = {int(r["rd_from"]): full_title(r["rd_namespace"], _text(r["rd_title"]))
                     for r in db.all("SELECT rd_from, rd_namespace, rd_title FROM redirect")}
        pages = []
        for r in db.all(
                "SELECT p.page_id, p.page_namespace, p.page_title, p.page_is_redirect, p.page_latest, t.old_text "
                "FROM page p LEFT JOIN slots s ON s.slot_revision_id = p.page_latest AND s.slot_role_id = 1 "
                "LEFT JOIN content c ON c.content_id = s.slot_content_id "
                "LEFT JOIN text t ON 'tt:' || t.old_id = c.content_address ORDER BY p.page_id"):
            pid = int(r["page_id"])
            pages.append({"id": pid, "title": full_title(r["page_namespace"], _text(r["page_title"])),
                          "namespace": int(r["page_namespace"]), "text": _text(r["old_text"]),
                          "latest": int(r["page_latest"]), "is_redirect": bool(r["page_is_redirect"]),
                          "redirect_to": redirects.get(pid), "categories": cats.get(pid, []),
                          "protection": prot.get(pid, {})})
        revisions = [
            {"id": int(r["rev_id"]), "page_id": int(r["rev_page"]), "parent": int(r["rev_parent_id"] or 0),
             "user": _text(r["actor_name"]), "timestamp": _text(r["rev_timestamp"]),
             "summary": _text(r["comment_text"]), "minor": bool(r["rev_minor_edit"]), "size": int(r["rev_len"] or 0),
             "sha1": _text(r["rev_sha1"])}
            for r in db.all("SELECT r.rev_id, r.rev_page, r.rev_parent_id, a.actor_name, r.rev_timestamp, "
                            "c.comment_text, r.rev_minor_edit, r.rev_len, r.rev_sha1 FROM revision r "
                            "LEFT JOIN actor a ON a.actor_id = r.rev_actor "
                            "LEFT JOIN revision_comment_temp rct ON rct.revcomment_rev = r.rev_id "
                            "LEFT JOIN comment c ON c.comment_id = COALESCE(NULLIF(r.rev_comment_id, 0), "
                            "rct.revcomment_comment_id) ORDER BY r.rev_id")]
        groups: dict[int, list[str]] = {}
        for r in db.all("SELECT ug_user, ug_group FROM user_groups ORDER BY ug_user, ug_group"):
            groups.setdefault(int(r["ug_user"]), []).append(_text(r["ug_group"]))
        users = [{"id": int(r["user_id"]), "name": _text(r["user_name"]), "groups": groups.get(int(r["user_id"]), [])}
                 for r in db.all("SELECT user_id, user_name FROM user ORDER BY user_id")]
        watched = [{"id": f"{_text(r['user_name'])}|{title}", "user": _text(r["user_name"]), "title": title}
                   for r in db.all("SELECT u.user_name, w.wl_namespace, w.wl_title FROM watchlist w "
                                   "LEFT JOIN user u ON u.user_id = w.wl_user "
                                   "ORDER BY u.user_name, w.wl_namespace, w.wl_title")
                   for title in [full_title(r["wl_namespace"], _text(r["wl_title"]))]]
        logs = [{"id": int(r["log_id"]), "type": _text(r["log_type"]), "action": _text(r["log_action"]),
                 "user": _text(r["actor_name"]), "title": full_title(r["log_namespace"], _text(r["log_title"])),
                 "timestamp": _text(r["log_timestamp"]), "comment": _text(r["comment_text"]),
                 "params": _text(r["log_params"])}
                for r in db.all("SELECT l.log_id, l.log_type, l.log_action, a.actor_name, l.log_namespace, "
                                "l.log_title, l.log_timestamp, c.comment_text, l.log_params FROM logging l "
                                "LEFT JOIN actor a ON a.actor_id = l.log_actor "
                                "LEFT JOIN comment c ON c.comment_id = l.log_comment_id ORDER BY l.log_id")]
        deleted = [{"id": int(r["ar_id"]), "title": full_title(r["ar_namespace"], _text(r["ar_title"])),
                    "rev_id": int(r["ar_rev_id"]), "page_id": int(r["ar_page_id"] or 0)}
                   for r in db.all("SELECT ar_id, ar_namespace, ar_title, ar_rev_id, ar_page_id FROM archive "
                                   "ORDER BY ar_id")]
        return {"pages": pages, "revisions": revisions, "users": users, "watched": watched, "logs": logs,
                "deleted": deleted}

    def irreversible(self, change: Change) -> str | None:
        """A page deleted (its revisions archived) or a log entry written: the wiki's audit
        trail of an action the episode took, kept in the activity log even if an admin
        purged the page or the log row later."""
        row = added_row(change, "deleted")
        if row is not None:
            return "page_deleted"
        row = added_row(change, "logs")
        if row is not None:
            return f"log_{row.get('type')}_{row.get('action')}"
        return None
