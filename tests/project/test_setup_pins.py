"""scripts/constraints.txt pins what scripts/setup.sh installs: a clean clone (CI's) must
resolve exactly the venv the developers tested. A package that lands in the venv without a
pin, or at another version than its pin, would make the next clean clone resolve afresh."""

from __future__ import annotations

import re
import site
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "scripts" / "constraints.txt"


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in CONSTRAINTS.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        name, sep, version = line.partition("==")
        assert sep, f"constraints.txt: {line!r} is not an exact pin (name==version)"
        pins[_canonical(name)] = version
    return pins


def _local_free(version: str) -> str:
    return version.split("+", 1)[0]


def _installed() -> list[metadata.Distribution]:
    """The venv's own distributions: those in its site-packages (a package's vendored copies,
    such as setuptools/_vendor once setuptools is imported, are not installed by pip)."""
    sites = {Path(p).resolve() for p in site.getsitepackages()}
    return [d for d in metadata.distributions() if Path(str(d.locate_file(""))).resolve() in sites]


def test_every_installed_distribution_is_pinned_at_its_version() -> None:
    pins = _pins()
    unpinned, moved = [], []
    for dist in _installed():
        name = _canonical(dist.metadata["Name"])
        if name == "cua":
            continue
        if name not in pins:
            unpinned.append(f"{name}=={dist.version}")
        elif _local_free(dist.version) != pins[name]:
            moved.append(f"{name}: installed {dist.version}, pinned {pins[name]}")
    assert not unpinned, f"installed but not pinned in {CONSTRAINTS.name}: {unpinned}"
    assert not moved, f"installed at another version than pinned: {moved}"


def test_setup_installs_under_the_pins() -> None:
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    export = setup.index('export PIP_CONSTRAINT="$PWD/scripts/constraints.txt"')
    first_pip = setup.index("-m pip install")
    assert export < first_pip, "every pip call in setup.sh must run under the constraints"
