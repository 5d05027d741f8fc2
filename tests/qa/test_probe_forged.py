"""Judge QA's `forged_signal` probes (cua/qa/probe_forged.py), in real Chromium: every
forgery of a page signal tried through the sandbox's own actions must fail, and the probe
finds one that does not."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from cua.episode import OracleAgent, gather_state, open_local, run_episode
from cua.qa.judge_qa import ProbeOutcome
from cua.qa.probe_forged import KIND, forged_signal_probes, page_signals
from cua.state import SqlQuery
from cua.tasks.loader import load_text
from cua.tasks.registry import get_template


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 300))


def _after_oracle(template_id: str, **config: Any) -> tuple[ProbeOutcome, Any]:
    """The probe run as `cua tasks check` runs it: on the page the oracle finished on."""
    instance = get_template(template_id).instantiate(0)
    instance = instance.model_copy(update={"sandbox_config": {**instance.sandbox_config, **config}})

    async def run() -> tuple[ProbeOutcome, Any]:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            oracle = await run_episode(handle, instance, OracleAgent("oracle"))
            assert oracle.verdict is not None and oracle.verdict.passed, oracle.verdict
            outcome = await forged_signal_probes(handle, instance)
            rows = None
            if instance.setup.end_query is not None:
                task, seed = instance.setup.end_query.params
                (rows,) = (await gather_state(handle, [SqlQuery(query="SELECT done, reason FROM episodes WHERE task = ? "
                                                                     "AND seed = ?", params=[task, seed])])).values()
            return outcome, rows

    result: tuple[ProbeOutcome, Any] = _run(run())
    return result


def test_which_judges_read_a_page_signal() -> None:
    assert page_signals(get_template("miniwob.click_button@1").instantiate(0)) == [
        "the app's end flag (setup.end_query), which the task's page reports"]
    assert page_signals(get_template("todo.open_list@1").instantiate(0)) == ["page reads (dom, url)"]
    assert page_signals(get_template("todo.complete_overdue@1").instantiate(0)) == []  # app state only


@pytest.mark.slow
def test_a_judge_that_reads_no_page_signal_says_so() -> None:
    instance = get_template("todo.complete_overdue@1").instantiate(0)

    async def run() -> ProbeOutcome:
        async with open_local(instance.sandbox_kind, {**instance.sandbox_config, "isolation": "shared"}) as handle:
            return await forged_signal_probes(handle, instance)

    outcome = _run(run())
    assert outcome.ran == {} and outcome.wrong == []
    assert "reads no page signal" in outcome.skipped[KIND]


@pytest.mark.slow
@pytest.mark.parametrize("template_id", ["todo.open_list@1", "miniwob.click_button@1"])
def test_every_forgery_fails(template_id: str) -> None:
    """Shared isolation: the probe's foreign origin is reachable on host loopback, as
    another sandbox's app is; still no forgery passes."""
    outcome, rows = _after_oracle(template_id, isolation="shared")
    assert outcome.wrong == [], outcome.wrong
    assert outcome.ran == {KIND: 10}
    if rows is not None:  # the forgeries' episode: nothing ended it
        assert rows.value == [{"done": 0, "reason": None}]


@pytest.mark.slow
def test_the_probe_finds_a_forgery_that_passes() -> None:
    """With the sandbox's navigation left open (as before the own-origins policy), a copy
    of the finished page on a foreign origin, at the task page's path, passes a judge
    that reads the URL's path and the heading: the probe names it."""
    outcome, _ = _after_oracle("todo.open_list@1", isolation="shared", navigation="open")
    assert [w[0] for w in outcome.wrong] == [f"probe:{KIND}"]
    assert "foreign_origin" in outcome.wrong[0][1]


#: An app with a flaw the probe must find: every page writes its `q` parameter unescaped.
#: The task: submit the form on "/" (POST /finish), after which /done says "Finished".
REFLECTING_APP = textwrap.dedent('''
    import http.server, os, socketserver, threading, urllib.parse
    state = {"finished": False}
    class Page(http.server.BaseHTTPRequestHandler):
        def answer(self, body, status=200, location=None):
            data = body.encode()
            self.send_response(status)
            if location: self.send_header("Location", location)
            self.send_header("Content-Type", "text/html"); self.send_header("Content-Length", str(len(data)))
            self.end_headers(); self.wfile.write(data)
        def do_GET(self):
            path, _, query = self.path.partition("?")
            said = "".join(urllib.parse.parse_qs(query).get("q", []))
            if path.startswith("/__cua/"):
                return self.answer('{"finished": %s}' % str(state["finished"]).lower())
            if path == "/done":
                head = "Finished" if state["finished"] else "Not yet"
                return self.answer(f"<title>done</title><h1>{head}</h1><p>{said}</p>")
            self.answer(f"<title>start</title><form method=post action=/finish><button>finish</button></form>{said}")
        def do_POST(self):
            if self.path.startswith("/__cua/reset"):
                state["finished"] = False
                return self.answer('{"ok": true}')
            if self.path.startswith("/__cua/"):
                return self.answer('{"ok": true, "rows": []}')
            state["finished"] = True
            self.answer("", 303, "/done")
        def log_message(self, *a): pass
    class Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
        def get_request(self):
            conn, _ = self.socket.accept(); return conn, ("unix", 0)
    tcp = http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["CUA_APP_PORT"])), Page)
    unix = Unix(os.environ["CUA_APP_SOCKET"], Page)
    threading.Thread(target=unix.serve_forever, daemon=True).start()
    print("ready", flush=True)
    tcp.serve_forever()
''')


@pytest.mark.slow
def test_the_probe_finds_a_script_the_app_reflects_into_its_own_page(tmp_path: Path) -> None:
    """Same origin, no page of the agent's making: the app writes a URL's text into its
    page unescaped, so a script in the task page's URL runs in the task's origin and
    writes the finished page over it. The sandbox cannot refuse that URL (it is the
    task's own); the probe finds the flaw and names it."""
    script = tmp_path / "reflecting_app.py"
    script.write_text(REFLECTING_APP)
    suite = textwrap.dedent(f'''
        suite: qa
        defaults:
          sandbox: {{kind: browser, config: {{isolation: shared, start_url: /, services: [{{name: app, argv: [{json.dumps(sys.executable)}, {json.dumps(str(script))}]}}]}}}}
        templates:
          - id: qa.finish@1
            instruction: Finish.
            judge:
              checks:
                - {{check: the done page, get: {{kind: url, part: path}}, expect: {{op: equals, value: /done}}}}
                - {{check: it says finished, get: {{kind: dom, selector: h1}}, expect: {{op: text, value: Finished}}}}
              expected_changes: [finished]
              unjudged: {{finished: "the page the flag leads to is what is judged"}}
            oracle:
              - click: button
    ''')
    (template,) = load_text(suite, suite="qa")
    instance = template.instantiate(0)

    async def run() -> ProbeOutcome:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            oracle = await run_episode(handle, instance, OracleAgent("oracle"))
            assert oracle.verdict is not None and oracle.verdict.passed, oracle.verdict
            return await forged_signal_probes(handle, instance)

    outcome = _run(run())
    names = [reason.split(": ")[1] for _, reason, _ in outcome.wrong]
    assert names == ["reflected_query"], outcome.wrong
