"""The RL soak: thousands of rollouts through `cua rollout serve` while things break.

A real `cua rollout serve` (its own process, with the `cua serve` it starts as its child,
shared isolation) runs groups of rollouts for clients that ask for them as an RL trainer
does: each client POSTs `/rollouts` for one prompt (a seed) at a time, `--group-size`
forked rollouts of it, and asks again when its connection fails. `--concurrency` rollouts
run at once (`--max-episodes`; `concurrency / group_size` clients). The policy is a fake
OpenAI-compatible model (`tests/_model_server.py`, its own process) that on a seeded
draw is slow, answers 500, answers garbage text or a garbled body, and otherwise clicks
once and then stops.

Faults fire on a seeded schedule, spread evenly over the run's progress (fault k when
k/(faults+1) of the groups are answered), their kinds a seeded shuffle of:
- browser: a Chromium browser process under the sandbox server SIGKILLed;
- sandbox_server: the `cua serve` SIGKILLed (the rollout service starts a new one);
- app_host: an app host/service process under the sandbox server SIGKILLed;
- model_down: the model process SIGKILLed, started again on its port 10 s later;
- client_disconnect: one client's request in flight dropped mid-group (the client asks for
  the same prompt again, as a trainer whose connection broke would).

Accounting, from the answers the clients got and the service's disk:
- every planned rollout is completed (scored) or masked with its reason; `lost` counts
  those no answer accounted for;
- scored_infra: a rollout scored (reward or passed set, or not mask_sample) although its
  group was masked, it was masked, or its failure is the infrastructure's;
- duplicated: a rollout answered twice, a rollout scored twice on the service's disk in
  the request folders the clients were answered from, or more scored episodes in the
  curriculum than the clients got. Each client sends its prompt's `Idempotency-Key`, so a
  request asked again after a drop joins the one still running (`cua.rollout.ledger`);
  rollouts scored in a folder no answer names are printed as `dropped_scored_on_disk`
  (0 with the keys: nothing runs twice);
- orphans: rollouts still live, sandboxes still listed by the current `cua serve`, and
  processes of this run (marked by an environment variable) outside the live servers'
  trees, at the end; then any of them still alive after the servers stopped;
- rss_drift: the rollout server's RSS, median of the last quarter of the samples after
  warm-up (the first 20% of groups) against the first quarter.

    python bench/rollout_soak.py [--rollouts 1280] [--concurrency 64] [--group-size 4] [--faults 10]
    python bench/rollout_soak.py --rollouts 64 --concurrency 8    # a quick run, a few minutes

Last line: rollouts=<n> completed=<n> masked=<n> lost=<n> orphans=<n> scored_infra=<n> duplicated=<n> rss_drift=<+x.x%>

Measured 2026-12-06 on this 2-core machine, shared with a judge-QA run and 7 other
engineers' tests (load average 19-27), todo.mark_done@1, 3 steps, groups of 4:
- `python bench/rollout_soak.py --rollouts 1280 --concurrency 64 --faults 10` (the full run):
  wall 1671 s (0.77 rollouts/s), 16 clients; faults: sandbox_server x2, model_down x2,
  app_host x2, browser x2, client_disconnect x2; masked 32 (12 lost to server_lost or
  model_unreachable or sandbox_crashed after retries, 24 their groups' others), 2
  requests dropped and asked again; last line
  `rollouts=1280 completed=1248 masked=32 lost=0 orphans=0 scored_infra=0 duplicated=4 rss_drift=+2.3%`,
  its 4 "duplicates" the rollouts of a dropped request that had finished before the drop,
  counted as duplicates by that version of this script, as `dropped_scored_on_disk` now.
- `python bench/rollout_soak.py --rollouts 256 --concurrency 32 --faults 5` (this version):
  wall 328 s (0.78 rollouts/s), 8 clients; masked 32 (21 lost, mostly server_lost after the
  sandbox server's kill, 11 their groups' others), 1 request dropped; last line
  `rollouts=256 completed=224 masked=32 lost=0 orphans=0 scored_infra=0 duplicated=0 rss_drift=+28.5%`.
  A run this short (5 min) does not get past the rollout server's warm-up: its RSS still
  grows after the first 20% of groups (+28% here, +34% and +43% at 64 rollouts), while the
  28-minute full run's drifted +2.3%.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from _proc import argv, process_tree, rss_bytes  # bench/ is this script's folder
from chaos import victims

from cua.errors import INFRA_FAILURES
from cua.server.app import free_port
from cua.server.auth import generate_token

#: The environment variable every process of this run inherits (how its orphans are found).
MARK = "CUA_ROLLOUT_SOAK_RUN"
FAULTS = ("browser", "sandbox_server", "app_host", "model_down", "client_disconnect")
MODEL_DOWN_S = 10.0
TASK = "todo.mark_done@1"


# --- the fake model, in its own process -------------------------------------------------

def serve_model(port: int, seed: int, slow_s: float) -> None:
    """`tests/_model_server.ModelServer` on `port`, answering by a seeded draw."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from _model_server import DONE, ModelServer, tool_call

    rng = random.Random(seed)
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> int | str | bytes:
        with lock:
            draw, x, y = rng.random(), rng.randrange(10, 600), rng.randrange(10, 400)
        if draw < 0.05:
            return 500
        if draw < 0.09:
            return 'I will click <tool_call>{"name": "computer_use", "argu'  # garbage text
        if draw < 0.11:
            return b'{"choices": [{"message": '  # a garbled body
        if draw < 0.21:
            time.sleep(slow_s)  # slow: a thread of the model server, as a busy GPU would be
        turns = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return DONE if turns >= 1 else tool_call({"action": "left_click", "coordinate": [x, y]})

    server = ModelServer(port)
    server.respond = respond
    print("ready", flush=True)
    threading.Event().wait()


