"""MiniWoB++ in cua: the service (in process), the generated suites, and real episodes
in the browser sandbox, where MiniWoB's own JavaScript decides the reward."""

from __future__ import annotations

import asyncio
import shutil
import time
from typing import Any

import pytest
from starlette.testclient import TestClient

from cua.actions import Goto, Wait
from cua.episode import EpisodeContext, NoopAgent, OracleAgent, gather_state, open_local, run_episode
from cua.state import DomQuery, UrlQuery
from cua.task import JudgeInput
from cua.tasks.apps.base import build_asgi
from cua.tasks.miniwob import suitegen
from cua.tasks.miniwob.app import MiniWobApp
from cua.tasks.miniwob.oracles import solvers
from cua.tasks.miniwob.tasks import shipped_tasks
from cua.tasks.oracle import run_steps
from cua.tasks.registry import get_template, list_templates


class _Control:
    """The control endpoints as the host reaches them: no client address (unix socket)."""

    def __init__(self, asgi: Any) -> None:
        async def no_client(scope: Any, receive: Any, send: Any) -> None:
            await asgi({**scope, "client": None}, receive, send)

        self.client = TestClient(no_client)


def _page_headers(task: str, origin: str = "http://127.0.0.1") -> dict[str, str]:
    """What Chromium stamps on the task page's own script requests (no script can set these)."""
    return {"origin": origin, "referer": f"{origin}/miniwob/{task}.html?seed=3", "sec-fetch-site": "same-origin",
            "sec-fetch-mode": "cors", "sec-fetch-dest": "empty"}


def _clients(task: str = "click-button", **kwargs: Any) -> tuple[TestClient, TestClient]:
    """The page side as `task`'s page reaches it, and the control side."""
    asgi = build_asgi(MiniWobApp(**kwargs))
    # a loopback Host, as pages send
    return TestClient(asgi, base_url="http://127.0.0.1", headers=_page_headers(task)), _Control(asgi).client


def test_service_serves_pages_with_the_shim() -> None:
    web, _ = _clients()
    page = web.get("/miniwob/click-button.html?seed=3")
    assert page.status_code == 200 and '<script src="/cua/shim.js"></script></body>' in page.text
    assert web.get("/cua/shim.js").status_code == 200
    assert web.get("/core/core.js").status_code == 200
    assert web.get("/miniwob/no-such-task.html").status_code == 404
    assert web.get("/miniwob/..%2Fcore%2Fcore.html").status_code == 404


def test_one_episode_per_task_and_seed_and_the_first_end_counts() -> None:
    web, ctl = _clients()
    key = {"task": "click-button", "seed": "3"}
    first = web.post("/cua/episode/open", json={**key, "page_limit_ms": 20000}).json()
    assert first == {"status": "new", "limit_ms": 20000, "elapsed_ms": 0}
    web.post("/cua/episode/utterance", json={**key, "utterance": 'Click on the "ok" button.'})
    again = web.post("/cua/episode/open", json={**key, "page_limit_ms": 1}).json()
    assert again["status"] == "resume" and again["limit_ms"] == 20000  # the first load's limit stands
    web.post("/cua/episode/utterance", json={**key, "utterance": "something else"})  # kept: the first one
    assert web.post("/cua/episode/end", json={**key, "reward": -1, "raw_reward": -1, "reason": None}).json() == \
        {"counted": True}
    assert web.post("/cua/episode/end", json={**key, "reward": 0.9, "raw_reward": 1}).json() == {"counted": False}
    over = web.post("/cua/episode/open", json=key).json()
    assert (over["status"], over["raw_reward"], over["utterance"]) == ("over", -1, 'Click on the "ok" button.')
    rows = ctl.get("/__cua/state").json()["episodes"]
    assert [(r["done"], r["raw_reward"], r["loads"]) for r in rows] == [(True, -1.0, 3)]
    other = web.post("/cua/episode/open", json={**key, "seed": "4"}).json()
    assert other["status"] == "new" and other["limit_ms"] == 10000  # MiniWoB's default limit
    ctl.post("/__cua/reset", json={"seed": 0})
    assert ctl.get("/__cua/state").json()["episodes"] == []


