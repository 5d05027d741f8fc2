"""A phone task's sandbox setup (`kind: mobile`), checked when its file loads: the app is the
phone's service `app` beside any more apps; a start URL (a phone starts on its shell) and an
app that is not bundled are refused, by field."""

from __future__ import annotations

import pytest

from cua.state import AppStateQuery, SqlQuery
from cua.tasks.format import TaskFormatError
from cua.tasks.loader import load_text

BASE = """
suite: mobile
templates:
  - id: mobile.probe@1
    instruction: Open the app.
    sandbox: {SANDBOX}
    judge:
      checks: [{check: open, get: {kind: app_state, service: shell, path: open_app}, expect: {op: equals, value: app}}]
    oracle: [{action: {type: open_app, name: Todo}}]
    tags: {device: phone}
"""


def load(sandbox: str) -> list:
    return load_text(BASE.replace("{SANDBOX}", sandbox), "probe.yaml")


def test_the_app_is_the_phones_service_app_beside_the_others() -> None:
    [template] = load("{kind: mobile, app: todo, apps: [mail, calendar], config: {device: pixel_tablet}}")
    instance = template.instantiate(0)
    assert instance.sandbox_kind == "mobile" and instance.tags.device == "phone"
    assert [s["name"] for s in instance.sandbox_config["services"]] == ["app", "mail", "calendar"]
    assert instance.sandbox_config["labels"] == {"app": "Todo"}
    assert "start_url" not in instance.sandbox_config


@pytest.mark.parametrize(("sandbox", "field"), [
    ("{kind: mobile, app: todo, start_url: /search}", "sandbox.start_url"),
    ("{kind: mobile, app: todo, apps: [no_such_app]}", "sandbox.app"),
])
def test_a_phone_setup_that_cannot_run_is_refused_by_field(sandbox: str, field: str) -> None:
    with pytest.raises(TaskFormatError) as caught:
        load(sandbox)
    assert any(p.field.endswith(field) for p in caught.value.problems), caught.value.problems


def test_the_phones_other_apps_are_diffed_too() -> None:
    """Another app on the phone may change nothing its template does not allow (as in a
    browser workflow): the judge reads each one's state to diff it, not only the task's app."""
    [template] = load("{kind: mobile, app: todo, apps: [mail, contacts]}")
    services = {q.service for q in template.instantiate(0).judge.queries() if isinstance(q, (AppStateQuery, SqlQuery))}
    assert {"app", "mail", "contacts"} <= services
