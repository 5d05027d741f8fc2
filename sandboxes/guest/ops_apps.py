"""Operations on the apps and files: spawn, kill, apps, wait_window, write_file, run."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from typing import Any

try:
    from . import queries
    from .core import Agent, agent_protected, wait_until
    from .faults import BadRequestFault, GuestFault, UnsupportedFault
except ImportError:  # run as a script from this folder (inside a VM image)
    import queries  # type: ignore[no-redef,import-not-found]
    from core import Agent, agent_protected, wait_until  # type: ignore[no-redef,import-not-found]
    from faults import BadRequestFault, GuestFault, UnsupportedFault  # type: ignore[no-redef,import-not-found]

__all__ = ["op_apps", "op_file_events", "op_kill", "op_run", "op_spawn", "op_wait_window", "op_write_file"]


async def op_spawn(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    argv = req.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadRequestFault("spawn needs argv, a non-empty list of strings")
    if shutil.which(argv[0], path=agent.env.get("PATH")) is None and not os.path.isfile(argv[0]):
        raise UnsupportedFault(f"{argv[0]!r} is not installed in the guest", reason="not_found")
    env = req.get("env") or {}
    if not isinstance(env, dict):
        raise BadRequestFault("env must be an object")
    pid = agent.spawn(argv, {str(k): str(v) for k, v in env.items()}, req.get("cwd"), req.get("name"))
    return {"pid": pid}, []


async def op_kill(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Kill processes: `pids` (their process groups), or `all: true` for every process that
    owns a window or was spawned (the apps; not the X server, the window manager, or us)."""
    agent.reap()
    targets: set[int] = set()
    if req.get("all"):
        targets |= set(agent.children)
        listing = await agent.on_x(agent.screen.windows)
        targets |= {w["pid"] for w in listing["windows"] if w.get("pid")}
    targets |= {int(p) for p in req.get("pids") or []}
    targets.discard(os.getpid())
    targets -= agent_protected
    killed = [pid for pid in sorted(targets) if agent.kill(pid) or agent.kill(pid, group=False)]
    if req.get("wait_windows_gone", True) and killed:
        await wait_until(agent, lambda listing: not any(w.get("pid") in killed for w in listing["windows"]),
                          float(req.get("wait_s", 5.0)))
    return {"killed": killed}, []


