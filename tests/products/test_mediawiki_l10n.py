"""MediaWiki's localisation cache is kept as PHP arrays (its `array` store: OPcache keeps
the messages compiled, ~10% less CPU a page than the CDB file it replaced), built on first
use beside the images, and every interface message still renders (a missing message shows
as ⧼key⧽ on the page)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from cua.tasks.apps.base import IMAGES_ENV
from cua.tasks.products.mediawiki import build

pytestmark = pytest.mark.skipif(not Path("/usr/share/mediawiki/includes/Defines.php").is_file(),
                                reason="MediaWiki is not installed (scripts/setup.sh installs it)")


def test_the_localisation_cache_is_built_on_first_use_as_php_arrays(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IMAGES_ENV, str(tmp_path / "images"))
    folder = build.l10n_dir()
    assert folder.parent == tmp_path / "images"
    (cache,) = folder.iterdir()
    assert cache.name == "en.l10n.php" and cache.stat().st_size > 100_000
    assert "'specialpages'" in cache.read_text(encoding="utf-8")  # the messages themselves
    assert build.l10n_dir() == folder and list(folder.iterdir()) == [cache]  # built once
    assert not [p for p in (tmp_path / "images").iterdir() if ".part" in p.name]


@pytest.mark.slow
def test_the_wikis_pages_show_every_interface_message(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    proc = subprocess.Popen([sys.executable, "-m", "cua.tasks.apps.serve", "mediawiki", "--port", str(port),
                             "--socket", str(tmp_path / "mw.sock")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        assert any(line.strip() == "ready" for line in proc.stdout), "the mediawiki service did not start"
        for title, text in (("Special:SpecialPages", "Special pages"), ("Main_Page", "Main Page"),
                            ("Special:AllPages", "All pages")):
            page = httpx.get(f"http://127.0.0.1:{port}/wiki/{title}", timeout=60)
            assert page.status_code == 200 and text in page.text, title
            assert "⧼" not in page.text, title  # a message MediaWiki could not find
    finally:
        proc.terminate()
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()
