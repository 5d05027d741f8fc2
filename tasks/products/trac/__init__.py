"""Trac (PyPI `Trac` 1.6, BSD-3-Clause) on SQLite, as a product app: Trac's own standalone
server (`tracd_cua.py`: tracd's server classes around Trac's WSGI application) serves one
environment, `seed_trac.py` fills it, `state()` reads it.

The judge-facing state is Trac's own tables under their own names, read plainly (times as
Trac stores them, microseconds since the epoch; milestones' `due`/`completed` 0 when unset;
a NULL text as ""):
- `ticket`: every ticket with its current fields;
- `ticket_change`: Trac's audit trail, one row per changed field or
  comment (`field` = "comment"), keyed "ticket|time|field": a ticket closed and then
  reopened keeps both changes here, as on its page's change history;
- `milestone`, `component`, `version`, `enum` (priorities, types, resolutions);
- `permission`: each (user or group, action) grant;
- `users`: the accounts (authenticated sessions) with their name and e-mail; Trac's other
  per-user session attributes (query history, preferences) are not in it;
- `wiki`: every version of every wiki page (`wiki`, keyed "name@version"), and `pages`:
  each page's current version's text.

Trac's `cache` table (its cache generations) is private: no judge reads it. After a reset
or restore the service asks tracd to drop its in-process caches (`flush`).
"""

from __future__ import annotations

import http.client
import secrets
from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.products.base import ProductApp, ProductStartFailed
from cua.tasks.products.trac import build

__all__ = ["Trac"]

_SCHEMA = Path(__file__).parent / "schema.sql"
_LAUNCHER = Path(__file__).parent / "tracd_cua.py"


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value or "")


