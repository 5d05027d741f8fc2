"""Every form of every phone app, posted junk (empty, too long, not a number, a number
SQLite cannot hold, markup, a NUL, unknown ids and operations), each from the seed: each
answers as a page or a redirect, never a server error (two ids that overflowed SQLite's
integer did), and every page renders at an unknown id. No browser: the fast lane runs it."""

from __future__ import annotations

import itertools

import pytest
from _apps_common import open_app
from starlette.routing import Route

APPS = ["dialer", "messages", "clock", "gallery", "phone_settings"]
FIELDS = ["number", "body", "to", "filter", "q", "time", "days", "label", "vibrate", "enabled", "h", "m", "s", "city",
          "album_id", "name", "password", "device", "back", "wifi", "bluetooth", "brightness", "font_size", "ringtone",
          "dnd_start", "language", "device_name", "camera", "location", "contacts", "microphone"]
#: Every operation name a route takes in its path, and one it does not.
OPS = ["move", "favourite", "connect", "disconnect", "start", "pause", "reset", "trash", "restore", "purge", "forget",
       "delete", "nope"]
JUNK = ["", "abc", "-1", "99999999999999999999999", "<b>x</b>", "a\x00b", "x" * 5000, "../../etc", "1e5", " 12 "]


def _paths(template: str) -> list[str]:
    """The route's path with each parameter a real id (1), an unknown one, and each op name tried."""
    out = [template]
    for name, values in (("{nid:int}", ["1", "999999"]), ("{did:int}", ["1", "999999"]), ("{aid:int}", ["1", "999999"]),
                         ("{cid:int}", ["1", "999999"]), ("{tid:int}", ["1", "999999"]), ("{pid:int}", ["1", "999999"]),
                         ("{call_id:int}", ["1", "999999"]), ("{op:str}", OPS),
                         ("{what:str}", ["mute", "end", "nope"])):
        out = [p.replace(name, v) for p in out for v in (values if name in p else [""])]
    return sorted(set(out))


@pytest.mark.parametrize("app_name", APPS)
def test_junk_posted_to_every_form_is_never_a_server_error(app_name: str) -> None:
    app, web, ctl = open_app(app_name)
    posts = [r for r in app.routes() if isinstance(r, Route) and r.methods and "POST" in r.methods]
    assert posts
    for route, junk in itertools.product(posts, JUNK):
        for path in _paths(route.path):
            ctl.reset(0)  # each from the seed: an earlier post (a delete) must not hide what this one does
            response = web.post(path, data={field: junk for field in FIELDS}, follow_redirects=False)
            assert response.status_code < 500, (path, junk, response.status_code)
            assert web.post(path, follow_redirects=False).status_code < 500, path
    state = ctl.state()
    assert "notifications" in state and all(isinstance(v, list) for v in state.values())


@pytest.mark.parametrize("app_name", APPS)
def test_every_page_renders_at_its_unknown_ids(app_name: str) -> None:
    app, web, _ = open_app(app_name)
    gets = [r for r in app.routes() if isinstance(r, Route) and r.methods and "GET" in r.methods]
    for route in gets:
        for path in _paths(route.path):
            response = web.get(path, follow_redirects=False)
            assert response.status_code < 500, (path, response.status_code)
