"""The browser sandbox's navigation history (issue 29, item 2), in real Chromium: every
main-frame commit since reset, in order, with the server redirects that led to it and how
it was reached; a snapshot's fork carries it on, and a reset starts it again. A judge reads
it through the `navigation` getter (a page visited and left is still seen)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from _html_site import Answer, html_site

from cua.actions import Back, Goto
from cua.judges.judge import StateJudge
from cua.judges.spec import JudgeSpec
from cua.sandboxes.browser import BrowserConfig, BrowserSandbox
from cua.state import NavigationQuery, StateResult
from cua.task import JudgeInput, query_key

pytestmark = [pytest.mark.slow, pytest.mark.asyncio]

REDIRECTS = {"/r1": "/r2", "/r2": "/end"}


def _page(path: str) -> Answer:
    if path in REDIRECTS:
        return 302, {"Location": REDIRECTS[path]}, b""
    return 200, {}, f"<title>{path}</title><p>{path}</p>".encode()


def _paths(value: Any) -> list[tuple[str, str, list[str]]]:
    return [(urlsplit(e["url"]).path, e["how"], [urlsplit(r).path for r in e["redirects"]])
            for e in value["entries"]]


async def _history(sb: BrowserSandbox) -> Any:
    result = (await sb.query([NavigationQuery()]))[0]
    assert result.ok, result
    return result.value


async def test_history_records_redirects_gotos_and_back_and_forks_carry_it() -> None:
    with html_site(_page) as base:
        sb = await BrowserSandbox.create(BrowserConfig(start_url=f"{base}/start", isolation="shared"),
                                         sandbox_id="bx-nav-history")
        try:
            await sb.reset()
            start = await _history(sb)
            assert _paths(start) == [("/start", "reset", [])]
            await sb.act(Goto(url=f"{base}/r1"))
            await sb.act(Back())
            seen = await _history(sb)
            assert _paths(seen) == [("/start", "reset", []), ("/end", "goto", ["/r1", "/r2"]),
                                    ("/start", "back", [])]

            # a judge sees the page visited and left, whatever the end shows
            judge = StateJudge(JudgeSpec.model_validate({"checks": [
                {"check": "/r2 was passed through", "get": {"kind": "navigation"},
                 "expect": {"op": "contains", "value": f"{base}/r2"}}]}))
            key = query_key(NavigationQuery())
            verdict = judge.evaluate(JudgeInput(initial={key: StateResult(value=start)},
                                                final={key: StateResult(value=seen)}))
            assert verdict.passed, verdict.evidence
            assert not judge.evaluate(JudgeInput(initial={key: StateResult(value=start)},
                                                 final={key: StateResult(value=start)})).passed
            # "never" and "at most once" a page: the visits of one path counted
            for path, most, ok in (("/end", 0, False), ("/r1", 1, True), ("/start", 1, False), ("/start", 2, True)):
                count = StateJudge(JudgeSpec.model_validate({"checks": [
                    {"check": f"{path} at most {most}", "get": {"kind": "navigation", "url_path": path},
                     "expect": {"op": "length", "max": most}}]}))
                assert count.evaluate(JudgeInput(initial={key: StateResult(value=start)},
                                                 final={key: StateResult(value=seen)})).passed is ok, path

            ref = await sb.snapshot()
            child = await sb.fork(ref, sandbox_id="bx-nav-history-fork")
            try:
                assert _paths(await _history(child)) == _paths(seen)
                await child.act(Goto(url=f"{base}/other"))
                assert _paths(await _history(child))[-1] == ("/other", "goto", [])
            finally:
                await child.close()
            assert _paths(await _history(sb)) == _paths(seen)  # the fork's steps are its own

            await sb.reset()
            assert _paths(await _history(sb)) == [("/start", "reset", [])]
        finally:
            await sb.close()