def test_a_page_that_drew_its_problem_first_opens_with_its_utterance() -> None:
    """The shim's in-page restart draws, then opens with the utterance in the same call."""
    web, ctl = _clients()
    key = {"task": "click-button", "seed": "5"}
    opened = web.post("/cua/episode/open", json={**key, "page_limit_ms": 10000, "utterance": "Click ok."}).json()
    assert opened == {"status": "new", "limit_ms": 10000, "elapsed_ms": 0}
    again = web.post("/cua/episode/open", json={**key, "utterance": "something else"}).json()
    assert again["status"] == "resume"
    (row,) = ctl.get("/__cua/state").json()["episodes"]
    assert (row["utterance"], row["loads"]) == ("Click ok.", 2)  # stored once, as `utterance` stores it


def test_untimed_service_records_that_it_has_no_limit() -> None:
    web, ctl = _clients("click-test", timed=False)
    assert web.post("/cua/episode/open", json={"task": "click-test", "seed": "1", "page_limit_ms": 10000}).json() == \
        {"status": "new", "limit_ms": 0, "elapsed_ms": 0}
    state = ctl.get("/__cua/state").json()
    assert state["timed"] is False and state["episodes"][0]["time_limit_ms"] is None


def test_bad_reports_are_refused() -> None:
    web, _ = _clients()
    assert web.post("/cua/episode/open", content=b"not json").status_code == 400
    assert web.post("/cua/episode/open", json=[1]).status_code == 400
    assert web.post("/cua/episode/open", json={"task": "click-button"}).status_code == 400
    assert web.post("/cua/episode/end", json={"task": "click-button", "seed": "1", "reward": "high",
                                              "raw_reward": 1}).status_code == 400


def test_only_the_task_s_own_page_reports() -> None:
    """A report is taken only as the task's page's own script sends it: the browser stamps
    where a request comes from in headers no page script can set, so a data: page, a form
    the agent built, another origin's page or another task's page is refused, unstored."""
    asgi = build_asgi(MiniWobApp())
    bare, ctl = TestClient(asgi, base_url="http://127.0.0.1"), _Control(asgi).client  # sends only what it is given
    end = {"task": "click-button", "seed": "3", "reward": 1, "raw_reward": 1, "reason": "forged"}
    own = _page_headers("click-button")
    forged = {
        "no browser (no fetch metadata)": {k: v for k, v in own.items() if not k.startswith("sec-fetch")},
        "a data: page's form": {**own, "origin": "null", "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate",
                                "sec-fetch-dest": "document", "referer": ""},
        "a data: page's fetch": {**own, "origin": "null", "sec-fetch-site": "cross-site", "referer": ""},
        "another port's page": {**own, "origin": "http://127.0.0.1:9", "sec-fetch-site": "same-site",
                                "referer": "http://127.0.0.1:9/miniwob/click-button.html"},
        "a form on the task's origin": {**own, "sec-fetch-mode": "navigate", "sec-fetch-dest": "document"},
        "a frame's load": {**own, "sec-fetch-dest": "iframe"},
        "another task's page": _page_headers("click-test"),
        "a page of another host name": {**own, "origin": "http://localhost"},
    }
    for what, headers in forged.items():
        for path in ("/cua/episode/open", "/cua/episode/end"):
            answer = bare.post(path, json=end, headers=headers)
            assert answer.status_code == 403, (what, path, answer.text)
    assert ctl.get("/__cua/state").json()["episodes"] == []  # nothing stored
    assert bare.post("/cua/episode/open", json=end, headers=own).json()["status"] == "new"  # the page itself
    assert bare.post("/cua/episode/end", json=end, headers=own).json() == {"counted": True}


