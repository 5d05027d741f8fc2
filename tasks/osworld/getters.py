"""OSWorld getters: each `result`/`expected` getter type becomes either state queries the
runner reads from the sandbox at the end (the judge never touches the sandbox), or a
value from the host (a rule, a reference file from the local "cloud" cache).

- `vm_file`: the file's bytes (a file query), saved to a temporary file for the metric;
- `vm_command_line` / `vm_command_error`: a command's stdout / stderr;
- `accessibility_tree`: the AT-SPI tree (the metric sees it as JSON text);
- `open_tabs_info` / `active_tab_info` / `active_url_from_accessTree`: the guest
  Chromium's tabs through its DevTools endpoint (CDP on the guest's loopback, read by a
  command inside the guest: the VM has no network to the host);
- `cloud_file` / `cache_file`: a reference file from the cache folder, keyed by URL;
- `rule` / `rules`: the rule object itself.

The cache folder is `$CUA_OSWORLD_CACHE` (default `~/.cache/cua/osworld`): a file
for URL u is `<sha256(u)>` there (or `<sha256(u)>.<ext>`), or listed in `urls.json`
(`{url: relative path}`). Users with internet fill it (`cache_path(url)` says where);
nothing here downloads.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cua.state import A11yQuery, CommandQuery, FileQuery, StateQuery, StateResult
from cua.tasks.osworld.format import GetterSpec

__all__ = ["GETTERS", "HOST_GETTERS", "GetterError", "cache_dir", "cache_path", "guest_path", "queries_of",
           "value_of"]

GUEST_HOME = "/home/user"
#: The largest file a vm_file getter reads back (a spreadsheet, a document, an image).
MAX_FILE_BYTES = 50_000_000


class GetterError(Exception):
    """A getter could not produce its value (the file is missing, the command failed)."""


def cache_dir() -> Path:
    env = os.environ.get("CUA_OSWORLD_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "cua" / "osworld"


def cache_path(url: str) -> Path:
    """Where the cached copy of `url` lives (it may not exist yet)."""
    root = cache_dir()
    index = root / "urls.json"
    if index.is_file():
        mapping = json.loads(index.read_text())
        if url in mapping:
            return root / str(mapping[url])
    key = hashlib.sha256(url.encode()).hexdigest()
    suffix = Path(url.split("?", 1)[0]).suffix
    for name in (key, key + suffix):
        if (root / name).is_file():
            return root / name
    return root / (key + suffix)


def cached_bytes(url: str) -> bytes:
    path = cache_path(url)
    if not path.is_file():
        raise GetterError(f"{url} is not in the cache folder {cache_dir()} (expected at {path}); "
                          "fetch it there first (cua never downloads during a task)")
    return path.read_bytes()


def guest_path(path: str) -> str:
    """OSWorld's paths name the user's home `/home/user` as ours does; `~` too."""
    return path.replace("~", GUEST_HOME, 1) if path.startswith("~") else path


def _shell(command: Any, shell: bool = False) -> list[str]:
    """The task's own command as argv: a string or `shell: true` through /bin/sh (by its
    absolute path, non-interactive: it sources no rc file). The guest runs every judge
    command with the system PATH and PYTHONSAFEPATH, so no program or module the agent
    planted in the home folder answers for it (sandboxes/guest/queries.py judge_env)."""
    if isinstance(command, list):
        return ["/bin/sh", "-c", " ".join(shlex.quote(str(c)) for c in command)] if shell else [str(c) for c in command]
    return ["/bin/sh", "-c", str(command)]


#: Reads the guest Chromium's DevTools target list: the port from its command line
#: (`--remote-debugging-port=N`), then http://127.0.0.1:N/json. Prints JSON.
_CDP_TARGETS = r"""
import json, os, re, urllib.request
port = None
for pid in os.listdir('/proc'):
    try:
        argv = open(f'/proc/{pid}/cmdline', 'rb').read().split(b'\0')
    except OSError:
        continue
    for a in argv:
        m = re.match(rb'--remote-debugging-port=(\d+)', a)
        if m and int(m.group(1)) > 0:
            port = int(m.group(1))
if port is None:
    raise SystemExit('no Chromium with --remote-debugging-port runs')
with urllib.request.urlopen(f'http://127.0.0.1:{port}/json', timeout=10) as r:
    targets = json.load(r)
