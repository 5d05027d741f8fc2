"""State getters the judges need, answered inside the guest (standard library only).

Each takes a query dict in `cua.state` shape and returns a result dict in
`cua.state.StateResult` shape: {"ok", "value"} or {"ok": false, "error", "message"}.
File bytes come back as a blob (the result says {"blob": index}); the host client
turns them into the base64 that `FileQuery(mode="bytes")` promises.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

try:
    from .file_events import FileEvents
    from .manifest import manifest
except ImportError:  # run as a script from this folder (inside a VM image)
    from file_events import FileEvents  # type: ignore[no-redef,import-not-found]
    from manifest import manifest  # type: ignore[no-redef,import-not-found]

__all__ = ["answer", "bounded_run", "A11Y_SCRIPT"]

A11Y_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "a11y.py")


#: Where a judge's command finds its programs: the system's folders only. The agent can write
#: its home folder (~/.local/bin, ~/bin) and /tmp, and a PATH through any of them would let a
#: planted `python3` or `tar` answer for the judge.
JUDGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/snap/bin"


def judge_env(env: dict[str, str]) -> dict[str, str]:
    """The environment a judge's command runs in: the guest's, with the system PATH above,
    no file a non-interactive shell would source (BASH_ENV, ENV), and every Python told to
    keep the working folder (the home folder, which the agent writes) and the user's
    site-packages off its import path (PYTHONSAFEPATH needs 3.11; older ones need `-I`).

    Threat model: what the agent controls is the home folder (dotfiles, ~/.local, planted
    modules) and /tmp, not this process's environment. A judge reads state; it must never
    run a program, module, rc file, alias or function from there."""
    out = {k: v for k, v in env.items() if k not in ("BASH_ENV", "ENV", "PYTHONPATH", "PYTHONSTARTUP",
                                                      "PYTHONUSERBASE")}
    out.update(PATH=JUDGE_PATH, PYTHONSAFEPATH="1", PYTHONNOUSERSITE="1")
    return out


def _fail(error: str, message: str) -> dict[str, Any]:
    return {"ok": False, "value": None, "error": error, "message": message}


def _ok(value: Any) -> dict[str, Any]:
    return {"ok": True, "value": value}


def bounded_run(argv: list[str], *, timeout: float, max_bytes: int, cwd: str | None = None,
                env: dict[str, str] | None = None, stdin: bytes | None = None,
                run_as: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run argv (no shell) in its own session; keep at most max_bytes of each stream; kill
    the whole process group at the time limit. Returns {returncode, stdout, stderr,
    truncated, timed_out}."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
                            start_new_session=True, **(run_as or {}))
    if stdin is not None and proc.stdin is not None:
        try:
            proc.stdin.write(stdin)
        except BrokenPipeError:
            pass  # the command exited without reading its input; its output still counts
        proc.stdin.close()
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    truncated = False
    open_fds = set(bufs)
    deadline = time.monotonic() + timeout
    timed_out = False
    while open_fds:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(list(open_fds), [], [], left)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.discard(fd)
                continue
            room = max_bytes - len(bufs[fd])
            if len(chunk) > room:
                truncated = True
            bufs[fd] += chunk[:max(room, 0)]
    if timed_out:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    try:
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic()) if not timed_out else 5)
    except subprocess.TimeoutExpired:
        # Streams closed but the process lingers (it closed its stdout): still bounded.
        timed_out = True
        os.killpg(proc.pid, signal.SIGKILL)
        code = proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return {"returncode": code, "stdout": bufs[out_fd].decode("utf-8", "replace"),
            "stderr": bufs[err_fd].decode("utf-8", "replace"),
            "truncated": truncated, "timed_out": timed_out}


class QueryContext:
    def __init__(self, home: str, env: dict[str, str], windows: Callable[[], dict[str, Any]],
                 run_as: dict[str, Any] | None = None, events: FileEvents | None = None) -> None:
        self.home = home
        #: The file event log the `files` query adds (None: the manifest alone).
        self.events = events
        self.env = env
        self.windows = windows
        #: Popen arguments that run commands as the app user (see Agent.as_user).
        self.run_as = run_as or {}
        self.blobs: list[bytes] = []

    def path(self, p: str) -> str:
        return os.path.normpath(os.path.join(self.home, os.path.expanduser(p)))


def _file(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    path = ctx.path(str(q.get("path", "")))
    mode = q.get("mode", "text")
    max_bytes = int(q.get("max_bytes", 1_000_000))
    if mode == "exists":
        return _ok(os.path.lexists(path))
    if mode == "list":
        if not os.path.isdir(path):
            return _fail("not_found", f"{path} is not a directory")
        return _ok(sorted(os.listdir(path)))
    if not os.path.exists(path):
        return _fail("not_found", f"{path} does not exist")
    if os.path.isdir(path):
        return _fail("failed", f"{path} is a directory")
    if mode == "sha256":
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        return _ok(digest.hexdigest())
    size = os.path.getsize(path)
    if size > max_bytes:
        return _fail("too_large", f"{path} has {size} bytes, more than max_bytes={max_bytes}")
    with open(path, "rb") as f:
        data = f.read(max_bytes)
    if mode == "text":
        return _ok(data.decode("utf-8", "replace"))
    if mode == "bytes":
        ctx.blobs.append(data)
        return {"ok": True, "value": None, "blob": len(ctx.blobs) - 1}
    return _fail("failed", f"unknown file mode {mode!r}")


def _command(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    argv = q.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return _fail("failed", "argv must be a non-empty list of strings")
    env = judge_env(ctx.env)
    if "/" not in argv[0] and shutil.which(argv[0], path=env["PATH"]) is None:
        return _fail("not_found", f"command {argv[0]!r} not found in {env['PATH']}")
    if "/" in argv[0] and not os.path.isabs(argv[0]):
        return _fail("failed", f"command {argv[0]!r}: a judge names a program by an absolute path or a bare "
                               "name looked up in the system folders, never relative to the home folder")
    if "/" in argv[0] and not os.path.isfile(argv[0]):
        return _fail("not_found", f"command {argv[0]!r} not found")
    timeout = float(q.get("timeout", 10.0))
    cwd = ctx.path(q["cwd"]) if q.get("cwd") else ctx.home
    result = bounded_run(argv, timeout=timeout, max_bytes=int(q.get("max_bytes", 100_000)), cwd=cwd, env=env,
                         run_as=ctx.run_as)
    if result["timed_out"]:
        return _fail("timeout", f"{argv[0]} did not finish within {timeout:g} s")
    return _ok({k: result[k] for k in ("returncode", "stdout", "stderr", "truncated")})


def _files(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    roots = q.get("roots") or ["."]
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        return _fail("failed", "roots must be a list of folders")
    # The events first: a change made while the manifest is read is then in the manifest.
    events = ctx.events.log([str(r) for r in roots]) if ctx.events is not None else None
    value = manifest(ctx.home, [str(r) for r in roots], hidden=bool(q.get("hidden", False)),
                     max_entries=int(q.get("max_entries", 20_000)))
    if events is not None:
        value["events"] = events
    return _ok(value)


def _clipboard(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    if shutil.which("xclip") is None:
        return _fail("unsupported", "xclip is not installed in the guest")
    for target in ("UTF8_STRING", "STRING"):
        result = bounded_run(["xclip", "-selection", "clipboard", "-o", "-t", target],
                             timeout=5.0, max_bytes=10_000_000, env=judge_env(ctx.env), run_as=ctx.run_as)
        if result["timed_out"]:
            return _fail("timeout", "the clipboard owner did not answer within 5 s")
        if result["returncode"] == 0:
            return _ok(result["stdout"])
    return _ok(None)  # nobody owns the clipboard, or it holds no text


def _windows(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    return _ok(ctx.windows())


def _a11y_python(as_other_user: bool = False) -> str:
    """A Python with the GObject bindings (gi): ours, else the system's (always the
    system's for another user, who may not be able to read ours)."""
    if importlib.util.find_spec("gi") is not None and not as_other_user:
        return sys.executable
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def _a11y(q: dict[str, Any], ctx: QueryContext) -> dict[str, Any]:
    if not ctx.env.get("DBUS_SESSION_BUS_ADDRESS"):
        return _fail("unsupported", "no D-Bus session bus in this desktop, so no AT-SPI accessibility tree "
                                    "(start the agent with --dbus; the desktop config's accessibility: true)")
    # AT-SPI is one D-Bus round trip per property: an emulated CPU (a TCG VM) needs longer.
    limit = min(max(float(q.get("time_limit", 20.0)), 1.0), 600.0)
    result = bounded_run([_a11y_python(bool(ctx.run_as)), "-I", A11Y_SCRIPT, str(int(q.get("max_nodes", 5000)))],
                         timeout=limit, max_bytes=50_000_000, env=judge_env(ctx.env), run_as=ctx.run_as, cwd="/")
    if result["timed_out"]:
        return _fail("timeout", f"the accessibility tree did not come within {limit:g} s")
    if result["returncode"] == 3 or "accessibility bus" in result["stderr"]:
        return _fail("unsupported", result["stderr"].strip()[-2000:] or "no accessibility support in this guest")
    if result["returncode"] != 0:
        return _fail("failed", result["stderr"].strip()[-2000:])
    return _ok(json.loads(result["stdout"]))


_GETTERS: dict[str, Callable[[dict[str, Any], QueryContext], dict[str, Any]]] = {
    "file": _file,
    "command": _command,
    "files": _files,
    "clipboard": _clipboard,
    "windows": _windows,
    "a11y": _a11y,
}

KINDS = sorted(_GETTERS)
#: The kinds that read the user's files (directly, or through a command reading them).
FILE_KINDS = frozenset({"file", "command", "files"})


def answer(q: Any, ctx: QueryContext) -> dict[str, Any]:
    """Answer one query; every failure becomes a typed result, never an exception."""
    if not isinstance(q, dict):
        return _fail("failed", "a query must be an object")
    getter = _GETTERS.get(str(q.get("kind")))
    if getter is None:
        return _fail("unsupported", f"the guest agent does not answer {q.get('kind')!r} queries")
    try:
        return getter(q, ctx)
    except PermissionError as exc:
        return _fail("failed", f"permission denied: {exc}")
    except OSError as exc:
        return _fail("failed", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a getter bug must not take the agent down: report it as a failed query
        return _fail("failed", f"{type(exc).__name__}: {exc}")