def test_every_shipped_task_is_a_template_and_the_suite_files_are_current() -> None:
    shipped = shipped_tasks()
    assert len(shipped) >= 100 and set(shipped) <= set(MiniWobApp().task_names())
    assert solvers() <= set(shipped)
    assert suitegen.main(["--check"]) == 0
    for suite in ("miniwob", "miniwob_untimed"):
        templates = list_templates(suite)
        assert len(templates) == len(shipped)
        for template in templates:
            instance = template.instantiate(0)
            task = instance.params["task"]
            assert instance.tags.oracle == (task in solvers()) == (instance.oracle is not None)
            assert instance.setup.instruction_query is not None and instance.setup.end_query is not None
            untimed = "--untimed" in instance.sandbox_config["services"][0]["argv"]
            assert untimed == (suite == "miniwob_untimed")


needs_browser = pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("chromium-headless-shell") is None
                                   and shutil.which("chromium") is None,
                                   reason="the browser sandbox needs bubblewrap and Chromium")


def _run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 240))


def _episode(template_id: str, seed: int, agent_name: str) -> Any:

    instance = get_template(template_id).instantiate(seed)

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            agent = OracleAgent("oracle") if agent_name == "oracle" else NoopAgent()
            return await run_episode(handle, instance, agent)

    return _run(run())


def _row(record: Any) -> dict[str, Any]:
    (evidence,) = record.verdict.evidence
    (row,) = evidence.observed
    return row


@pytest.mark.slow
@needs_browser
@pytest.mark.parametrize("template_id", ["miniwob.click_checkboxes@1", "miniwob.login_user@1"])
def test_oracle_earns_miniwob_reward_and_the_instruction_is_the_utterance(template_id: str) -> None:
    record = _episode(template_id, 4, "oracle")
    assert record.status == "completed", record.error
    assert record.verdict is not None and record.verdict.passed, record.verdict
    row = _row(record)
    assert row["done"] == 1 and row["raw_reward"] == 1.0 and 0 < row["reward"] <= 1.0
    assert row["time_limit_ms"] == 10000 and row["loads"] == 1
    assert record.instruction == row["utterance"] and record.instruction.startswith(("Select", "Enter"))
    assert record.ended  # MiniWoB ended the episode, so the run stopped there


@pytest.mark.slow
@needs_browser
def test_doing_nothing_earns_nothing_and_progress_does_not_pay_for_an_end() -> None:
    record = _episode("miniwob.click_button@1", 4, "noop")
    assert record.status == "completed", record.error
    assert record.verdict is not None and not record.verdict.passed and record.verdict.progress == 0.0
    assert _row(record)["done"] == 0


async def _solve(handle: Any, instance: Any, obs: Any) -> None:
    ctx = EpisodeContext(handle, obs)
    async for action in instance.oracle(ctx):
        ctx.update(await handle.act(action))


async def _steps(handle: Any, obs: Any, steps: list[dict[str, Any]]) -> None:
    """Act as an agent does, through unified actions (oracle steps find where)."""
    ctx = EpisodeContext(handle, obs)
    async for action in run_steps(ctx, steps):
        ctx.update(await handle.act(action))


async def _value(handle: Any, query: Any) -> Any:
    return next(iter((await gather_state(handle, [query])).values())).value


@pytest.mark.slow
@needs_browser
def test_a_wrong_answer_then_a_reload_scores_zero_with_no_second_try() -> None:
    """The reloaded page shows only the end screen: there is no problem left to answer right."""
    instance = get_template("miniwob.click_button@1").instantiate(4)
    judge = instance.judge

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            obs = await handle.reset(seed=instance.reset_seed, options={"start_url": instance.sandbox_config["start_url"]})
            initial = await gather_state(handle, judge.queries())
            wanted = str(await _value(handle, DomQuery(selector="#query", prop="text")))
            buttons = [str(b).strip() for b in await _value(handle, DomQuery(selector="#area button", all=True))]
            wrong = next(i for i, b in enumerate(buttons) if f'"{b}"' not in wanted)
            await _steps(handle, obs, [{"click": {"selector": "#area button", "index": wrong}}])  # a wrong answer
            url = await _value(handle, UrlQuery())
            obs = await handle.act(Goto(url=url))  # reload: MiniWoB has no second try
            cover = await _value(handle, DomQuery(selector='#sync-task-cover[data-cua="episode-over"]', prop="visible"))
            drawn = await _value(handle, DomQuery(selector="#area button", prop="count"))
            final = await gather_state(handle, judge.queries())
            return judge.evaluate(JudgeInput(initial=initial, final=final)), cover, drawn

    verdict, cover, drawn = _run(run())
    assert cover is True and drawn == 0  # the end screen only: the problem is not drawn again
    assert not verdict.passed
    (row,) = verdict.evidence[0].observed
    assert row["done"] == 1 and row["raw_reward"] == -1.0 and row["loads"] == 2


