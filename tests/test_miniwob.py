"""MiniWoB++ in cua: the service (in process) and real episodes in the browser sandbox,
where MiniWoB's own JavaScript decides the reward."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

import pytest
from starlette.testclient import TestClient

from cua.tasks.apps.base import build_asgi
from cua.tasks.miniwob import suitegen
from cua.tasks.miniwob.app import MiniWobApp
from cua.tasks.miniwob.oracles import INTERACTIVE, SOLVERS
from cua.tasks.miniwob.tasks import WITH_ORACLE


class _Control:
    """The control endpoints as the host reaches them: no client address (unix socket)."""

    def __init__(self, asgi: Any) -> None:
        async def no_client(scope: Any, receive: Any, send: Any) -> None:
            await asgi({**scope, "client": None}, receive, send)

        self.client = TestClient(no_client)


def test_service_serves_pages_with_the_shim_and_stores_reports() -> None:
    app = MiniWobApp()
    asgi = build_asgi(app)
    web, ctl = TestClient(asgi), _Control(asgi).client
    page = web.get("/miniwob/click-button.html?seed=3")
    assert page.status_code == 200 and '<script src="/cua/shim.js"></script></body>' in page.text
    assert web.get("/cua/shim.js").status_code == 200
    assert web.get("/core/core.js").status_code == 200
    assert web.get("/miniwob/no-such-task.html").status_code == 404
    assert web.get("/miniwob/..%2Fcore%2Fcore.html").status_code == 404
    report = {"task": "click-button", "seed": "3", "utterance": 'Click on the "ok" button.', "done": True,
              "reward": 0.93, "raw_reward": 1.0, "reason": None}
    assert web.post("/cua/episode", json=report).json() == {"ok": True}
    assert web.post("/cua/episode", json={"task": "x"}).status_code == 400
    last = ctl.get("/__cua/state").json()["last"]
    assert (last["done"], last["raw_reward"], last["utterance"]) == (True, 1.0, 'Click on the "ok" button.')
    ctl.post("/__cua/reset", json={"seed": 0})
    assert ctl.get("/__cua/state").json() == {"episodes": [], "last": None}


def test_every_task_with_an_oracle_exists_and_the_suite_file_is_current() -> None:
    names = set(MiniWobApp().task_names())
    assert set(WITH_ORACLE) <= names
    assert set(WITH_ORACLE) == set(SOLVERS) | set(INTERACTIVE)
    assert suitegen.main(["--check"]) == 0


def _episode(template_id: str, seed: int, agent_name: str) -> Any:
    from cua.eval.episode import NoopAgent, OracleAgent, run_episode
    from cua.eval.local import open_local
    from cua.tasks.registry import get_template

    instance = get_template(template_id).instantiate(seed)

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            agent = OracleAgent("oracle") if agent_name == "oracle" else NoopAgent()
            return await run_episode(handle, instance, agent)

    return asyncio.run(asyncio.wait_for(run(), 240))


needs_browser = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("chromium-headless-shell") is None
                                   and shutil.which("chromium") is None,
                                   reason="the browser sandbox needs bubblewrap and Chromium")


@needs_browser
@pytest.mark.parametrize("template_id", ["miniwob.click_checkboxes@1", "miniwob.login_user@1"])
def test_oracle_earns_miniwob_reward(template_id: str) -> None:
    record = _episode(template_id, 4, "oracle")
    assert record.status == "completed", record.error
    assert record.verdict is not None and record.verdict.passed, record.verdict
    observed = {e.check: e.observed for e in record.verdict.evidence}
    assert observed == {"MiniWoB ended the episode": 1, "MiniWoB's raw reward is 1 (success)": 1}


@needs_browser
def test_doing_nothing_earns_nothing() -> None:
    record = _episode("miniwob.click_button@1", 4, "noop")
    assert record.status == "completed", record.error
    assert record.verdict is not None and not record.verdict.passed
    assert {e.check: e.observed for e in record.verdict.evidence}["MiniWoB ended the episode"] == 0
