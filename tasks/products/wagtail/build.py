"""Wagtail's install and images.

Wagtail (with the Django it supports) and waitress live in a venv of their own that
scripts/setup.sh makes from scripts/requirements-wagtail.txt (Wagtail 8 wants Django 5.2,
pillow and friends the main venv does not pin), at ~/.cache/cua/products/wagtail/venv (or
$CUA_CACHE_DIR/products/wagtail/venv; $CUA_WAGTAIL_PYTHON names another interpreter). Its
images are cached beside it, per Wagtail version:

- `template/wagtail.db`: the database Django's `migrate` makes for the site (cmsite/);
- `seeds/<generator hash>/seed-N.db` and `seed-N.media/`: seed N's site, written by
  Wagtail's own models (`seed_wagtail.py`, run under the Wagtail venv), with its media
  files (images, documents), keyed by the generator's and the site's source.

Builds take a lock and land by an atomic rename, so a crashed build leaves no half image.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cua.tasks.apps.activity import install as install_activity_log
from cua.tasks.apps.base import IMAGES_ENV
from cua.tasks.products.base import ProductBuildFailed, ProductMissing

__all__ = ["PASSWORD", "SITE", "cache_root", "media_image", "seed_image", "site_env", "template_image", "version",
           "wagtail_python"]

_HERE = Path(__file__).parent
SITE = _HERE / "cmsite"
#: The seeded accounts' shared password (seed_wagtail.py sets it).
PASSWORD = "harbour-2026"
_BUILD_TIMEOUT_S = 300


def _base() -> Path:
    return Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua") / "products" / "wagtail"


def wagtail_python() -> Path:
    given = os.environ.get("CUA_WAGTAIL_PYTHON")
    return Path(given) if given else _base() / "venv" / "bin" / "python"


def version() -> str:
    """The installed Wagtail's version (its dist-info folder); ProductMissing when there is none."""
    python = wagtail_python()
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages/wagtail-*.dist-info"))
    if not python.is_file() or not found:
        raise ProductMissing(f"Wagtail is not installed here ({python} with Wagtail is needed): run scripts/setup.sh, "
                             "which makes that venv from scripts/requirements-wagtail.txt")
    return found[-1].name.removesuffix(".dist-info").split("-")[1]


def cache_root() -> Path:
    """This Wagtail version's images: the folder the service was given (`serve --images`),
    else ~/.cache/cua/products/wagtail/<version>."""
    given = os.environ.get(IMAGES_ENV)
    return Path(given) if given else _base() / version()


def site_env(db: Path, media: Path) -> dict[str, str]:
    """The environment the site's Python runs in, for database file `db` and media folder `media`."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(PYTHONWARNINGS="ignore", DJANGO_SETTINGS_MODULE="settings", CUA_WAGTAIL_DB=str(db),
               CUA_WAGTAIL_MEDIA=str(media))
    return env


@contextmanager
def _locked(name: str) -> Iterator[None]:
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    try:
        done = subprocess.run(argv, env=env, cwd=SITE, capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"Wagtail {what} took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise ProductBuildFailed(f"Wagtail {what} failed (exit {done.returncode}): {tail}")


def _site_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(SITE.rglob("*.py")) + sorted(SITE.rglob("*.html")):
        if "__pycache__" not in path.parts:
            digest.update(path.relative_to(SITE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def template_image() -> Path:
    """The freshly migrated site's database (Django's migrate, SQLite)."""
    target = cache_root() / "template" / _site_hash() / "wagtail.db"
    if target.is_file():
        return target
    with _locked("template"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-wagtail-init-"))
        try:
            db = work / "wagtail.db"
            _run([str(wagtail_python()), "-m", "django", "migrate", "--no-input", "-v0"],
                 site_env(db, work / "media"), "migrate")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(db, target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _generator_hash() -> str:
    digest = hashlib.sha256((_HERE / "seed_wagtail.py").read_bytes())
    digest.update(_site_hash().encode())
    return digest.hexdigest()[:12]


def _seed_paths(seed: int) -> tuple[Path, Path]:
    folder = cache_root() / "seeds" / _generator_hash()
    return folder / f"seed-{seed}.db", folder / f"seed-{seed}.media"


def seed_image(seed: int) -> Path:
    """The site's database after seed `seed`'s content; built on first use (~20 s), with
    its media folder beside it (`media_image`)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    target, media = _seed_paths(seed)
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"cua-wagtail-seed{seed}-"))
        try:
            db = work / "wagtail.db"
            shutil.copyfile(template, db)
            (work / "media").mkdir()
            _run([str(wagtail_python()), str(_HERE / "seed_wagtail.py"), str(seed)], site_env(db, work / "media"),
                 f"seeding (seed {seed})")
            conn = sqlite3.connect(db, isolation_level=None)
            try:
                install_activity_log(conn)
                conn.execute("VACUUM")
            finally:
                conn.close()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(media, ignore_errors=True)
            os.replace(work / "media", media)
            shutil.copyfile(db, target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def media_image(seed: int) -> Path:
    """Seed `seed`'s media folder (its images' and documents' files)."""
    seed_image(seed)
    return _seed_paths(seed)[1]