class Trac(ProductApp):
    name = "trac"
    title = build.PROJECT
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    private_tables = ("cache",)
    #: Columns Trac fills itself (its clock, its counters).
    assigned: ClassVar[dict[str, tuple[str, ...]]] = {
        "ticket": ("time", "changetime"),
        "ticket_change": ("time",),
        "session": ("last_visit",),
        "wiki": ("version", "time"),
        "attachment": ("time", "size"),
    }
    state_keys: ClassVar[dict[str, str]] = {"session": "users"}
    derived: ClassVar[dict[str, tuple[str, ...]]] = {
        "users.name": ("session_attribute.value",),
        "users.email": ("session_attribute.value",),
        "pages.text": ("wiki.text",),
        "pages.version": ("wiki.version",),
        "pages.author": ("wiki.author",),
    }

    def __init__(self) -> None:
        self._flush: tuple[int, str] | None = None
        super().__init__()

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        self._socket = control_socket
        return build.env_skeleton(data_dir / "env")

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        token = secrets.token_hex(16)
        self._flush = (port, token)
        env = build.trac_env()
        env.update(CUA_TRAC_PASSWORD=build.PASSWORD, CUA_TRAC_FLUSH_TOKEN=token)
        argv = [str(build.trac_python()), str(_LAUNCHER), "--env", str(data_dir / "env"), "--port", str(port),
                "--socket", self._socket, "--project", build.PROJECT]
        return argv, env

    # --- no cache outlives a reset ---

    def flush(self) -> None:
        """Drop tracd's in-process caches (after the database was put back); nothing when
        no server runs (the in-process copy) or it has not started yet."""
        if self._flush is None:
            return
        port, token = self._flush
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("POST", "/.cua-flush", headers={"X-Cua-Flush": token, "Host": f"127.0.0.1:{port}"})
            answer = conn.getresponse()
            answer.read()
        except ConnectionRefusedError:
            return  # the server is not up yet: it reads the database fresh when it starts
        except OSError as exc:
            raise ProductStartFailed(f"trac: tracd did not drop its caches after a reset: {exc}") from exc
        finally:
            conn.close()
        if answer.status != 200:
            raise ProductStartFailed(f"trac: tracd refused to drop its caches (HTTP {answer.status})")

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.flush()

    def restore(self, image: bytes) -> None:
        super().restore(image)
        self.flush()

    # --- the judge-facing state ---

    def state(self) -> dict[str, Any]:
        db = self.db
        tickets = [{k: (_text(v) if isinstance(v, (str, bytes)) else v) for k, v in r.items()}
                   for r in db.all("SELECT id, type, time, changetime, component, severity, priority, owner, "
                                   "reporter, cc, version, milestone, status, resolution, summary, description, "
                                   "keywords FROM ticket ORDER BY id")]
        for t in tickets:
            for key in ("type", "component", "severity", "priority", "owner", "reporter", "cc", "version",
                        "milestone", "status", "resolution", "summary", "description", "keywords"):
                t[key] = _text(t[key])
        changes = [{"id": f"{r['ticket']}|{r['time']}|{_text(r['field'])}", "ticket": int(r["ticket"]),
                    "time": int(r["time"]), "author": _text(r["author"]), "field": _text(r["field"]),
                    "oldvalue": _text(r["oldvalue"]), "newvalue": _text(r["newvalue"])}
                   for r in db.all("SELECT ticket, time, author, field, oldvalue, newvalue FROM ticket_change "
                                   "ORDER BY ticket, time, field")]
        milestones = [{"id": _text(r["name"]), "name": _text(r["name"]), "due": int(r["due"] or 0),
                       "completed": int(r["completed"] or 0), "description": _text(r["description"])}
                      for r in db.all("SELECT name, due, completed, description FROM milestone ORDER BY name")]
        components = [{"id": _text(r["name"]), "name": _text(r["name"]), "owner": _text(r["owner"]),
                       "description": _text(r["description"])}
                      for r in db.all("SELECT name, owner, description FROM component ORDER BY name")]
        versions = [{"id": _text(r["name"]), "name": _text(r["name"]), "time": int(r["time"] or 0),
                     "description": _text(r["description"])}
                    for r in db.all("SELECT name, time, description FROM version ORDER BY name")]
        enums = [{"id": f"{_text(r['type'])}|{_text(r['name'])}", "type": _text(r["type"]), "name": _text(r["name"]),
                  "value": _text(r["value"])}
                 for r in db.all("SELECT type, name, value FROM enum ORDER BY type, name")]
        permissions = [{"id": f"{_text(r['username'])}|{_text(r['action'])}", "username": _text(r["username"]),
                        "action": _text(r["action"])}
                       for r in db.all("SELECT username, action FROM permission ORDER BY username, action")]
        attrs: dict[str, dict[str, str]] = {}
        for r in db.all("SELECT sid, name, value FROM session_attribute WHERE authenticated = 1 "
                        "AND name IN ('name', 'email') ORDER BY sid, name"):
            attrs.setdefault(_text(r["sid"]), {})[_text(r["name"])] = _text(r["value"])
        users = [{"id": sid, "sid": sid, "name": attrs.get(sid, {}).get("name", ""),
                  "email": attrs.get(sid, {}).get("email", "")}
                 for sid in (_text(r["sid"]) for r in db.all(
                     "SELECT sid FROM session WHERE authenticated = 1 ORDER BY sid"))]
        wiki = [{"id": f"{_text(r['name'])}@{r['version']}", "name": _text(r["name"]), "version": int(r["version"]),
                 "time": int(r["time"] or 0), "author": _text(r["author"]), "text": _text(r["text"]),
                 "comment": _text(r["comment"]), "readonly": int(r["readonly"] or 0)}
                for r in db.all("SELECT name, version, time, author, text, comment, readonly FROM wiki "
                                "ORDER BY name, version")]
        latest: dict[str, dict[str, Any]] = {}
        for w in wiki:
            latest[str(w["name"])] = w
        pages = [{"id": name, "name": name, "version": w["version"], "author": w["author"], "text": w["text"]}
                 for name, w in sorted(latest.items())]
        return {"ticket": tickets, "ticket_change": changes, "milestone": milestones, "component": components,
                "version": versions, "enum": enums, "permission": permissions, "users": users, "wiki": wiki,
                "pages": pages}

    def irreversible(self, change: Change) -> str | None:
        """A ticket deleted (its row gone) is Trac's only destructive ticket action (an admin's)."""
        steps = change.steps
        if change.kind == "removed" and len(steps) == 2 and steps[0].key == "ticket" and steps[1].key is None:
            return "ticket_deleted"
        return None
