"""Bad config and bad options get `bad_request` naming the field (never `internal` with a
traceback, never an infra code a runner would retry), and a slow state query of one
sandbox is cut off instead of holding the shared app host."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

import cua
from cua.client import Client
from cua.errors import BadRequest
from cua.server.app import RunningServer
from cua.state import SqlQuery
from cua.tasks.apps import service

pytestmark = pytest.mark.asyncio(loop_scope="module")

TODO = service("todo")
SLOW_SQL = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) "
            "SELECT count(*) AS c FROM n")


@pytest.fixture(scope="module")
def server_options() -> dict[str, Any]:
    return {"max_sandboxes": 6}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(server: RunningServer) -> AsyncIterator[Client]:
    async with cua.connect(server.url, server.token, default_timeout=120) as c:
        yield c


def _not_executable(tmp: Path) -> str:
    path = tmp / "not-a-program"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o644)
    return str(path)


@pytest.mark.parametrize(("config", "field"), [
    ({"start_url": "/lists/1"}, "start_url"),
    ({"start_url": 5}, "start_url"),
    ({"start_url": "file:///etc/passwd"}, "start_url"),  # a shared browser runs on the host
    ({"start_url": "FILE:///etc/passwd"}, "start_url"),
    ({"start_url": "view-source:http://127.0.0.1/"}, "start_url"),
    ({"start_url": "javascript:alert(1)"}, "start_url"),
    ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
    ({"timezone": "../../etc/passwd"}, "timezone"),
    ({"locale": "en_US; rm -rf /"}, "locale"),
    ({"services": [{"name": "app", "argv": ["/nonexistent/program"]}]}, "services"),
    ({"services": [{"name": "app", "argv": ["NOT_EXECUTABLE"]}]}, "services"),
    ({"isolation": "shared", "extra_args": ["--user-agent=first"]}, "extra_args"),
    ({"viewport": {"width": 10 ** 9, "height": 10}}, "viewport"),
    ({"settle_timeout_ms": -1}, "settle_timeout_ms"),
])
async def test_bad_config_is_bad_request_naming_the_field(client: Client, tmp_path: Path, config: dict[str, Any],
                                                          field: str) -> None:
    if config.get("services"):
        argv = config["services"][0]["argv"]
        config = {**config, "services": [{"name": "app", "argv": [
            _not_executable(tmp_path) if a == "NOT_EXECUTABLE" else a for a in argv]}]}
    with pytest.raises(BadRequest) as caught:
        await client.create("browser", config=config)
    assert field in caught.value.message, caught.value.message
    await client.ping()


@pytest.mark.slow
async def test_unknown_bundled_app_is_bad_request(client: Client) -> None:
    config = {"isolation": "shared", "services": [{"name": "app", "argv": [
        sys.executable, "-m", "cua.tasks.apps.serve", "no-such-app"]}]}
    with pytest.raises(BadRequest) as caught:
        await client.create("browser", config=config)
    assert "no-such-app" in caught.value.message


@pytest.mark.slow
async def test_reset_with_bad_start_url_is_bad_request_and_the_sandbox_goes_on(client: Client) -> None:
    sb = await client.create("browser", config={"isolation": "shared"})
    for bad in (5, "", "/no/service/to/resolve/against", ["a"], "file:///etc/passwd", "chrome://version"):
        with pytest.raises(BadRequest) as caught:
            await sb.reset(options={"start_url": bad})
        assert "start_url" in caught.value.message
    assert (await sb.reset()).error is None
    await sb.close()


@pytest.mark.slow
async def test_a_slow_query_is_cut_off_and_another_sandboxs_read_goes_on(client: Client) -> None:
    config = {"isolation": "shared", "services": [TODO], "start_url": "/"}
    hog, other = await asyncio.gather(client.create("browser", config=config),
                                      client.create("browser", config=config))
    slow = asyncio.create_task(hog.query([SqlQuery(query=SLOW_SQL)]))
    (fast,) = await other.query([SqlQuery(query="SELECT COUNT(*) AS n FROM todos")])
    assert fast.ok and fast.value[0]["n"] > 0
    (cut,) = await slow
    assert not cut.ok and "interrupted" in (cut.message or "").lower(), cut
    (after,) = await hog.query([SqlQuery(query="SELECT COUNT(*) AS n FROM todos")])  # the hog's app lives on
    assert after.ok
    await asyncio.gather(hog.close(), other.close())
