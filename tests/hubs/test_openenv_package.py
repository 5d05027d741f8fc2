"""integrations/openenv is cua packaged as OpenEnv's hub expects an environment: OpenEnv's own
local validator (`openenv validate`) finds it ready for every deployment mode (uv run, openenv
serve, python module, docker), and its `server` entry point is `cua openenv serve`."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "integrations" / "openenv"


def test_openenvs_validator_finds_the_package_ready() -> None:
    openenv = Path(sys.executable).parent / "openenv"
    proc = subprocess.run([str(openenv), "validate", str(PACKAGE), "--json"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["passed"] is True, report


def test_the_lock_holds_the_cua_of_this_repository() -> None:
    lock = tomllib.loads((PACKAGE / "uv.lock").read_text())
    [cua] = [p for p in lock["package"] if p["name"] == "cua"]
    assert Path(PACKAGE, cua["source"]["editable"]).resolve() == ROOT
    assert any(p["name"] == "openenv-core" for p in lock["package"])
