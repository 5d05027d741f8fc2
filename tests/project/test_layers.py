"""ARCHITECTURE.md's import rules, checked over the whole import graph.

Every module of `cua/`, `sandboxes/`, `tasks/` and `judges/` is parsed with `ast` (nothing is
imported, so the test is fast and needs no optional dependency), and every import statement
counts wherever it stands: at the top, inside a function (a lazy import is still a
dependency, and still closes a cycle the first time it runs), and under `TYPE_CHECKING`
(naming a type from a layer is knowing that layer; no such import is needed today). Only
imports by string (`importlib.import_module`, entry points) are invisible here: the CLI's
command table and the registries of kinds and backends, which exist so that nothing below
knows what is plugged in above.

Each module belongs to one layer (`LAYERS`, longest prefix wins); `MAY_IMPORT` is the
document's arrows, one line per layer. The tests fail on an arrow the document does not
allow, on a module no layer claims, and on any import cycle between modules. The few
arrows and cycles that are known and owned by work in progress are listed in
`KNOWN_VIOLATIONS` and `KNOWN_CYCLES`; a test fails as soon as one is no longer needed, so
the lists only shrink.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: Source folder -> the package it installs as (through the links under cua/; ARCHITECTURE.md "Layers").
FOLDERS = {"cua": "cua", "sandboxes": "cua.sandboxes", "tasks": "cua.tasks", "judges": "cua.judges"}

ROOT_PACKAGE = "cua"
#: Layer -> the modules it holds (a name covers the module and everything under it, except
#: the root package, which covers only itself: a new module must be given a layer).
LAYERS: dict[str, tuple[str, ...]] = {
    "plain data": ("cua.actions", "cua.observation", "cua.errors", "cua.state", "cua.info", "cua.task",
                   "cua.marks", "cua.attack", "cua.variant", "cua.launcher", "cua.screen_diff"),
    "process helpers": ("cua.listen", "cua.exposure", "cua.gate", "cua.guard", "cua.server_process", "cua.console",
                        "cua.argtypes", "cua.desktop_override"),
    "package root": (ROOT_PACKAGE,),  # the package's own __init__ only (see layer_of)
    "protocol": ("cua.protocol",),
    "sandbox interface": ("cua.sandbox", "cua.conformance"),
    "client": ("cua.client", "cua.sync_api"),
    "server": ("cua.server",),
    "sandboxes": ("cua.sandboxes",),
    "judges": ("cua.judges",),
    "tasks": ("cua.tasks",),
    "policy": ("cua.policy",),
    "trajectory": ("cua.trajectory", "cua.trajectory_cli"),
    # what reads a run folder into the static report: a library every driver may call (`cua eval`
    # writes its run's report), below the `cua report` command and its server
    "run readers": ("cua.report.build", "cua.report.data", "cua.report.evidence"),
    "episode": ("cua.episode",),
    # branching from any step of a trajectory: per-step snapshots and forks at step k, on top of
    # the episode layer and shared by the drivers (cua/branch/)
    "branch": ("cua.branch",),
    # the drivers: each its own layer, so that none may import another
    "eval": ("cua.eval",),
    "rl": ("cua.rl",),
    "record": ("cua.record",),
    "export": ("cua.export",),
    "report": ("cua.report",),
    "replay": ("cua.replay",),
    "rollout": ("cua.rollout",),
    "compat": ("cua.compat",),
    # the kit served on other projects' environment hubs (OpenEnv): a driver of its own
    "hubs": ("cua.hubs",),
    # judge QA (`cua tasks check`): above the episode layer, apart from `cua eval`
    "qa": ("cua.qa",),
    # the `cua tasks` command: list and show read the registry, check runs judge QA, synth
    # (cua/synth/) composes templates and admits them through judge QA
    "tasks command": ("cua.tasks_cli", "cua.synth"),
    "cli": ("cua.cli",),
}

_BELOW_THE_EPISODE = {"plain data", "process helpers", "package root", "client", "sandbox interface", "judges",
                      "tasks", "trajectory"}
_DRIVER_MAY_IMPORT = {*_BELOW_THE_EPISODE, "episode", "branch", "policy", "run readers"}
DRIVERS = ("eval", "rl", "record", "export", "report", "replay", "rollout", "hubs")

#: Layer -> the other layers it may import (its own is always allowed).
MAY_IMPORT: dict[str, set[str]] = {
    "plain data": set(),
    "process helpers": {"plain data"},
    # `import cua`: the version and the re-exported plain data; `cua.connect` loads the client lazily
    "package root": {"plain data", "client"},
    "protocol": {"plain data"},
    "sandbox interface": {"plain data"},
    "client": {"protocol", "plain data"},
    "server": {"protocol", "sandbox interface", "process helpers", "plain data", "package root"},
    "sandboxes": {"sandbox interface", "plain data", "package root"},
    "judges": {"plain data"},
    "tasks": {"judges", "sandbox interface", "process helpers", "plain data"},
    "policy": {"process helpers", "plain data"},
    "trajectory": {"plain data"},
    "run readers": {"trajectory", "plain data"},
    # `PolicyAgent` asks a policy for turns (cua/episode/policy_agent.py): the one reading of a
    # policy's answer as a turn, for every driver; a policy never imports the episode layer
    "episode": {*_BELOW_THE_EPISODE, "policy"},
    "branch": {*_BELOW_THE_EPISODE, "episode"},
    **{driver: _DRIVER_MAY_IMPORT for driver in DRIVERS},
    # adapters to other frameworks' interfaces sit above the driver they adapt (BrowserGym over CuaEnv)
    "compat": {*_DRIVER_MAY_IMPORT, "rl"},
    "qa": {*_BELOW_THE_EPISODE, "episode"},
    # synth's proposing model is asked through the policy's chat backends (`openai:MODEL@URL`)
    "tasks command": {*_BELOW_THE_EPISODE, "episode", "qa", "policy"},
    "cli": set(LAYERS),
}

#: (importing layer, imported layer) arrows against the document, each owned by work in
#: progress; remove a line when its arrow goes (the test below insists).
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {
}

#: Import cycles known and owned by work in progress (issue 30); each must still exist.
KNOWN_CYCLES: set[frozenset[str]] = set()

#: What the sans-I/O protocol may import from outside the project: no socket, clock,
#: event loop or thread.
PROTOCOL_STDLIB = {"__future__", "collections", "dataclasses", "hmac", "json", "struct", "typing",
                   "pydantic", "pydantic_core"}


def _modules() -> Iterator[tuple[str, Path]]:
    for folder, package in FOLDERS.items():
        top = REPO / folder
        for root, dirs, files in os.walk(top):  # not into links: cua/<folder> may link the top-level folders
            dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink() and d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    path = Path(root) / name
                    parts = path.relative_to(top).with_suffix("").parts
                    if parts[-1] == "__init__":
                        parts = parts[:-1]
                    yield ".".join((package, *parts)), path


@cache
def _parsed() -> dict[str, tuple[Path, ast.Module]]:
    return {name: (path, ast.parse(path.read_text(encoding="utf-8"), str(path))) for name, path in _modules()}


def _imported_names(module: str, path: Path, tree: ast.Module) -> Iterator[str]:
    """Every dotted name an import statement anywhere in the module names: `from a import b`
    gives `a.b`, which falls in the submodule `a.b` or else in `a` (relative imports resolved)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            yield from (f"{base}.{alias.name}" if alias.name != "*" else base for alias in node.names)