# --- processes ----------------------------------------------------------------------------

def marked_pids(mark: str) -> set[int]:
    """Every live process whose environment carries this run's mark."""
    needle = f"{MARK}={mark}".encode()
    out: set[int] = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        out.add(int(entry.name))
            except OSError:
                continue
    return out


def sandbox_server(rollout_pid: int) -> int | None:
    """The `cua serve` child of the rollout server, if one runs now."""
    for proc in process_tree(rollout_pid):
        args = argv(proc.pid)
        if proc.pid != rollout_pid and b"cua.server" in args and b"--port" in args:
            return proc.pid
    return None


def server_address(pid: int) -> tuple[str, str]:
    """(websocket URL, token) of a `cua serve` process, read from its command line and environment."""
    args = argv(pid)
    port = args[args.index(b"--port") + 1].decode()
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
    return f"ws://127.0.0.1:{port}/v1/ws", env[b"CUA_TOKEN"].decode()


async def stop(proc: asyncio.subprocess.Process, grace_s: float = 60.0) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            proc.kill()
            await proc.wait()


class Model:
    """The fake model's process, on a fixed port so it can come back where it was."""

    def __init__(self, port: int, seed: int, slow_s: float, env: dict[str, str]) -> None:
        self.port, self.seed, self.slow_s, self.env = port, seed, slow_s, env
        self.proc: asyncio.subprocess.Process | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self) -> None:
        self.starts += 1
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--serve-model", str(self.port), "--seed", str(self.seed + self.starts),
            "--slow-s", str(self.slow_s), stdout=asyncio.subprocess.PIPE, env=self.env)
        assert self.proc.stdout is not None
        if (await asyncio.wait_for(self.proc.stdout.readline(), 60)).strip() != b"ready":
            raise RuntimeError("the fake model did not start")

    async def down_for(self, seconds: float) -> None:
        assert self.proc is not None
        self.proc.kill()
        await self.proc.wait()
        await asyncio.sleep(seconds)  # the outage itself: the fault is "unreachable for 10 s"
        await self.start()


# --- the run ------------------------------------------------------------------------------