@pytest.mark.slow
@needs_browser
def test_a_reload_mid_episode_resumes_the_same_problem_and_the_clock() -> None:
    instance = get_template("miniwob.enter_text@1").instantiate(2)

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            await handle.reset(seed=instance.reset_seed, options={"start_url": instance.sandbox_config["start_url"]})
            initial = await gather_state(handle, instance.judge.queries())
            before = await _value(handle, instance.setup.instruction_query)
            await handle.act(Wait(seconds=1.5))
            obs = await handle.act(Goto(url=await _value(handle, UrlQuery())))
            after = await _value(handle, instance.setup.instruction_query)
            status = await _value(handle, DomQuery(selector="#cua-wob", prop="attr", attr="data-status"))
            left = str(await _value(handle, DomQuery(selector="#timer-countdown", prop="text")))
            await _solve(handle, instance, obs)
            final = await gather_state(handle, instance.judge.queries())
            return before, after, status, left, instance.judge.evaluate(JudgeInput(initial=initial, final=final))

    before, after, status, left, verdict = _run(run())
    assert before == after and status == "resume"
    assert int(left.split("/")[0].strip()) < 10, left  # the time already spent is off the clock
    assert verdict.passed, verdict
    (row,) = verdict.evidence[0].observed
    assert row["loads"] == 2 and row["raw_reward"] == 1.0


@pytest.mark.slow
@needs_browser
def test_the_task_s_own_time_limit_ends_the_episode() -> None:
    """use-colorwheel sets its own 7 s limit (MiniWoB's default is 10 s)."""


    instance = get_template("miniwob.use_colorwheel@1").instantiate(0)

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            await handle.reset(seed=instance.reset_seed, options={"start_url": instance.sandbox_config["start_url"]})
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not await _value(handle, instance.setup.end_query):
                await handle.act(Wait(seconds=1.0))
            return await gather_state(handle, instance.judge.queries())

    final = _run(run())
    (rows,) = [r.value for r in final.values()]
    assert rows[0]["done"] == 1 and rows[0]["reason"] == "timed out" and rows[0]["raw_reward"] == -1.0
    assert rows[0]["time_limit_ms"] == 7000




def _wrong_button_centre(template_id: str, seed: int) -> tuple[float, float]:
    """Where a wrong button of this variant is drawn (the same seed draws the same page)."""
    instance = get_template(template_id).instantiate(seed)

    async def run() -> tuple[float, float]:
        async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
            await handle.reset(seed=instance.reset_seed, options={"start_url": instance.sandbox_config["start_url"]})
            wanted = str(await _value(handle, DomQuery(selector="#query")))
            texts = [str(t).strip() for t in await _value(handle, DomQuery(selector="#area button", all=True))]
            boxes = await _value(handle, DomQuery(selector="#area button", prop="bbox", all=True))
            box = next(b for t, b in zip(texts, boxes) if f'"{t}"' not in wanted)
            return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    return _run(run())


