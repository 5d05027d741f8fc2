"""What every real product's tests share: one `python -m cua.tasks.apps.serve <app>` service
process (its page URL, its control client on the unix socket, start, reset, snapshot,
restore, stop), the comparisons of states and images, the typed-error run of a bad
configuration, the committed-schema check and one oracle's judge QA in a real browser.

A product's test module subclasses `Service` with its app name (and its own page helpers,
a login through its form, say); the rest are plain functions. The service's stderr is
drained as it comes (a full pipe would stall the service) and kept, so a test can read what
the service said when it stopped."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

import httpx

__all__ = ["Service", "assert_oracle_passes_judge_qa", "dump", "free_port", "image_content", "installed_schema",
           "running", "serve_fails"]

#: How long the service takes to stop on SIGTERM before it is killed.
STOP_TIMEOUT_S = 20.0
S = TypeVar("S", bound="Service")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Service:
    """One service process of product `app`, started with `--port`, `--socket` and `--seed`;
    ready once it prints `ready` (a first run builds the seed image, hence the long wait)."""

    app: ClassVar[str]
    ready_timeout_s: ClassVar[float] = 180.0

    def __init__(self, tmp: Path, seed: int = 0, name: str | None = None,
                 env: Mapping[str, str] | None = None) -> None:
        self.port = free_port()
        self.sock = tmp / f"{name or self.app}.sock"
        self.base = f"http://127.0.0.1:{self.port}"
        self._stderr: list[str] = []
        self.proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", self.app, "--port",
                                      str(self.port), "--socket", str(self.sock), "--seed", str(seed)],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, **(env or {})})
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()
        self.control = httpx.Client(transport=httpx.HTTPTransport(uds=str(self.sock)), base_url="http://app",
                                    timeout=60)
        assert self.proc.stdout is not None
        deadline = time.monotonic() + self.ready_timeout_s
        while True:
            line = self.proc.stdout.readline()
            if line.strip() == "ready":
                break
            if (not line and self.proc.poll() is not None) or time.monotonic() > deadline:
                error = self.stop()
                raise AssertionError(f"the {self.app} service did not start: {error}")

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def state(self) -> dict[str, Any]:
        r = self.control.get("/__cua/state")
        r.raise_for_status()
        result: dict[str, Any] = r.json()
        return result

    def sql(self, query: str, *params: Any) -> list[dict[str, Any]]:
        r = self.control.post("/__cua/sql", json={"query": query, "params": list(params)})
        r.raise_for_status()
        rows: list[dict[str, Any]] = r.json()["rows"]
        return rows

    def reset(self, seed: int = 0) -> float:
        """Reset to seed `seed`; the milliseconds the service says it took."""
        r = self.control.post("/__cua/reset", json={"seed": seed})
        r.raise_for_status()
        return float(r.json()["ms"])

    def snapshot(self) -> bytes:
        r = self.control.get("/__cua/snapshot")
        r.raise_for_status()
        return r.content

    def restore(self, image: bytes) -> httpx.Response:
        return self.control.post("/__cua/restore", content=image)

    def children(self) -> list[int]:
        """The service's child processes (the product's own servers), by pid."""
        return [int(pid) for pid in Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()]

    def stop(self) -> str:
        """Stop the service as a sandbox does (SIGTERM; SIGKILL past STOP_TIMEOUT_S) and
        return all it wrote to stderr."""
        self.control.close()
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._drain.join(STOP_TIMEOUT_S)
        for pipe in (self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()
        return "".join(self._stderr)

    def close(self) -> None:
        self.stop()


@contextmanager
def running(cls: type[S], tmp: Path, seed: int = 0, name: str | None = None,
            env: Mapping[str, str] | None = None) -> Iterator[S]:
    """A started service of `cls`, stopped on the way out (a fixture's body)."""
    svc = cls(tmp, seed, name, env)
    try:
        yield svc
    finally:
        svc.close()


def image_content(image: bytes) -> list[str]:
    """A database image's whole content as SQL (schema and every row of every table, the
    private ones too): SQLite's page layout and header counters aside, the same database."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image)
        return list(conn.iterdump())
    finally:
        conn.close()


def dump(state: Mapping[str, Any]) -> str:
    return json.dumps(state, sort_keys=True)


def serve_fails(app: str, tmp: Path, *args: str,
                env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the service of `app` with `args` (and extra environment) expecting it to refuse;
    what it exited with and said. A traceback is never the answer to bad input."""
    done = subprocess.run([sys.executable, "-m", "cua.tasks.apps.serve", app, "--socket", str(tmp / "s.sock"), *args],
                          capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    return done


def installed_schema(image: Path, drop: Iterable[str] = ()) -> str:
    """The schema of database image `image` as `schema.sql` commits it: tables first, then
    the rest, in creation order, less SQLite's own, the activity log and tables `drop`."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(image.read_bytes())
        for table in drop:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')
        rows = conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' "
                            "AND tbl_name != 'cua_activity' ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid")
        return ";\n".join(str(r[0]) for r in rows) + ";\n"
    finally:
        conn.close()


def assert_same_schema(committed: str, installed: str) -> None:
    """The committed `schema.sql` (from its first CREATE) holds the installed image's statements,
    in any order: Django applies migrations that do not depend on each other in an order that
    varies between builds (its graph walks sets), so two builds of one release create the same
    indexes in another order; what a judge or QA reads is the schema, not that order."""
    def statements(sql: str) -> list[str]:
        return sorted(part.strip() for part in sql.split(";\n") if part.strip())

    mine, theirs = statements(committed[committed.index("CREATE"):]), statements(installed)
    assert mine == theirs, (f"only committed: {sorted(set(mine) - set(theirs))[:3]}; "
                            f"only installed: {sorted(set(theirs) - set(mine))[:3]}")


def assert_oracle_passes_judge_qa(template_id: str, probe_kinds: Iterable[str]) -> None:
    """Template `template_id`'s oracle passes judge QA (seed 0, a real browser), and each of
    `probe_kinds` ran at least once."""
    from cua.qa.check import check_templates
    from cua.tasks.registry import get_template

    report = asyncio.run(check_templates([get_template(template_id)], seeds=[0], isolation="shared"))
    (result,) = report.templates
    assert result.failures == [], result.failures
    for kind in probe_kinds:
        assert result.probes_ran.get(kind, 0) > 0, (kind, result.probes_ran)


def assert_refuses_bad_configuration(app: str, tmp: Path, missing_env: Mapping[str, str], missing: str) -> None:
    """The service of `app` refuses a port that is no TCP port (64, the client's fault) and
    starts on no install (with `missing_env`: 1, saying `missing`), without a traceback."""
    bad_port = serve_fails(app, tmp, "--port", "70000")
    assert bad_port.returncode == os.EX_USAGE and "port 70000" in bad_port.stderr
    absent = serve_fails(app, tmp, "--port", "0", env=missing_env)
    assert absent.returncode == 1 and missing in absent.stderr, absent.stderr


def assert_a_bad_image_changes_nothing(service: Service) -> None:
    """A restore of bytes that are no database is refused (400) and leaves the state as it was."""
    before = dump(service.state())
    bad = service.restore(b"not a database")
    assert bad.status_code == 400 and "not a database image" in bad.json()["error"]
    assert dump(service.state()) == before


class _Copy(Protocol):
    """Judge QA's in-process copy of a product (cua.tasks.products.base.ProductApp)."""

    @property
    def db(self) -> Any: ...
    def reset(self, seed: int) -> None: ...
    def state(self) -> dict[str, Any]: ...


def assert_takes_the_copys_image(service: Service, copy: _Copy) -> None:
    """The live service takes the image of judge QA's in-process copy at seed 0 (which
    lacks the live instance's caches and indexes) and then reads the same state."""
    copy.reset(0)
    assert service.restore(copy.db.snapshot()).status_code == 200
    assert dump(service.state()) == dump(copy.state())
