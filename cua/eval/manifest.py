"""`manifest.json`: how a run was made, written when it starts, beside its trajectories,
`episodes.jsonl` and `summary.json`.

It holds what a reader needs to trust or reproduce a score: the cua version and git commit,
the versions of Python, Playwright, Chromium and QEMU, every task with its version and a
digest of its definition (a task edited without a version bump shows), the seeds, the policy
with its family and sampling settings, what was observed, the machine and the command line.

`identity()` is the part that defines the experiment: `--resume` continues a run only when
the new manifest's identity equals the old one (machine, time and command line may differ).
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import cua

__all__ = ["MANIFEST", "ManifestMismatch", "RunManifest", "TaskEntry", "build_manifest", "machine_facts", "read_manifest",
           "task_entries", "tool_versions"]

MANIFEST = "manifest.json"
FORMAT = "cua.run"


class ManifestMismatch(ValueError):
    """A run folder's manifest describes another experiment than the one asked for."""

    def __init__(self, folder: Path, differences: list[str]) -> None:
        self.folder = folder
        self.differences = differences
        shown = "\n  ".join(differences[:20])
        super().__init__(f"{folder / MANIFEST} describes another run:\n  {shown}")


class TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    suite: str
    version: int | None = None
    #: sha256 of the task's definition as loaded (its YAML after defaults), first 16 hex digits.
    digest: str | None = None
    source: str | None = None


class RunManifest(BaseModel):
    model_config = ConfigDict(extra="allow")
    format: str = FORMAT
    version: int = 1
    run_id: str
    created_at: float = Field(default_factory=time.time)
    #: {"version": ..., "git_commit": ..., "git_dirty": ...}
    cua: dict[str, Any] = Field(default_factory=dict)
    #: python, playwright, chromium, qemu, ... (what was found; None where absent).
    versions: dict[str, str | None] = Field(default_factory=dict)
    suites: list[dict[str, Any]] = Field(default_factory=list)
    tasks: list[TaskEntry] = Field(default_factory=list)
    seeds: list[int] = Field(default_factory=list)
    split: str = "all"
    #: {"spec", "name", "kind", "family", "model", "sampling": {...}}
    policy: dict[str, Any] = Field(default_factory=dict)
    #: screenshot format/quality, accessibility tree, focused element, screenshot history.
    observe: dict[str, Any] = Field(default_factory=dict)
    #: parallel, retries, frames, where sandboxes ran, config overrides.
    runner: dict[str, Any] = Field(default_factory=dict)
    machine: dict[str, Any] = Field(default_factory=dict)
    argv: list[str] = Field(default_factory=list)
    cwd: str = ""
    #: Every invocation that wrote into the run: the first, then each `--resume`.
    invocations: list[dict[str, Any]] = Field(default_factory=list)

    def identity(self) -> dict[str, Any]:
        """What must match for two invocations to be the same run (see `--resume`). `observe`
        with every default filled in: a manifest written before they were spelled out said
        `{}` for the same settings."""
        from cua.observation import ObserveOptions

        # a run's repeats were 1 before the manifest said so; its prices only price it
        runner = {"repeats": 1, **{k: v for k, v in self.runner.items()
                                   if k not in ("parallel", "sandboxes", "retries", "prices")}}
        observe = {**ObserveOptions().model_dump(mode="json"), **self.observe}
        return {"tasks": [t.model_dump(exclude={"source"}) for t in self.tasks], "seeds": self.seeds, "split": self.split,
                "policy": self.policy, "observe": observe, "runner": runner}

    def differences(self, other: RunManifest) -> list[str]:
        """Readable differences of identity, e.g. `policy.sampling.temperature: 0.0 -> 0.7`.
        A screenshot history one of them does not state (written before it was) is not one."""
        mine, theirs = self.identity(), other.identity()
        if "history" not in self.observe or "history" not in other.observe:
            mine["observe"].pop("history", None)
            theirs["observe"].pop("history", None)
        out: list[str] = []
        _diff(mine, theirs, "", out)
        return out

    def write(self, folder: Path) -> Path:
        path = folder / MANIFEST
        tmp = path.with_name(f".{MANIFEST}.{os.getpid()}.tmp")
        tmp.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        os.replace(tmp, path)
        return path


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            _diff(a.get(key), b.get(key), f"{where}.{key}" if where else str(key), out)
    elif where == "tasks" and isinstance(a, list) and isinstance(b, list):
        old = {t["id"]: t for t in a}
        new = {t["id"]: t for t in b}
        for tid in sorted(set(old) | set(new)):
            if tid not in new:
                out.append(f"tasks: {tid} is no longer in the run")
            elif tid not in old:
                out.append(f"tasks: {tid} was not in the run")
            elif old[tid] != new[tid]:
                changed = [k for k in old[tid] if old[tid].get(k) != new[tid].get(k)]
                out.append(f"tasks: {tid} changed ({', '.join(changed)})")
    elif a != b:
        out.append(f"{where}: {json.dumps(a, default=str)} -> {json.dumps(b, default=str)}")