@cache
def graph() -> dict[str, frozenset[str]]:
    """Module -> the project modules it imports (the deepest module each name falls in)."""
    known = _parsed()

    def owner(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    out: dict[str, frozenset[str]] = {}
    for module, (path, tree) in known.items():
        targets = {owner(name) for name in _imported_names(module, path, tree) if name.split(".")[0] == "cua"}
        out[module] = frozenset(t for t in targets if t is not None and t != module)
    return out


def layer_of(module: str) -> str | None:
    best: tuple[int, str] | None = None
    for layer, prefixes in LAYERS.items():
        for prefix in prefixes:
            covers = module == prefix or (prefix != ROOT_PACKAGE and module.startswith(prefix + "."))
            if covers and (best is None or len(prefix) > best[0]):
                best = (len(prefix), layer)
    return best[1] if best else None


def _violations() -> dict[tuple[str, str], set[str]]:
    """(importing module, imported layer) -> the modules imported against the document."""
    out: dict[tuple[str, str], set[str]] = {}
    for module, targets in graph().items():
        here = layer_of(module)
        assert here is not None
        for target in targets:
            there = layer_of(target)
            assert there is not None
            if there != here and there not in MAY_IMPORT[here]:
                out.setdefault((module, there), set()).add(target)
    return out


def _cycles() -> set[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    edges = graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for start in edges:
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.add(frozenset(component))
    return found


def test_the_graph_covers_every_package() -> None:
    modules = graph()
    for folder, package in FOLDERS.items():
        assert sum(1 for m in modules if m == package or m.startswith(package + ".")) > 5, folder
    assert len(modules) > 250
    # a lazy import and a relative import are both seen (tasks/apps imports its apps by string)
    assert "cua.server_process" in modules["cua.episode.openers"]


def test_every_module_has_a_layer() -> None:
    assert [m for m in graph() if layer_of(m) is None] == []
    assert set(MAY_IMPORT) == set(LAYERS)


def test_every_arrow_is_one_the_architecture_allows() -> None:
    unexpected = {f"{module} -> {layer} ({', '.join(sorted(targets))})"
                  for (module, layer), targets in _violations().items()
                  if (layer_of(module), layer) not in KNOWN_VIOLATIONS}
    assert not unexpected, "arrows ARCHITECTURE.md does not allow:\n" + "\n".join(sorted(unexpected))


def test_each_known_violation_is_still_there() -> None:
    still = {(layer_of(module), layer) for module, layer in _violations()}
    fixed = [KNOWN_VIOLATIONS[arrow] for arrow in sorted(KNOWN_VIOLATIONS) if arrow not in still]
    assert not fixed, f"fixed, remove from KNOWN_VIOLATIONS: {fixed}"


def test_no_import_cycles() -> None:
    cycles = _cycles()
    assert not cycles - KNOWN_CYCLES, f"import cycles: {[sorted(c) for c in cycles - KNOWN_CYCLES]}"
    assert KNOWN_CYCLES <= cycles, f"fixed, remove from KNOWN_CYCLES: {[sorted(c) for c in KNOWN_CYCLES - cycles]}"


def test_no_driver_imports_another() -> None:
    for driver in DRIVERS:
        assert not MAY_IMPORT[driver] & set(DRIVERS), driver


def test_only_the_tasks_command_imports_judge_qa() -> None:
    """Judge QA is its own room: no driver (`cua eval` included) and nothing below may import it."""
    assert {layer for layer, allowed in MAY_IMPORT.items() if "qa" in allowed} == {"tasks command", "cli"}
    assert {module for module, targets in graph().items() if layer_of(module) not in ("qa", "tasks command", "cli")
            and any(layer_of(t) == "qa" for t in targets)} == set()


def test_the_protocol_imports_no_io() -> None:
    """Sans I/O: the protocol package imports plain data, pydantic and a few pure modules."""
    for module, (path, tree) in _parsed().items():
        if layer_of(module) == "protocol":
            outside = {name.split(".")[0] for name in _imported_names(module, path, tree)} - {"cua"}
            assert outside <= PROTOCOL_STDLIB, (module, outside - PROTOCOL_STDLIB)


#: The guest side of sandboxes/guest: copied into images and run on the guest's own Python.
GUEST_HOST_SIDE = {"cua.sandboxes.guest", "cua.sandboxes.guest.client", "cua.sandboxes.guest.sandbox"}


def test_the_guest_agent_imports_nothing_of_cua() -> None:
    """The agent's files run inside a VM image as plain scripts: any `cua` import breaks them there."""
    guest = [m for m in _parsed() if m.startswith("cua.sandboxes.guest.") and m not in GUEST_HOST_SIDE]
    assert len(guest) > 10
    for module in guest:
        assert graph()[module] <= set(guest), (module, graph()[module] - set(guest))
        _, tree = _parsed()[module]
        absolute = [n for n in ast.walk(tree) if isinstance(n, ast.Import) and any(a.name.startswith("cua") for a in n.names)
                    or isinstance(n, ast.ImportFrom) and n.level == 0 and (n.module or "").startswith("cua")]
        assert not absolute, f"{module}: siblings are imported relatively (with the script fallback)"


def test_the_distribution_holds_every_package_through_cua_links() -> None:
    """pyproject's package discovery, run as pip runs it, finds every package the graph holds
    under its `cua.` name (through the links cua/sandboxes, cua/tasks and cua/judges), and the
    data folders without an __init__.py (the bundled apps' static files) as well."""
    import tomllib

    from setuptools.discovery import PEP420PackageFinder  # type: ignore[import-untyped,unused-ignore]

    for folder in ("sandboxes", "tasks", "judges"):
        link = REPO / "cua" / folder
        assert link.is_symlink() and os.readlink(link) == f"../{folder}", link
    find = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    found = set(PEP420PackageFinder.find(str(REPO), include=tuple(find["include"])))
    packages = {module for module, (path, _) in _parsed().items() if path.name == "__init__.py"}
    assert packages <= found, sorted(packages - found)
    assert {"cua.tasks.apps.static", "cua.tasks.schema"} <= found


def test_the_server_handlers_do_not_import_their_connection() -> None:
    """ops returns typed replies and only the connection writes frames: no ops -> connection arrow."""
    assert not graph()["cua.server.ops"] & {"cua.server.connection", "cua.server.app"}
