"""How a real product's service ends (cua.tasks.products.service, shared by every product;
Trac's here, the quickest to start): a sandbox stops it with SIGTERM, at any point of its
life, and it goes quietly (exit 143, nothing on stderr: it printed a traceback of the
SystemExit it raised inside asyncio) with its folder; one killed outright (SIGKILL) cannot
remove its folder, so the product's next service removes it (it stayed in the temp folder
for good), and leaves alone the folders of live services and folders it did not make."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from _product import Service, running

from cua.tasks.products.stale import OWNER_FILE, own_folder
from cua.tasks.products.trac import build

pytestmark = pytest.mark.skipif(not build.trac_python().is_file(),
                                reason="Trac is not installed (scripts/setup.sh makes its venv)")


class Trac(Service):
    app = "trac"


def _folders(tmp: Path) -> set[Path]:
    return {p for p in tmp.glob("cua-trac-*") if p.is_dir()}


@pytest.mark.slow
def test_sigterm_stops_a_serving_service_quietly_with_its_folder(tmp_path: Path) -> None:
    svc = Trac(tmp_path, env={"TMPDIR": str(tmp_path)})
    (folder,) = _folders(tmp_path)
    stderr = svc.stop()
    assert svc.proc.returncode == 128 + signal.SIGTERM
    assert stderr == "", stderr
    assert not folder.exists() and not svc.sock.exists()


@pytest.mark.slow
def test_sigterm_while_starting_is_quiet_too(tmp_path: Path) -> None:
    """SIGTERM as soon as the instance's folder is there: the seed is being copied or the
    product's server started; wherever it lands, the service ends quietly and cleans up."""
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "trac", "--port", "0", "--socket",
                             str(tmp_path / "s.sock")], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        deadline = time.monotonic() + 60
        while not _folders(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)  # (polled: the folder appears within the service's first second)
        assert _folders(tmp_path), "the service made no folder"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert stderr == "", stderr
    assert _folders(tmp_path) == set()


@pytest.mark.slow
def test_the_folder_of_a_killed_service_goes_at_the_next_start(tmp_path: Path) -> None:
    env = {"TMPDIR": str(tmp_path)}
    killed = Trac(tmp_path, name="killed", env=env)
    (folder,) = _folders(tmp_path)
    assert (folder / OWNER_FILE).is_file()
    killed.proc.kill()
    killed.stop()
    assert folder.exists()  # SIGKILL: nothing could remove it
    foreign = tmp_path / "cua-trac-not-ours"  # no owner file: not a folder the service made
    foreign.mkdir()
    live = tmp_path / "cua-trac-live"  # a live owner (this process)
    live.mkdir()
    own_folder(live)
    with running(Trac, tmp_path, name="next", env=env):
        assert not folder.exists()
        assert foreign.is_dir() and live.is_dir()
        assert len(_folders(tmp_path)) == 3  # the two left alone and the new service's own