def read_manifest(folder: Path) -> RunManifest | None:
    path = folder / MANIFEST
    if not path.exists():
        return None
    return RunManifest.model_validate_json(path.read_text(encoding="utf-8"))


def task_entries(templates: Sequence[Any]) -> list[TaskEntry]:
    out = []
    for t in templates:
        version = None
        if "@" in t.id:
            try:
                version = int(t.id.rsplit("@", 1)[1])
            except ValueError:
                version = None
        raw = getattr(t, "raw", None)
        digest = hashlib.sha256(json.dumps(raw, sort_keys=True, default=str).encode()).hexdigest()[:16] \
            if raw is not None else None
        out.append(TaskEntry(id=t.id, suite=t.id.split(".", 1)[0], version=version, digest=digest,
                             source=getattr(t, "file", None)))
    return out


def _run(argv: list[str], timeout: float = 10.0, cwd: str | None = None) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _git() -> dict[str, Any]:
    root = Path(cua.__file__).resolve().parent.parent
    if not (root / ".git").exists() or shutil.which("git") is None:
        return {}
    commit = _run(["git", "rev-parse", "HEAD"], cwd=str(root))
    if commit is None:
        return {}
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=str(root))
    return {"git_commit": commit, "git_dirty": bool(status) if status is not None else None}


def _first_line(text: str | None) -> str | None:
    return text.splitlines()[0].strip() if text else None


def _chromium() -> str | None:
    env = os.environ.get("CUA_CHROMIUM")
    candidates = [env] if env else ["chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"]
    for name in candidates:
        path = shutil.which(name) if name else None
        if path:
            return _first_line(_run([path, "--version"]))
    return None


def tool_versions() -> dict[str, str | None]:
    """The versions of what a run depends on, as found on this machine."""
    from importlib.metadata import PackageNotFoundError, version

    def package(name: str) -> str | None:
        try:
            return version(name)
        except PackageNotFoundError:
            return None

    qemu = shutil.which("qemu-system-x86_64")
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "playwright": package("playwright"),
        "pydantic": package("pydantic"),
        "chromium": _chromium(),
        "qemu": _first_line(_run([qemu, "--version"])) if qemu else None,
    }


def machine_facts() -> dict[str, Any]:
    facts: dict[str, Any] = {"hostname": platform.node(), "os": platform.platform(), "machine": platform.machine(),
                             "cpus": os.cpu_count()}
    try:
        facts["memory_gib"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    facts["kvm"] = os.access("/dev/kvm", os.R_OK | os.W_OK)
    return facts


def build_manifest(*, run_id: str, templates: Sequence[Any], seeds: Sequence[int], split: str,
                   policy: dict[str, Any], observe: dict[str, Any], runner: dict[str, Any],
                   argv: Sequence[str] | None = None) -> RunManifest:
    tasks = task_entries(templates)
    suites: dict[str, dict[str, Any]] = {}
    for t in tasks:
        entry = suites.setdefault(t.suite, {"name": t.suite, "templates": 0, "sources": []})
        entry["templates"] += 1
        source = str(Path(t.source).parent) if t.source else None
        if source and source not in entry["sources"]:
            entry["sources"].append(source)
    argv = list(sys.argv if argv is None else argv)
    created = time.time()
    return RunManifest(run_id=run_id, created_at=created, cua={"version": cua.__version__, **_git()},
                       versions=tool_versions(), suites=list(suites.values()), tasks=tasks, seeds=list(seeds),
                       split=split, policy=policy, observe=observe, runner=runner, machine=machine_facts(),
                       argv=argv, cwd=os.getcwd(), invocations=[{"argv": argv, "created_at": created}])
