"""The PyPI products' shared install and image cache (cua.tasks.products.pybuild): where a
product's venv and images are, a build that lands whole or not at all (its scratch folder
gone either way), a failed or missing install as a typed error, and a real product's seed
image built through it from nothing."""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

import pytest

from cua.errors import CuaError
from cua.tasks.apps.base import IMAGES_ENV
from cua.tasks.products.errors import ProductBuildFailed, ProductMissing
from cua.tasks.products.pybuild import VenvProduct, source_hash
from cua.tasks.products.trac import build as trac_build

DEMO = VenvProduct("demo", "Demo", "demo-*", "requirements-demo.txt", build_timeout_s=30)


def _scratch(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("cua-demo-*"))


def test_an_install_is_found_by_its_dist_info_and_a_missing_one_says_how_to_make_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUA_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("CUA_DEMO_PYTHON", raising=False)
    monkeypatch.delenv(IMAGES_ENV, raising=False)
    assert DEMO.python() == tmp_path / "products" / "demo" / "venv" / "bin" / "python"
    with pytest.raises(ProductMissing) as missing:
        DEMO.version()
    assert "scripts/requirements-demo.txt" in missing.value.message and isinstance(missing.value, CuaError)
    venv = tmp_path / "products" / "demo" / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text("")
    (venv / "lib" / "python3.11" / "site-packages" / "demo-2.4.dist-info").mkdir(parents=True)
    assert DEMO.version() == "2.4" and DEMO.cache_root() == tmp_path / "products" / "demo" / "2.4"
    monkeypatch.setenv(IMAGES_ENV, str(tmp_path / "given"))
    assert DEMO.seed_path("k", 3) == tmp_path / "given" / "seeds" / "k" / "seed-3.db"


def test_a_build_lands_whole_once_and_a_failed_one_leaves_nothing(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(IMAGES_ENV, str(tmp_path / "images"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    tempfile.tempdir = None  # (tempfile reads TMPDIR once)
    try:
        calls: list[Path] = []

        def make(work: Path) -> Path:
            calls.append(work)
            (work / "out.db").write_bytes(b"image")
            return work / "out.db"

        target = DEMO.seed_path("k", 0)
        assert DEMO.seed_image("k", 0, make) == target and target.read_bytes() == b"image"
        assert DEMO.seed_image("k", 0, make) == target and len(calls) == 1  # built once
        assert _scratch(tmp_path) == [] and not list(target.parent.glob("*.part"))

        def fails(work: Path) -> Path:
            DEMO.run(["sh", "-c", "echo half way; exit 3"], "seeding", {})
            raise AssertionError("not reached")

        with pytest.raises(ProductBuildFailed) as failed:
            DEMO.seed_image("k", 1, fails)
        assert "Demo seeding failed (exit 3): half way" in failed.value.message
        assert not DEMO.seed_path("k", 1).exists() and _scratch(tmp_path) == []
        with pytest.raises(ValueError):
            DEMO.seed_image("k", -1, make)
    finally:
        tempfile.tempdir = None


def test_a_source_key_changes_with_content_and_with_a_rename(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    first = source_hash(tmp_path / "a.py", root=tmp_path)
    (tmp_path / "a.py").rename(tmp_path / "b.py")
    assert source_hash(tmp_path / "b.py", root=tmp_path) != first
    assert source_hash(tmp_path / "b.py") == source_hash(b"x = 1\n")


@pytest.mark.slow
@pytest.mark.skipif(not trac_build.trac_python().is_file(), reason="Trac is not installed (scripts/setup.sh)")
def test_a_real_products_seed_builds_from_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trac's template (trac-admin initenv) and seed 0 (its generator under the Trac venv),
    built through the shared helper into an empty image folder."""
    monkeypatch.setenv(IMAGES_ENV, str(tmp_path / "images"))
    image = trac_build.seed_image(0)
    assert image.is_relative_to(tmp_path / "images") and trac_build.template_image().with_name("trac.ini").is_file()
    conn = sqlite3.connect(image)
    try:
        assert conn.execute("SELECT count(*) FROM ticket").fetchone()[0] >= 100
        assert conn.execute("SELECT count(*) FROM cua_activity").fetchone()[0] == 0
    finally:
        conn.close()
