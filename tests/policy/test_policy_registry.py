"""Policy backends come from the `cua.policy_backends` entry points; the policy interface
imports none of them, so there is no import cycle and a spec loads only its own backend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cua.policy import make_policy
from cua.policy.registry import backends


def test_every_bundled_backend_is_registered() -> None:
    assert {"remote", "openai", "transformers", "scripted"} <= set(backends())


def test_a_spec_loads_only_its_backend(tmp_path: Path) -> None:
    script = tmp_path / "steps.jsonl"
    script.write_text(json.dumps({"actions": [{"type": "done", "status": "success"}]}) + "\n")
    code = (
        "import sys\n"
        "import cua.policy.base\n"
        "assert not [m for m in sys.modules if m.startswith('cua.policy.backends')], 'base imports a backend'\n"
        "from cua.policy import make_policy\n"
        f"make_policy('scripted:{script}')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('cua.policy.backends.'))\n"
        "assert loaded == ['cua.policy.backends.scripted'], loaded\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("spec,message", [
    ("nope:x", "unknown policy kind 'nope'"),
    ("openai", "bad policy spec"),
    ("openai:model-without-url", "expected openai:MODEL@BASE_URL"),
])
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_policy(spec)