async def op_apps(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The processes that own top-level windows, then the apps this agent started that
    own none (a background helper: a task's mail server), with what restarting them needs."""
    agent.reap()
    listing = await agent.on_x(agent.screen.windows)
    apps: dict[int, dict[str, Any]] = {}
    owned: set[int] = set()  # spawned apps accounted for by a window
    for win in listing["windows"]:
        pid = win.get("pid")
        if not pid or pid in agent_protected:
            continue
        app = apps.get(pid)
        if app is None:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    argv = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue  # exited, or not in our pid namespace
            # a window of a process the app started (LibreOffice's soffice.bin under its
            # launcher) is the app's: restarting it means running what was spawned
            spawned = agent.children.get(pid) or agent.children.get(_session_of(pid) or -1)
            if spawned:
                owned.add(spawned["pid"])
            app = apps[pid] = {"pid": pid, "argv": spawned["argv"] if spawned else argv, "cwd": cwd,
                               "name": spawned["name"] if spawned else os.path.basename(argv[0]) if argv else "",
                               "env": spawned["env"] if spawned else {}, "windows": []}
        app["windows"].append({k: win[k] for k in ("id", "title", "class", "x", "y", "width", "height")})
    for pid, child in agent.children.items():
        if pid in owned or pid in apps:
            continue
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue  # exited since the reap
        apps[pid] = {"pid": pid, "argv": child["argv"], "cwd": cwd, "name": child["name"], "env": child["env"],
                     "windows": []}
    return {"apps": sorted(apps.values(), key=lambda a: a["pid"])}, []



async def op_wait_window(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Wait until a window of process `pid`, or of `class` (case-insensitive substring of
    class or instance), is mapped; returns it. With both, a window that names its process
    (_NET_WM_PID) must be that process's; `class` matches the others.

    No fixed short limit (a loaded machine starts apps slowly): with a `pid`, the wait
    fails early only when the app's session has no process left, or when it used no CPU
    for `stall_s` seconds; `wait_s` is the generous outer bound. Errors say what was
    waited for, for how long, and what the app did meanwhile."""
    pid = req.get("pid")
    klass = str(req.get("class") or "").lower()
    if pid is None and not klass:
        raise BadRequestFault("wait_window needs pid or class")
    wait_s = float(req.get("wait_s", 600.0))
    stall_s = float(req.get("stall_s", 120.0))

    def match(w: dict[str, Any]) -> bool:
        if pid is not None and (w.get("pid") is not None or not klass):
            # the app's own process, or one it started (LibreOffice's launcher starts soffice.bin)
            return bool(w.get("pid") == pid or (w.get("pid") and _session_of(int(w["pid"])) == pid))
        return klass in (w.get("class") or "").lower() or klass in (w.get("instance") or "").lower()

    what = " and ".join(x for x in (f"process {pid}" if pid is not None else "",
                                    f"class {klass!r}" if klass else "") if x)
    started = time.monotonic()
    cpu, progressed, checked = -1.0, started, 0.0
    while True:
        listing = await agent.on_x(agent.screen.windows)
        found = next((w for w in listing["windows"] if match(w) and w["mapped"]), None)
        if found is not None:
            return {"window": found, "waited_s": round(time.monotonic() - started, 3)}, []
        now = time.monotonic()
        waited = now - started
        if pid is not None and now - checked >= 1.0:
            checked = now
            alive, used = _session_cpu(int(pid))
            if not alive:
                child = agent.children.get(int(pid))
                status = child["proc"].poll() if child else None
                raise GuestFault(f"no window of {what}: the app exited (status {status}) after {waited:.1f} s "
                                 "without mapping one", reason="exited")
            if used > cpu:
                cpu, progressed = used, now
            elif now - progressed >= stall_s:
                raise GuestFault(f"no window of {what} after {waited:.0f} s: the app used no CPU in the last "
                                 f"{stall_s:g} s ({cpu:.1f} s in all); it is stuck", reason="timeout")
        if waited >= wait_s:
            raise GuestFault(f"no window of {what} within {wait_s:g} s"
                             + (f" (the app used {cpu:.1f} s of CPU)" if cpu >= 0 else ""), reason="timeout")
        # The window list changes without a cheap portable notification here (the EWMH
        # property events need a second connection per waiter); poll at a short interval.
        await asyncio.sleep(0.03)


def _session_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[3])


def _session_cpu(sid: int) -> tuple[bool, float]:
    """Whether any process of session `sid` (an app started in its own session) lives, and
    the CPU seconds its processes used (the leader's count includes its reaped children)."""
    tick = os.sysconf("SC_CLK_TCK")
    alive, total = False, 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited while we looked
        fields = stat[stat.rindex(b")") + 2:].split()
        # fields: state ppid pgrp session ... utime(11) stime(12) cutime(13) cstime(14)
        if int(fields[3]) != sid or fields[0] in (b"Z", b"X"):
            continue
        alive = True
        total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    return alive, total / tick


async def op_file_events(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """The file event log (file_events.py) for a snapshot: `{}` reads it; `{"replace": log}`
    (a log read earlier, or null for an empty one) puts it back after a restore, dropping
    the events of restoring $HOME itself. Returns the log as it now is."""
    if "replace" in req:
        saved = req["replace"]
        if saved is not None and not isinstance(saved, dict):
            raise BadRequestFault("replace needs a file event log (an object) or null")
        await asyncio.to_thread(agent.file_events.replace, saved)
    return {"log": await asyncio.to_thread(agent.file_events.log)}, []


async def op_write_file(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Write the one blob sent with the request to `path` (relative to $HOME): atomically,
    or appended to the file with `append` (a chunked upload). Returns the path and the
    file's size after the write."""
    if len(blobs) != 1:
        raise BadRequestFault("write_file needs exactly one blob")
    path = os.path.normpath(os.path.join(agent.home, os.path.expanduser(str(req.get("path", "")))))
    os.makedirs(os.path.dirname(path) or "/", exist_ok=True)
    if req.get("append"):
        with open(path, "ab") as f:
            f.write(blobs[0])
        agent.give_to_user(path)
    else:
        tmp = f"{path}.cua-tmp-{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(blobs[0])
        if req.get("mode") is not None:
            os.chmod(tmp, int(req["mode"]))
        agent.give_to_user(tmp)
        os.replace(tmp, path)
    return {"path": path, "bytes": len(blobs[0]), "size": os.path.getsize(path)}, []


async def op_run(agent: Agent, req: dict[str, Any], blobs: list[bytes]) -> tuple[dict[str, Any], list[bytes]]:
    """Run one command as the app user, bounded in time and kept output; the optional
    blob is its stdin."""
    argv = req.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise BadRequestFault("run needs argv, a non-empty list of strings")
    if shutil.which(argv[0], path=agent.env.get("PATH")) is None and not os.path.isfile(argv[0]):
        raise UnsupportedFault(f"{argv[0]!r} is not installed in the guest", reason="not_found")
    cwd = os.path.normpath(os.path.join(agent.home, str(req["cwd"]))) if req.get("cwd") else agent.home
    t0 = time.monotonic()
    result = await asyncio.get_running_loop().run_in_executor(None, lambda: queries.bounded_run(
        argv, timeout=float(req.get("time_limit", 30.0)), max_bytes=int(req.get("max_bytes", 100_000)), cwd=cwd,
        env=agent.env, stdin=blobs[0] if blobs else None, run_as=agent.as_user()))
    result["duration_ms"] = round((time.monotonic() - t0) * 1000, 1)
    if result["timed_out"]:
        result["returncode"] = None
    return result, []