@dataclass
class Tally:
    planned: int
    #: rollout id -> the answers that carried it
    answers: Counter[str] = field(default_factory=Counter)
    completed: int = 0
    masked: Counter[str] = field(default_factory=Counter)
    scored_infra: list[str] = field(default_factory=list)
    lost_groups: list[int] = field(default_factory=list)
    abandoned: int = 0
    request_errors: Counter[str] = field(default_factory=Counter)
    faults: list[str] = field(default_factory=list)
    #: the request folders of the answers received
    folders: set[str] = field(default_factory=set)
    groups_done: int = 0
    rss: list[tuple[int, int]] = field(default_factory=list)  # (groups done, rollout server RSS)


def account(tally: Tally, group: dict[str, Any], group_size: int) -> None:
    """One answered group into the tally; the scoring rule checked rollout by rollout."""
    trajectories = group["trajectories"]
    #: why the group was masked: a rollout's lost to the infrastructure, or the group never started
    cause = next((t.get("failure") or t["status"] for t in trajectories if t["status"] != "masked"), "?")
    if len(trajectories) != group_size:
        tally.request_errors[f"group of {len(trajectories)}"] += 1
    for t in trajectories:
        tally.answers[t["id"]] += 1
        scored = t["reward"] is not None or t["passed"] is not None or not t["mask_sample"]
        if t["status"] == "completed" and not t["mask_sample"]:
            tally.completed += 1
            infra = t.get("failure") in INFRA_FAILURES or group["masked"]
            last = ((t.get("end") or {}).get("attempts") or [{}])[-1]
            if infra or last.get("status") == "infra_error":
                tally.scored_infra.append(t["id"])
        else:
            tally.masked[t.get("failure") or t["status"] if t["status"] != "masked" else f"group:{cause}"] += 1
            if scored:
                tally.scored_infra.append(t["id"])


async def client(name: int, http: httpx.AsyncClient, url: str, queue: asyncio.Queue[int], body: dict[str, Any],
                 tally: Tally, inflight: dict[int, asyncio.Task[httpx.Response]], group_size: int) -> None:
    """A trainer's rollout worker: one prompt's group at a time, asked again when the
    connection breaks (up to 8 tries, then the group is lost)."""
    while True:
        try:
            seed = queue.get_nowait()
        except asyncio.QueueEmpty:
            return
        for _ in range(8):
            task = asyncio.create_task(http.post(f"{url}/rollouts", json={**body, "seeds": [seed]},
                                                 headers={"Idempotency-Key": f"soak-{seed}"}))
            inflight[name] = task
            try:
                reply = await task
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
                tally.abandoned += 1  # the fault dropped this request: ask again
                continue
            except httpx.TransportError as exc:
                tally.request_errors[type(exc).__name__] += 1
                await asyncio.sleep(1.0)  # the service is away: a trainer's back-off
                continue
            finally:
                inflight.pop(name, None)
            if reply.status_code != 200:
                tally.request_errors[f"http {reply.status_code}"] += 1
                await asyncio.sleep(1.0)
                continue
            answer = reply.json()
            tally.folders.add(answer["folder"])
            for group in answer["groups"]:
                account(tally, group, group_size)
            break
        else:
            tally.lost_groups.append(seed)
        tally.groups_done += 1


async def injector(schedule: list[str], groups: int, tally: Tally, rollout_pid: int, model: Model,
                   inflight: dict[int, asyncio.Task[httpx.Response]], rng: random.Random,
                   background: set[asyncio.Task[None]]) -> None:
    """Fault k fires once k/(len(schedule)+1) of the groups are answered."""
    for k, kind in enumerate(schedule, 1):
        while tally.groups_done < groups * k / (len(schedule) + 1):
            await asyncio.sleep(0.5)  # progress is a counter the clients bump: polled
        server = sandbox_server(rollout_pid)
        pool = victims(server) if server else {}
        done = ""
        if kind in ("browser", "app_host"):
            pids = pool.get("chromium" if kind == "browser" else "service", [])
            if pids:
                pid = rng.choice(pids)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    done = f"{kind} {pid}"
        elif kind == "sandbox_server" and server:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server, signal.SIGKILL)
                done = f"sandbox_server {server}"
        elif kind == "model_down":
            task = asyncio.create_task(model.down_for(MODEL_DOWN_S))
            background.add(task)
            done = f"model_down {MODEL_DOWN_S:.0f}s"
        elif kind == "client_disconnect" and inflight:
            victim = rng.choice(sorted(inflight))
            inflight[victim].cancel()
            done = f"client_disconnect client {victim}"
        tally.faults.append(done or f"{kind} (nothing to hit)")
        print(f"[{time.strftime('%H:%M:%S')}] fault {k}/{len(schedule)}: {tally.faults[-1]}", flush=True)


