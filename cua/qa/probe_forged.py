"""Judge QA's `forged_signal` probes: every way an agent could forge what a judge reads
from a page, tried through the sandbox's own actions; each forgery must fail.

A judge that reads the page (its URL, title, DOM, storage) or an app's end flag that the
page reports (MiniWoB's end of episode, `setup.end_query`) trusts the task's page. An
agent cannot write script into that page, but it can try to make a page of its own say
the same thing, with nothing but `goto`:

- `javascript:` run in the task's page (it would call the page's own end, `core.endEpisode`);
- a `data:` page holding a copy of the page as the probe found it (the oracle's finished
  page, where there is an oracle) whose script posts a success report to the task's
  origin every way a page can (XHR, fetch, beacon, a form into a frame), and one that
  posts it as a top-level form;
- the same page as a `blob:` (made by a `data:` page) and as a `file:`;
- the same page on a foreign origin (a loopback server of the probe's own, at the task
  page's very path), and a foreign page that opens a popup and writes the copy into it;
- the start page with a script in its URL's query values and path, which runs in the
  task's origin wherever the app writes that text unescaped (it then moves the URL to
  the finished page's, writes the copy over the document and reports).

The forgeries run one after another in one episode, the state judged after each: a
verdict that passes names the forgery that made it. A template whose judge reads no
page signal says so (`probes_skipped["forged_signal"]`).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import http.server
import json
import re
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from cua.actions import Action, Goto
from cua.episode import AgentTurn, EpisodeContext, gather_state, run_episode
from cua.episode.handle import SandboxHandle
from cua.observation import Observation
from cua.qa.judge_qa import ProbeOutcome
from cua.state import A11yQuery, DomQuery, LocalStorageQuery, StateResult, TitleQuery, UrlQuery
from cua.task import JudgeInput, TaskInstance, Verdict

__all__ = ["KIND", "Forgery", "forged_signal_probes", "forgeries", "page_signals", "reflected"]

KIND = "forged_signal"
#: Query kinds a browser sandbox answers from the page itself.
PAGE_READS = (UrlQuery, TitleQuery, DomQuery, LocalStorageQuery, A11yQuery)
#: The path MiniWoB's page reports the end of its episode to (tasks/miniwob/app.py).
MINIWOB_END = "/cua/episode/end"
_SCRIPT = re.compile(r"<script\b.*?</script\s*>", re.IGNORECASE | re.DOTALL)


def page_signals(instance: TaskInstance) -> list[str]:
    """What the judge reads from a page: the app's end flag (reported by its page) and the
    page reads among its queries. Empty: the judge reads no page signal."""
    out: list[str] = []
    if instance.setup.end_query is not None:
        out.append("the app's end flag (setup.end_query), which the task's page reports")
    kinds = sorted({q.kind for q in instance.judge.queries() if isinstance(q, PAGE_READS)})
    if kinds:
        out.append(f"page reads ({', '.join(kinds)})")
    return out


@dataclass(frozen=True)
class Forgery:
    name: str
    description: str
    action: Action


def _reports(instance: TaskInstance, origins: list[str]) -> list[tuple[str, str]]:
    """(URL, body) of every success report to forge: MiniWoB's end of the episode the end
    flag reads (its params are the episode's key: task and seed), to each own origin."""
    end = instance.setup.end_query
    params = list(getattr(end, "params", []) or [])
    if end is None or len(params) != 2:
        return []
    body = json.dumps({"task": str(params[0]), "seed": str(params[1]), "reward": 1, "raw_reward": 1,
                       "reason": "forged"})
    return [(f"{origin}{MINIWOB_END}", body) for origin in origins]


def _origins(page_url: str) -> list[str]:
    """The task page's origin, and its other name (a service answers on both)."""
    parts = urlsplit(page_url)
    origins = [f"{parts.scheme}://{parts.netloc}"]
    if parts.hostname == "127.0.0.1" and parts.port:
        origins.append(f"http://localhost:{parts.port}")
    return origins


def _forging_js(reports: list[tuple[str, str]], *, top_form: bool) -> str:
    """A script that claims success every way a page can: reports to the task's origin
    (XHR, fetch, beacon, a text/plain form whose body is the JSON report), the page's own
    end call and any `__cua*` function it finds."""
    return """
(function () {
  var reports = %s, topForm = %s;
  function form(r, target) {
    var f = document.createElement("form"); f.method = "post"; f.action = r[0]; f.enctype = "text/plain";
    if (target) f.target = target;
    var i = document.createElement("input"); i.name = r[1].slice(0, -1) + ',"cua_pad":"'; i.value = '"}';
    f.appendChild(i); document.documentElement.appendChild(f); f.submit();
  }
  if (topForm) { if (reports.length) form(reports[0], null); return; }
  var sink = document.createElement("iframe"); sink.name = "cua-forge-sink"; sink.style.display = "none";
  document.documentElement.appendChild(sink);
  reports.forEach(function (r) {
    try { var x = new XMLHttpRequest(); x.open("POST", r[0], false); x.setRequestHeader("content-type", "text/plain");
          x.send(r[1]); } catch (e) {}
    try { fetch(r[0], {method: "POST", mode: "no-cors", body: r[1]}); } catch (e) {}
    try { navigator.sendBeacon(r[0], r[1]); } catch (e) {}
    try { form(r, "cua-forge-sink"); } catch (e) {}
  });
  try { if (window.core && core.endEpisode) core.endEpisode(1, false, "forged"); } catch (e) {}
  try { Object.getOwnPropertyNames(window).forEach(function (k) {
    if (/^__cua/.test(k) && typeof window[k] === "function") window[k](location.href); }); } catch (e) {}
})();
""" % (json.dumps(reports), "true" if top_form else "false")


def _forged_page(copy: str, script: str) -> str:
    """The copied page, its own scripts dropped (they would only speak for a foreign
    origin), with the forging script at its end."""
    body = _SCRIPT.sub("", copy)
    return f"{body}<script>{script}</script>"


#: A URL's longest form an agent's `goto` takes (cua.actions.Goto).
_URL_LIMIT = 8192
#: Writes (or, as a blob:, navigates to) a gzipped page: a data: URL holds a larger copy.
_LOADER_JS = """(async function () {
  var bytes = Uint8Array.from(atob("%s"), function (c) { return c.charCodeAt(0); });
  var text = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"))).text();
  if (%s) { location.href = URL.createObjectURL(new Blob([text], {type: "text/html"})); return; }
  document.open(); document.write(text); document.close();
})();"""
_LOADER = "<script>" + _LOADER_JS + "</script>"


def _packed(text: str) -> str:
    return base64.b64encode(gzip.compress(text.encode(), mtime=0)).decode()


def reflected(start_url: str, finished_url: str, copy: str, script: str) -> list[Forgery]:
    """The page the episode starts on with a script in every query value and in its path:
    an app that writes a URL's text into its page unescaped runs it in the task's own
    origin, where it moves the URL to the finished page's (history.replaceState), writes
    the finished page over the document and reports. (The start page, not the finished
    one: that one passes as it is wherever reaching it is the task.)"""
    start, finished = urlsplit(start_url), urlsplit(finished_url)
    if start.scheme not in ("http", "https"):
        return []
    own = f"{start.scheme}://{start.netloc}"
    there = (finished.path or "/") + (f"?{finished.query}" if finished.query else "")
    move = f"try {{ history.replaceState(null, '', {json.dumps(there)}); }} catch (e) {{}}\n"
    fits: list[tuple[str, str]] = []
    for with_copy in (True, False):
        rewrite = (_LOADER_JS % (_packed(_SCRIPT.sub("", copy)), "false")) if with_copy else ""
        payload = "\"'><script>" + move + script + rewrite + "</script>"
        names = [pair.partition("=")[0] for pair in start.query.split("&") if pair] + ["q"]
        query = "&".join(f"{quote(n, safe='')}={quote(payload, safe='')}" for n in dict.fromkeys(names))
        urls = [("query", f"{own}{start.path or '/'}?{query}"),
                ("path", f"{own}{(start.path or '/').rstrip('/')}/{quote(payload, safe='')}")]
        fits = [(where, url) for where, url in urls if len(url) <= _URL_LIMIT]
        if len(fits) == len(urls):
            break
    return [Forgery(f"reflected_{where}", f"the start page with a script in its URL's {where} (run in the task's "
                    "origin if the app wrote it unescaped: it moves the URL, writes the finished page, reports)",
                    Goto(url=url)) for where, url in fits]


def _data_url(page: str, *, as_blob: bool = False) -> str:
    """A data: URL of `page` (or of a page that opens it as a blob:) within `_URL_LIMIT`:
    as it is where it fits, else gzipped behind a loader, else its copy cut short."""
    plain = "data:text/html;base64," + base64.b64encode(page.encode()).decode()
    if not as_blob and len(plain) <= _URL_LIMIT:
        return plain
    text = page
    while True:
        loader = _LOADER % (_packed(text), "true" if as_blob else "false")
        url = "data:text/html;base64," + base64.b64encode(loader.encode()).decode()
        if len(url) <= _URL_LIMIT or len(text) < 64:
            return url
        text = text[len(text) // 4:]  # keep the end: the forging script is there


class _Foreign:
    """A loopback HTTP server of the probe's own: a foreign origin serving forged pages."""

    def __init__(self, pages: dict[str, str], fallback: str) -> None:
        served = pages

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                data = served.get(self.path.partition("?")[0], fallback).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def forgeries(instance: TaskInstance, page_url: str, page_html: str) -> Iterator[list[Forgery]]:
    """Every forgery of the signals of `instance`, given the task's page as the probe
    found it (its URL and HTML); the foreign server and the file live for the block."""
    parts = urlsplit(page_url)
    reports = _reports(instance, _origins(page_url))
    page = _forged_page(page_html, _forging_js(reports, top_form=False))
    page_form = _forged_page(page_html, _forging_js(reports, top_form=True))
    popup = ("<title>popup</title><script>var w = window.open('about:blank', '_blank');"
             f"if (w) {{ w.document.open(); w.document.write({json.dumps(page)}); w.document.close(); }}</script>")
    foreign = _Foreign({"/__cua_forge/popup": popup, "/__cua_forge/form": page_form}, page)
    with tempfile.TemporaryDirectory(prefix="cua-forge-") as folder:
        forged_file = Path(folder) / "page.html"
        forged_file.write_text(page, encoding="utf-8")
        try:
            yield [
                Forgery("javascript", "a javascript: URL run in the task's page (its own end call, every __cua* "
                        "function, forged reports)", Goto(url="javascript:" + quote(_forging_js(reports, top_form=False)))),
                Forgery("data", "a data: page: a copy of the task's page that posts success reports (XHR, fetch, "
                        "beacon, form)", Goto(url=_data_url(page))),
                Forgery("data_form", "a data: page that posts a success report as a top-level form",
                        Goto(url=_data_url(page_form))),
                Forgery("blob", "a blob: page (made by a data: page) holding the forged copy",
                        Goto(url=_data_url(page, as_blob=True))),
                Forgery("file", "a file: page holding the forged copy", Goto(url=forged_file.as_uri())),
                Forgery("foreign_origin", "the forged copy on a foreign origin, at the task page's own path",
                        Goto(url=foreign.origin + (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))),
                Forgery("foreign_form", "a foreign origin's page that posts a success report as a top-level form",
                        Goto(url=foreign.origin + "/__cua_forge/form")),
                Forgery("foreign_popup", "a foreign origin's page that opens a popup and writes the forged copy into it",
                        Goto(url=foreign.origin + "/__cua_forge/popup")),
            ]
        finally:
            foreign.close()


class _Forger:
    """Plays the forgeries one per turn, judging the state before each next one."""

    name = "forged_signal"

    def __init__(self, instance: TaskInstance, plays: list[Forgery],
                 at_start: Callable[[str], list[Forgery]] | None = None) -> None:
        self._instance = instance
        self._plays = plays
        #: Forgeries made from the start page's URL (known once the episode has reset), played first.
        self._at_start = at_start
        self._ctx: EpisodeContext | None = None
        self._initial: dict[str, StateResult] = {}
        #: (forgery, verdict on the state it left, the sandbox's refusal if any)
        self.judged: list[tuple[Forgery, Verdict, str | None]] = []
        #: Forgeries played so far.
        self.played = 0
        #: The state passes before any forgery (the `initial` stage fails for it): none is played.
        self.passes_at_start = False

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._ctx = ctx
        if self._at_start is not None and ctx.observation.url:
            self._plays[:0] = self._at_start(ctx.observation.url)
        self._initial = await gather_state(ctx.handle, instance.judge.queries())
        start = instance.judge.evaluate(JudgeInput(initial=self._initial, final=self._initial, steps=0))
        self.passes_at_start = start.passed

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._ctx is not None
        done = len(self.judged)
        if self.played > done:  # judge what the last forgery left
            final = await gather_state(self._ctx.handle, self._instance.judge.queries())
            verdict = self._instance.judge.evaluate(JudgeInput(initial=self._initial, final=final, steps=self.played))
            error = observation.error
            self.judged.append((self._plays[done], verdict, f"{error.reason}: {error.message}" if error else None))
        if self.played >= len(self._plays) or self.passes_at_start:
            return AgentTurn()
        self.played += 1
        return AgentTurn(actions=[self._plays[self.played - 1].action])


async def _page(handle: SandboxHandle) -> tuple[str, str] | None:
    state = await gather_state(handle, [UrlQuery(), DomQuery(selector="html", prop="html")])
    url, html = state.values()
    if not url.ok or not html.ok or not isinstance(url.value, str) or not isinstance(html.value, str):
        return None
    if urlsplit(url.value).scheme not in ("http", "https"):
        return None
    return url.value, html.value


async def forged_signal_probes(handle: SandboxHandle, instance: TaskInstance) -> ProbeOutcome:
    """Try every forgery of the page signals `instance`'s judge reads, from the page the
    sandbox shows now (the oracle's finished page, or the start page); each must fail."""
    outcome = ProbeOutcome()
    if instance.sandbox_kind != "browser":
        outcome.skipped[KIND] = f"a {instance.sandbox_kind} sandbox: no browser page of the task's to forge"
        return outcome
    signals = page_signals(instance)
    if not signals:
        outcome.skipped[KIND] = "the judge reads no page signal (no page read, no end flag the page reports)"
        return outcome
    page = await _page(handle)
    if page is None:
        outcome.skipped[KIND] = "the task's page is not an http(s) page of its own that a forgery could copy"
        return outcome
    url, html = page
    script = _forging_js(_reports(instance, _origins(url)), top_form=False)
    with forgeries(instance, url, html) as plays:
        forger = _Forger(instance, plays, lambda start: reflected(start, url, html, script))
        record = await run_episode(handle, instance, forger, max_steps=len(plays) + 3)
    if record.status != "completed":
        err = record.error
        outcome.wrong.append((f"probe:{KIND}", f"the forgeries' episode did not complete: {record.status}: "
                                               f"{(err.message or err.code) if err is not None else None}", None))
        return outcome
    if forger.passes_at_start:
        outcome.skipped[KIND] = "the state passes before any forgery (the initial state must fail first)"
        return outcome
    judged = list(forger.judged)
    if record.verdict is not None and forger.played > len(judged):  # the last forgery, judged by the episode
        judged.append((plays[forger.played - 1], record.verdict, None))
    for forgery, verdict, refusal in judged:
        outcome.ran[KIND] = outcome.ran.get(KIND, 0) + 1
        if verdict.passed:
            how = f" (the sandbox said {refusal})" if refusal else ""
            outcome.wrong.append((f"probe:{KIND}", f"a forged signal passes ({', '.join(signals)}): "
                                                   f"{forgery.name}: {forgery.description}{how}", verdict))
    if record.verdict is not None and record.verdict.passed and not any(v.passed for _, v, _ in judged):
        outcome.wrong.append((f"probe:{KIND}", "the episode of forgeries ends passing", record.verdict))
    return outcome
