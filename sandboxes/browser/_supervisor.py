"""Runs INSIDE a container sandbox's namespaces: starts the services, then the browser.

Started by the generated wrapper as `python -I _supervisor.py SPEC.json -- CHROMIUM ARGS...`
(run by path, stdlib only, so it starts in a few tens of milliseconds). It

1. starts every service with $CUA_APP_PORT / $CUA_APP_SOCKET / $CUA_APP_SEED and waits
   until each prints `ready` (or fails, or times out),
2. starts Chromium with the debugging pipes (fds 3 and 4) Playwright handed to us,
3. watches both: when a service dies it kills the browser (so the host sees the
   sandbox die at once), and when the browser exits it stops the services.

It writes `status.json` next to the spec so the host can say *why* a launch failed.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from typing import Any


def _write_status(path: str, **status: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(status, f)
    os.replace(tmp, path)


def _stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    deadline = time.monotonic() + 2.0
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _start_services(spec: dict[str, Any]) -> tuple[list[subprocess.Popen[bytes]], str | None]:
    procs: list[subprocess.Popen[bytes]] = []
    sel = selectors.DefaultSelector()
    pending: dict[int, tuple[dict[str, Any], subprocess.Popen[bytes], bytearray, float]] = {}
    for svc in spec["services"]:
        env = {**os.environ, **svc["env"], "CUA_APP_PORT": str(svc["port"]), "CUA_APP_SOCKET": svc["socket"],
               "CUA_APP_SEED": str(spec["seed"])}
        try:
            proc = subprocess.Popen(svc["argv"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            _stop(procs)
            return [], f"service {svc['name']!r} could not start: {exc}"
        procs.append(proc)
        assert proc.stdout is not None
        os.set_blocking(proc.stdout.fileno(), False)
        sel.register(proc.stdout, selectors.EVENT_READ, svc["name"])
        pending[proc.stdout.fileno()] = (svc, proc, bytearray(), time.monotonic() + svc["ready_timeout"])
    while pending:
        deadline = min(d for *_, d in pending.values())
        events = sel.select(timeout=max(0.0, deadline - time.monotonic()))
        if not events and time.monotonic() >= deadline:
            late = [s["name"] for s, _, _, d in pending.values() if d <= time.monotonic()]
            _stop(procs)
            return [], f"service(s) {late} did not print 'ready' in time"
        for key, _ in events:
            svc, proc, buf, _d = pending[key.fd]
            chunk = os.read(key.fd, 65536)
            if not chunk:
                proc.wait()
                _stop(procs)
                return [], f"service {svc['name']!r} exited with code {proc.returncode} before it was ready"
            buf.extend(chunk)
            if any(line.strip() == b"ready" for line in bytes(buf).splitlines()):
                sel.unregister(key.fileobj)
                del pending[key.fd]
    sel.close()
    return procs, None


def main() -> int:
    spec_path, sep, *browser_argv = sys.argv[1:]
    assert sep == "--", "usage: _supervisor.py SPEC -- BROWSER ARGS..."
    with open(spec_path) as f:
        spec = json.load(f)
    status_path = os.path.join(os.path.dirname(spec_path), "status.json")
    services, error = _start_services(spec)
    if error:
        _write_status(status_path, state="failed", error=error)
        print(f"cua: {error}", file=sys.stderr, flush=True)
        return 3
    browser = subprocess.Popen(browser_argv, pass_fds=(3, 4))
    os.close(3)
    os.close(4)
    _write_status(status_path, state="running", services=[p.pid for p in services], browser=browser.pid)

    stopping = False

    def _forward(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        if browser.poll() is None:
            browser.send_signal(signum)

    signal.signal(signal.SIGTERM, _forward)
    signal.signal(signal.SIGINT, _forward)

    sel = selectors.DefaultSelector()
    bfd = os.pidfd_open(browser.pid)
    sel.register(bfd, selectors.EVENT_READ, ("browser", browser))
    for svc, proc in zip(spec["services"], services, strict=True):
        sel.register(os.pidfd_open(proc.pid), selectors.EVENT_READ, (svc["name"], proc))
        assert proc.stdout is not None
        # Keep draining service stdout so a chatty service never blocks on a full pipe.
        sel.register(proc.stdout, selectors.EVENT_READ, ("stdout", proc))
    while True:
        for key, _ in sel.select():
            name, proc = key.data
            if name == "stdout":
                chunk = os.read(key.fd, 65536)
                if chunk:
                    sys.stderr.buffer.write(chunk)
                    sys.stderr.flush()
                else:
                    sel.unregister(key.fileobj)
                continue
            if proc is browser:
                code = browser.wait()
                _stop(services)
                _write_status(status_path, state="exited", browser_returncode=code)
                return 0 if stopping else code
            code = proc.wait()
            _write_status(status_path, state="service_died", service=name, returncode=code)
            print(f"cua: service {name!r} died (exit code {code}); stopping the browser", file=sys.stderr, flush=True)
            browser.kill()
            browser.wait()
            _stop(services)
            return 4


if __name__ == "__main__":
    sys.exit(main())