print(json.dumps([t for t in targets if t.get('type') == 'page']))
"""


@dataclass(frozen=True)
class Getter:
    """How one getter type reads the machine: the queries, then the value from their answers."""

    queries: Callable[[dict[str, Any]], list[StateQuery]]
    value: Callable[[dict[str, Any], list[StateResult]], Any]


def _ok(result: StateResult, what: str) -> Any:
    if not result.ok:
        raise GetterError(f"{what}: {result.error}: {result.message}")
    return result.value


def _file_value(args: dict[str, Any], results: list[StateResult]) -> str:
    data = base64.b64decode(_ok(results[0], f"reading {args.get('path')}") or "")
    folder = Path(tempfile.mkdtemp(prefix="cua-osworld-"))
    target = folder / Path(str(args.get("dest") or Path(str(args["path"])).name)).name
    target.write_bytes(data)
    return str(target)


def _command_value(stream: str) -> Callable[[dict[str, Any], list[StateResult]], Any]:
    def value(args: dict[str, Any], results: list[StateResult]) -> Any:
        out = _ok(results[0], f"running {args.get('command')!r}")
        return out[stream]
    return value


def _tabs(args: dict[str, Any], results: list[StateResult]) -> list[dict[str, Any]]:
    out = _ok(results[0], "reading Chromium's tabs over CDP")
    if out["returncode"] != 0:
        raise GetterError(f"reading Chromium's tabs over CDP failed: {out['stderr'].strip()[-500:]}")
    return [{"title": t.get("title", ""), "url": t.get("url", "")} for t in json.loads(out["stdout"])]


def _active_tab(args: dict[str, Any], results: list[StateResult]) -> dict[str, Any] | None:
    tabs = _tabs(args, results)  # DevTools lists the most recently active page first
    return tabs[0] if tabs else None


def _cdp_query(_: dict[str, Any]) -> list[StateQuery]:
    # isolated (-I: no working folder, no user site-packages) and standard library only (-S)
    return [CommandQuery(argv=["/usr/bin/python3", "-I", "-S", "-c", _CDP_TARGETS], timeout=20)]


GETTERS: dict[str, Getter] = {
    "vm_file": Getter(lambda a: [FileQuery(path=guest_path(str(a["path"])), mode="bytes", max_bytes=MAX_FILE_BYTES)],
                      _file_value),
    "vm_command_line": Getter(lambda a: [CommandQuery(argv=_shell(a["command"], bool(a.get("shell"))), timeout=60,
                                                      max_bytes=1_000_000)], _command_value("stdout")),
    "vm_command_error": Getter(lambda a: [CommandQuery(argv=_shell(a["command"], bool(a.get("shell"))), timeout=60,
                                                       max_bytes=1_000_000)], _command_value("stderr")),
    "accessibility_tree": Getter(lambda a: [A11yQuery()],
                                 lambda a, r: json.dumps(_ok(r[0], "reading the accessibility tree"))),
    "open_tabs_info": Getter(_cdp_query, _tabs),
    "active_tab_info": Getter(_cdp_query, _active_tab),
    "active_url_from_accessTree": Getter(_cdp_query, lambda a, r: (_active_tab(a, r) or {}).get("url")),
}


def _cloud_file(args: dict[str, Any]) -> Any:
    paths = args["path"] if isinstance(args.get("path"), list) else [args["path"]]
    out = []
    for url in paths:
        data = cached_bytes(str(url))
        folder = Path(tempfile.mkdtemp(prefix="cua-osworld-"))
        target = folder / Path(str(args.get("dest") or Path(str(url).split("?", 1)[0]).name)).name
        target.write_bytes(data)
        out.append(str(target))
    return out if isinstance(args.get("path"), list) else out[0]


#: Getters whose value comes from the host, not the sandbox.
HOST_GETTERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "cloud_file": _cloud_file,
    "cache_file": _cloud_file,
    "rule": lambda a: a.get("rules", {}),
    "rules": lambda a: a.get("rules", {}),
}


def queries_of(spec: GetterSpec | None) -> list[StateQuery]:
    if spec is None or spec.type in HOST_GETTERS:
        return []
    return GETTERS[spec.type].queries(spec.args)


def value_of(spec: GetterSpec | None, results: list[StateResult]) -> Any:
    if spec is None:
        return None
    if spec.type in HOST_GETTERS:
        return HOST_GETTERS[spec.type](spec.args)
    return GETTERS[spec.type].value(spec.args, results)