@pytest.mark.slow
@needs_browser
def test_a_wrong_click_terminates_the_rl_episode_and_pays_nothing() -> None:
    """As MiniWoB's env: a failed episode ends (terminated), and dense reward does not pay
    for the end itself."""
    from cua.rl.env import CuaEnv

    x, y = _wrong_button_centre("miniwob.click_button@1", 4)
    env = CuaEnv("miniwob.click_button@1", reward="dense")
    try:
        _, info = env.reset(seed=4)
        assert info["instruction"].startswith("Click on the")
        _, reward, terminated, truncated, info = env.step({"type": "click", "x": x, "y": y})
        assert terminated and not truncated and reward == 0.0
        assert not info["verdict"].passed and info["progress"] == 0.0
        (row,) = info["verdict"].evidence[0].observed
        assert row["done"] == 1 and row["raw_reward"] == -1.0
    finally:
        env.close()


@pytest.mark.slow
@needs_browser
def test_judge_qa_checks_a_template_without_an_oracle_for_what_needs_none() -> None:
    from cua.qa.check import check_templates

    template = get_template("miniwob.tic_tac_toe@1")
    assert template.tags.oracle is False
    report = _run(check_templates([template], seeds=[0], isolation="shared"))
    (result,) = report.templates
    assert result.failures == [], result.failures
    assert "oracle" in result.probes_skipped and result.probes_ran.get("determinism") == 1


#: A data: page that posts MiniWoB's end report for (task, seed) as a text/plain form whose
#: body is the JSON report (a form needs no preflight, and its body parses as JSON).
_FORGED_END = """<form id=f method=post action="__END__" enctype="text/plain"><input id=i></form><script>
var body = __BODY__; var i = document.getElementById("i");
i.name = body.slice(0, -1) + ',"pad":"'; i.value = '"}'; document.getElementById("f").submit();
</script>"""


@pytest.mark.slow
@needs_browser
@pytest.mark.parametrize("navigation", ["own_origins", "open"])
def test_a_page_the_agent_makes_cannot_report_the_end(navigation: str) -> None:
    """The agent's data: page posts a success report for the episode: the sandbox refuses
    the page (own_origins), and where it lets it load (open) the service refuses the
    report; either way nothing is stored and the task's own page still reports its end."""
    import json
    import urllib.parse

    instance = get_template("miniwob.click_button@1").instantiate(4)
    config = {**instance.sandbox_config, "navigation": navigation}

    async def run() -> Any:
        async with open_local(instance.sandbox_kind, config) as handle:
            obs = await handle.reset(seed=instance.reset_seed, options={"start_url": config["start_url"]})
            initial = await gather_state(handle, instance.judge.queries())
            url = str(await _value(handle, UrlQuery()))
            task, seed = instance.setup.end_query.params
            body = json.dumps({"task": task, "seed": str(seed), "reward": 1, "raw_reward": 1, "reason": "forged"})
            page = _FORGED_END.replace("__END__", url.split("/miniwob/")[0] + "/cua/episode/end")
            forged = await handle.act(Goto(url="data:text/html," + urllib.parse.quote(
                page.replace("__BODY__", json.dumps(body)))))
            after_forgery = await gather_state(handle, [instance.setup.end_query, *instance.judge.queries()])
            obs = await handle.act(Goto(url=url))  # back to the task's page: the episode resumes
            await _solve(handle, instance, obs)
            final = await gather_state(handle, instance.judge.queries())
            return forged, initial, after_forgery, final

    forged, initial, after_forgery, final = _run(run())
    if navigation == "own_origins":
        assert forged.error is not None and forged.error.reason == "bad_url"
    else:
        assert forged.error is None and forged.url.startswith("http://")  # the form went; the service answered 403
    ended, rows = after_forgery.values()
    assert ended.value == [] and rows.value[0]["done"] == 0
    assert not instance.judge.evaluate(JudgeInput(initial=initial, final={k: after_forgery[k] for k in final})).passed
    verdict = instance.judge.evaluate(JudgeInput(initial=initial, final=final))
    assert verdict.passed, verdict  # the task's own page reports as before
    (row,) = verdict.evidence[0].observed
    assert row["raw_reward"] == 1.0 and row["reason"] != "forged"
