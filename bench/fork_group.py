"""Group-rollout start: 8 forks of one live browser sandbox, through the client.

A todo task is reset and changed (a todo ticked, so the start state is not the app's
seed state), a snapshot is taken, and 8 forks of it are requested at once over one
connection to a `cua serve` child process. The figure is the time from sending the
requests until all 8 forks have answered with their first observation (ready to act).
The forks must start identical: the same screenshot pixels and the same judge state
(the task judge's queries answered alike), and that state must be the parent's.

Reference, in the same run (`--no-reference` skips it): the floor under any fork built on
Playwright. Raw public Playwright on the same Chromium build and switches loads the
parent's page into 8 browser contexts at once, each made in advance with the app's start
page loaded (as the server's fork spares are), and takes each one's JPEG q80 capture: one
page load and one capture per fork, with no app state to restore and no settling. On a
machine with few cores both figures are set by the CPU those loads and captures take.

    python bench/fork_group.py [--rounds 3] [--forks 8] [--no-reference]

Last line: fork8_ms_shared=<p50> fork8_ms_container=<p50>
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import re
import statistics
import time
from typing import Any

import numpy as np
from _apps import host_app  # bench/ is this script's folder
from PIL import Image
from playwright.async_api import async_playwright

import cua
from cua.actions import Click
from cua.client import RemoteSandbox
from cua.server.app import serve_in_subprocess
from cua.state import DomQuery
from cua.tasks.registry import get_template

TASK = "todo.mark_done@1"


def pixels(obs: Any) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB"))


_PORT = re.compile(r"(127\.0\.0\.1|localhost):\d+")


async def judge_state(sb: RemoteSandbox, queries: list[Any]) -> list[Any]:
    """The judge's reads, with loopback ports blanked: in shared isolation every sandbox's
    app listens on its own port, so its URLs differ by the port alone."""
    return [(r.ok, json.loads(_PORT.sub(r"\1:*", json.dumps(r.value, sort_keys=True)))) for r in await sb.query(queries)]


async def prepare(client: cua.client.Client, isolation: str) -> tuple[RemoteSandbox, Any, list[Any]]:
    instance = get_template(TASK).instantiate(0)
    config = {**instance.sandbox_config, "isolation": isolation}
    sb = await client.create(instance.sandbox_kind, config=config)
    await sb.reset(seed=instance.seed)
    (card,) = await sb.query([DomQuery(selector="a.list-card", prop="bbox")])
    b = card.value
    await sb.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))
    (box,) = await sb.query([DomQuery(selector="tr.todo input.toggle", prop="bbox")])
    b = box.value
    await sb.act(Click(x=b["x"] + b["width"] / 2, y=b["y"] + b["height"] / 2))
    return sb, await sb.snapshot(), list(instance.judge.queries())


async def spares_ready(parent: RemoteSandbox, forks: int, timeout: float = 120.0) -> int:
    """Wait until the server holds `forks` pre-started fork targets for this config (the
    browser sandbox refills them in the background after a group; in a training loop the
    group's episodes cover that time). Polls the parent's info: the server has no event for it."""
    deadline = time.monotonic() + timeout
    while (ready := int((await parent.refresh()).details.get("fork_spares", 0))) < forks:
        if time.monotonic() > deadline:
            break
        await asyncio.sleep(0.2)
    return ready


async def one_round(parent: RemoteSandbox, ref: Any, queries: list[Any], forks: int) -> float:
    started = time.perf_counter()
    children = await asyncio.gather(*(parent.fork(ref) for _ in range(forks)))
    elapsed = (time.perf_counter() - started) * 1000
    try:
        expected = pixels(parent.observation)
        want = await judge_state(parent, queries)
        states = await asyncio.gather(*(judge_state(c, queries) for c in children))
        for child, state in zip(children, states, strict=True):
            got = pixels(child.observation)
            if got.shape != expected.shape or not np.array_equal(got, expected):
                diff = int((got != expected).any(axis=-1).sum()) if got.shape == expected.shape else -1
                raise AssertionError(f"fork {child.id} starts with another screen ({diff} pixels differ)")
            if state != want:
                diff = [i for i, (a, b) in enumerate(zip(state, want, strict=True)) if a != b]
                raise AssertionError(f"fork {child.id} starts with another judge state (queries {diff} differ)")
    finally:
        await asyncio.gather(*(c.close() for c in children))
    return elapsed


async def raw_floor(path: str, rounds: int, forks: int) -> float:
    """Milliseconds until `forks` raw Playwright contexts have loaded `path` and been captured (p50)."""
    from cua.sandboxes.browser.launcher import BASE_ARGS, find_executable

    shot = {"format": "jpeg", "quality": 80, "optimizeForSpeed": True}
    times = []
    async with host_app() as app_url, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=find_executable().path, args=list(BASE_ARGS))
        for _ in range(rounds + 1):  # the first round warms the browser up, as the sandbox's cold round does
            pages = []
            for _ in range(forks):
                context = await browser.new_context(viewport={"width": 1280, "height": 720})
                page = await context.new_page()
                await page.goto(app_url + "/")
                pages.append((page, await context.new_cdp_session(page)))
            await asyncio.sleep(0.5)

            async def fork(page: Any, cdp: Any) -> None:
                await page.goto(app_url + path, wait_until="load")
                if not (await cdp.send("Page.captureScreenshot", shot))["data"]:
                    raise RuntimeError("empty capture")

            started = time.perf_counter()
            await asyncio.gather(*(fork(page, cdp) for page, cdp in pages))
            times.append((time.perf_counter() - started) * 1000)
            await asyncio.gather(*(page.context.close() for page, _ in pages))
        await browser.close()
    p50 = statistics.median(times[1:])
    print(f"raw Playwright floor: {forks} page loads + captures at once, ms per round "
          f"{[round(t) for t in times[1:]]}, p50 {p50:.0f}", flush=True)
    return p50


async def bench(isolation: str, rounds: int, forks: int) -> tuple[float, str]:
    async with serve_in_subprocess(max_sandboxes=forks + 4) as server:
        async with cua.connect(server.url, server.token, default_timeout=180) as client:
            parent, ref, queries = await prepare(client, isolation)
            path = "/" + parent.observation.url.split("/", 3)[3] if parent.observation.url else "/"
            # the parent's observation after the snapshot is the reference screen
            await parent.restore(ref)
            cold = await one_round(parent, ref, queries, forks)  # also teaches the server the group size
            times, spares = [], []
            for _ in range(rounds):
                spares.append(await spares_ready(parent, forks))
                times.append(await one_round(parent, ref, queries, forks))
            await parent.close()
    p50 = statistics.median(times)
    print(f"{isolation}: fork{forks} cold {cold:.0f} ms; with spares ready {spares}: ms per round "
          f"{[round(t) for t in times]}, p50 {p50:.0f}", flush=True)
    return p50, path


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--forks", type=int, default=8)
    ap.add_argument("--isolation", choices=["shared", "container", "both"], default="both")
    ap.add_argument("--no-reference", dest="reference", action="store_false", help="skip the raw Playwright floor")
    args = ap.parse_args()
    figures: dict[str, float] = {}
    path = "/"
    for isolation in (["shared", "container"] if args.isolation == "both" else [args.isolation]):
        figures[isolation], path = await bench(isolation, args.rounds, args.forks)
    if args.reference:
        floor = await raw_floor(path, args.rounds, args.forks)
        print(" ".join(f"{k}/raw={v / floor:.2f}" for k, v in figures.items()))
    print(" ".join(f"fork{args.forks}_ms_{k}={v:.0f}" for k, v in figures.items()))


if __name__ == "__main__":
    asyncio.run(main())
