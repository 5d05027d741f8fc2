"""The import directions of ARCHITECTURE.md, checked on the source: the drivers (eval, rl,
record) never import one another, and the episode layer imports none of them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "cua"
DRIVERS = ("cua.eval", "cua.rl", "cua.record")


def _imports(package: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in (ROOT / package.split(".")[1]).rglob("*.py"):
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
        out[str(path.relative_to(ROOT.parent))] = names
    return out


def _forbidden(names: set[str], packages: tuple[str, ...]) -> set[str]:
    return {n for n in names if any(n == p or n.startswith(p + ".") for p in packages)}


@pytest.mark.parametrize("package", [*DRIVERS, "cua.episode"])
def test_drivers_and_the_episode_layer_keep_their_directions(package: str) -> None:
    others = tuple(d for d in DRIVERS if d != package)
    bad = {path: _forbidden(names, others) for path, names in _imports(package).items()}
    assert not {p: b for p, b in bad.items() if b}, f"{package} imports another driver"


def test_the_server_handlers_do_not_import_their_connection() -> None:
    """ops returns typed replies and only the connection writes frames: no ops <-> connection cycle."""
    names = _imports("cua.server")["cua/server/ops.py"]
    tree = ast.parse((ROOT / "server" / "ops.py").read_text(encoding="utf-8"))
    names |= {f"{node.module or 'cua.server'}.{alias.name}" for node in ast.walk(tree)
              if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert not _forbidden(names, ("cua.server.connection", "cua.server.app", "connection")), names