async def sampler(rollout_pid: int, tally: Tally, stop_event: asyncio.Event) -> None:
    while not stop_event.is_set():
        tally.rss.append((tally.groups_done, rss_bytes(rollout_pid)))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop_event.wait(), 5.0)


def disk_scored(runs: Path, folders: set[str], answered: bool) -> Counter[str]:
    """Rollout id -> scored trajectories of it on the service's disk (an end whose last
    attempt completed), in the request folders the clients were answered from (`answered`)
    or in the others (requests dropped mid-group)."""
    out: Counter[str] = Counter()
    for end in runs.glob("*/*/end.json"):
        if (str(end.parent.parent) in folders) != answered:
            continue
        data = json.loads(end.read_text())
        attempts = data.get("attempts") or [{}]
        if data.get("status") == "completed" and attempts[-1].get("status", "completed") == "completed":
            out[end.parent.name] += 1
    return out


def rss_drift(samples: list[tuple[int, int]], warm_groups: float) -> float:
    after = [rss for done, rss in samples if done >= warm_groups and rss > 0]
    if len(after) < 4:
        return float("nan")
    q = max(1, len(after) // 4)
    return statistics.median(after[-q:]) / statistics.median(after[:q]) - 1


async def orphans_live(url: str, headers: dict[str, str], rollout_pid: int, model: Model, mark: str) -> Counter[str]:
    """What outlives its rollout while the servers still run: live rollouts, listed
    sandboxes, and marked processes outside the live servers' trees."""
    import cua

    out: Counter[str] = Counter()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    async with httpx.AsyncClient(headers=headers) as http:
        while (live := (await http.get(f"{url}/health")).json()["live_rollouts"]) and loop.time() < deadline:
            await asyncio.sleep(1.0)  # rollouts of dropped requests wind down
    out["live_rollouts"] = live
    server = sandbox_server(rollout_pid)
    if server is not None:
        ws, token = server_address(server)
        async with await cua.connect(ws, token) as c:
            while (listed := await c.list(all=True)) and loop.time() < deadline:
                await asyncio.sleep(1.0)  # closes in flight land
            out["sandboxes"] = len(listed)
    known = {p.pid for p in process_tree(rollout_pid)}
    if model.proc is not None:
        known |= {p.pid for p in process_tree(model.proc.pid)}
    stray = marked_pids(mark) - known - {os.getpid()}
    for pid in stray:
        print(f"orphan process {pid}: {b' '.join(argv(pid))[:160].decode(errors='replace')}")
    out["processes"] = len(stray)
    return out


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rollouts", type=int, default=1280)
    ap.add_argument("--concurrency", type=int, default=64, help="rollouts running at once")
    ap.add_argument("--group-size", type=int, default=4)
    ap.add_argument("--faults", type=int, default=10, help="faults injected over the run")
    ap.add_argument("--task", default=TASK)
    ap.add_argument("--max-steps", type=int, default=3)
    ap.add_argument("--max-retries", type=int, default=2)
    ap.add_argument("--slow-s", type=float, default=3.0, help="how long a slow model answer takes")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--runs", type=Path, default=Path("/tmp/cua-rollout-soak"))
    ap.add_argument("--serve-model", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.serve_model is not None:
        serve_model(args.serve_model, args.seed, args.slow_s)
        return

    group_size = min(args.group_size, args.rollouts)
    groups = -(-args.rollouts // group_size)
    rng = random.Random(args.seed)
    kinds = list(FAULTS)
    rng.shuffle(kinds)
    schedule = [kinds[i % len(kinds)] for i in range(args.faults)]
    mark = uuid.uuid4().hex
    env = {**os.environ, MARK: mark}
    if args.runs.exists():
        import shutil

        shutil.rmtree(args.runs)
    model = Model(free_port(), args.seed, args.slow_s, env)
    await model.start()
    port, token = free_port(), generate_token()
    rollout = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).with_name("cua")), "rollout", "serve", "--port", str(port), "--runs", str(args.runs),
        "--max-episodes", str(args.concurrency), "--max-retries", str(args.max_retries),
        stdout=asyncio.subprocess.DEVNULL, env={**env, "CUA_ROLLOUT_TOKEN": token})
    url, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {token}"}
    tally = Tally(planned=groups * group_size)
    started = time.monotonic()
    background: set[asyncio.Task[None]] = set()
    try:
        async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(1800, connect=10),
                                     limits=httpx.Limits(max_connections=args.concurrency + 8)) as http:
            for _ in range(600):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get(f"{url}/health")).status_code == 200:
                        break
                if rollout.returncode is not None:
                    raise SystemExit(f"cua rollout serve exited with {rollout.returncode}")
                await asyncio.sleep(0.2)  # a starting process: nothing else to wait on
            queue: asyncio.Queue[int] = asyncio.Queue()
            for seed in range(groups):
                queue.put_nowait(seed)
            body = {"policy": {"base_url": model.url, "model": "tiny-vl-7b", "max_tokens": 64},
                    "tasks": [args.task], "group_size": group_size, "max_steps": args.max_steps,
                    "isolation": "shared", "frames": "none"}
            inflight: dict[int, asyncio.Task[httpx.Response]] = {}
            stop_event = asyncio.Event()
            sampling = asyncio.create_task(sampler(rollout.pid, tally, stop_event))
            faults = asyncio.create_task(injector(schedule, groups, tally, rollout.pid, model, inflight, rng,
                                                  background))
            clients = max(1, args.concurrency // group_size)
            await asyncio.gather(*(client(i, http, url, queue, body, tally, inflight, group_size)
                                   for i in range(clients)))
            wall = time.monotonic() - started
            stop_event.set()
            faults.cancel()
            await asyncio.gather(sampling, *background, return_exceptions=True)
            curriculum = (await http.get(f"{url}/curriculum")).json()
        orphans = await orphans_live(url, headers, rollout.pid, model, mark)
    finally:
        await stop(rollout)
        if model.proc is not None:
            model.proc.kill()
            await model.proc.wait()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while (left := marked_pids(mark) - {os.getpid()}) and loop.time() < deadline:
        await asyncio.sleep(0.5)  # the servers' children wind down
    orphans["after_stop"] = len(left)

    on_disk = disk_scored(args.runs, tally.folders, answered=True)
    disk_extra = sum(n - 1 for n in on_disk.values() if n > 1)
    dropped = sum(disk_scored(args.runs, tally.folders, answered=False).values())
    curriculum_episodes = sum(t["episodes"] for t in curriculum["templates"].values())
    duplicated = (sum(n - 1 for n in tally.answers.values() if n > 1) + disk_extra
                  + max(0, curriculum_episodes - tally.completed))
    # one seed per group, so every planned rollout has an id of its own: those never answered are lost
    lost = tally.planned - len(tally.answers)
    print(f"wall {wall:.0f} s ({tally.planned / wall:.2f} rollouts/s); clients {clients} x groups of {group_size}; "
          f"faults {tally.faults}; model starts {model.starts}")
    print(f"masked by reason {dict(tally.masked)}; requests dropped {tally.abandoned}; "
          f"request errors {dict(tally.request_errors)}; lost groups {tally.lost_groups}")
    print(f"orphans {dict(orphans)}; disk extra scored {disk_extra}; dropped_scored_on_disk={dropped}; "
          f"curriculum episodes {curriculum_episodes}; "
          f"scored_infra ids {tally.scored_infra[:5]}")
    drift = rss_drift(tally.rss, 0.2 * groups)
    print(f"rollouts={tally.planned} completed={tally.completed} masked={sum(tally.masked.values())} lost={lost} "
          f"orphans={sum(orphans.values())} scored_infra={len(tally.scored_infra)} duplicated={duplicated} "
          f"rss_drift={drift:+.1%}")


if __name__ == "__main__":
    asyncio.run(main())
