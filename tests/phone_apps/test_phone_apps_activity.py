"""What cannot be taken back on a phone is named in the app's activity log, where a judge
sees it even when the record is gone: a text sent (then its conversation deleted), a call
placed (then the call history cleared), a photo deleted for good. Reversible changes (a
photo to the trash and back, a message read) name nothing. No browser: the fast lane."""

from __future__ import annotations

import json
from typing import Any

from _apps_common import Control, open_app


def _events(ctl: Control) -> list[dict[str, Any]]:
    rows = ctl.sql("SELECT events FROM cua_activity ORDER BY seq").json()["rows"]
    return [e for r in rows for e in json.loads(r["events"])]


def test_a_text_sent_then_its_conversation_deleted_is_still_a_send() -> None:
    _, web, ctl = open_app("messages")
    assert web.post("/send", data={"to": "+44 7911 123456", "body": "Meet at 6?"}, follow_redirects=False).status_code == 303
    thread = ctl.state()["threads"][-1]["id"]
    sent = ctl.state()["messages"][-1]["id"]
    assert web.post(f"/threads/{thread}/read", follow_redirects=False).status_code == 303
    assert web.post(f"/threads/{thread}/delete", follow_redirects=False).status_code == 303
    assert sent not in {m["id"] for m in ctl.state()["messages"]}
    assert _events(ctl) == [{"event": "send", "record": f"messages[id={sent}]"}]


def test_a_call_placed_then_the_history_cleared_is_still_a_call() -> None:
    _, web, ctl = open_app("dialer")
    assert web.post("/call", data={"number": "+34 600 11 22 33"}, follow_redirects=False).status_code == 303
    call = ctl.state()["calls"][-1]["id"]
    assert web.post(f"/call/{call}/end", follow_redirects=False).status_code == 303
    assert web.post("/recents/clear", follow_redirects=False).status_code == 303
    assert ctl.state()["calls"] == []
    assert _events(ctl) == [{"event": "call", "record": f"calls[id={call}]"}]


def test_only_a_photo_deleted_for_good_is_irreversible() -> None:
    _, web, ctl = open_app("gallery")
    photo = next(p for p in ctl.state()["photos"] if not p["trashed_at"])["id"]
    for op in ("favourite", "trash", "restore", "trash"):
        assert web.post(f"/photos/{photo}/{op}", follow_redirects=False).status_code == 303
    assert _events(ctl) == []
    assert web.post(f"/photos/{photo}/purge", follow_redirects=False).status_code == 303
    assert _events(ctl) == [{"event": "delete_forever", "record": f"photos[id={photo}]"}]
