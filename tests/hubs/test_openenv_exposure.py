"""The OpenEnv server refuses a page of another origin, in a real Chromium: its websocket
(with the right token in the URL, as a page that learnt it would send it) and its HTTP
routes (a simple POST no page needs permission for) never reach a session. A client
without an Origin, as OpenEnv's own client is, gets in with the same token."""

from __future__ import annotations

import httpx
import pytest
import websockets
from _foreign_page import NO_CORS_POST, WS_ATTEMPT, chromium, foreign_site

from cua.hubs.openenv.server import serve_openenv

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]


async def test_a_foreign_page_cannot_reach_a_session() -> None:
    async with serve_openenv(local=True, max_sessions=1, idle_timeout_s=60) as server:
        ws_url = server.url.replace("http://", "ws://") + f"/ws?token={server.token}"
        with foreign_site() as port:
            async with chromium() as browser:
                page = await browser.new_page()
                await page.goto(f"http://evil.example:{port}/")
                assert await page.evaluate(WS_ATTEMPT, ws_url) != "open"
                await page.evaluate(NO_CORS_POST, [f"{server.url}/reset?token={server.token}",
                                                   "task=fake.set_counter%401&seed=1"])
        async with httpx.AsyncClient(base_url=server.url, headers=server.headers, timeout=30) as http:
            assert (await http.get("/health")).status_code == 200
            refused = await http.post("/reset", json={"task": "fake.set_counter@1", "seed": 1},
                                      headers={"Origin": f"http://evil.example:{port}"})
            assert refused.status_code == 403  # the page's own origin, token or not
        assert server.pool.in_use == 0  # the foreign POST opened no sandbox
        async with websockets.connect(ws_url) as ws:  # no Origin, as OpenEnv's client: let in
            assert ws.state.name == "OPEN"
