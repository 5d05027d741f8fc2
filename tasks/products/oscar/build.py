"""django-oscar's install and images.

Oscar pins Django and its own Django apps, so it lives in a venv of its own that
scripts/setup.sh makes from scripts/requirements-oscar.txt (pinned, with waitress, the WSGI
server), at ~/.cache/cua/products/oscar/venv (or $CUA_CACHE_DIR/products/oscar/venv;
$CUA_OSCAR_PYTHON names another interpreter). The Django project is `site/cua_oscar_site`
in this folder. Its images are cached beside the venv, per Oscar version:

- `template/shop.db`: the database Django's `migrate` makes (Oscar's own migrations), and
  `static/`: the collected static files (`collectstatic`), both built on first use;
- `seeds/<generator hash>/seed-N.db`: seed N's shop, written through Oscar's own models
  (`seed_oscar.py`, run under the Oscar venv), keyed by the generator's and settings' source.

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

__all__ = ["PASSWORD", "SHOP", "cache_root", "oscar_env", "oscar_python", "seed_image", "static_root",
           "template_image", "version"]

_HERE = Path(__file__).parent
SITE = _HERE / "site"
SHOP = "Fernhill Outfitters"
#: The seeded accounts' shared password (seed_oscar.PASSWORD).
PASSWORD = "fernhill-2026"
_BUILD_TIMEOUT_S = 600


def _base() -> Path:
    return Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua") / "products" / "oscar"


def oscar_python() -> Path:
    given = os.environ.get("CUA_OSCAR_PYTHON")
    return Path(given) if given else _base() / "venv" / "bin" / "python"


def version() -> str:
    """The installed Oscar's version (its dist-info folder); ProductMissing when there is none."""
    python = oscar_python()
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages/django_oscar-*.dist-info"))
    if not python.is_file() or not found:
        raise ProductMissing(f"django-oscar is not installed here ({python} with django-oscar is needed): run "
                             "scripts/setup.sh, which makes that venv from scripts/requirements-oscar.txt")
    return found[-1].name.removesuffix(".dist-info").split("-")[1]


def cache_root() -> Path:
    """This Oscar version's images: the folder the service was given (`serve --images`), else
    ~/.cache/cua/products/oscar/<version>."""
    given = os.environ.get(IMAGES_ENV)
    return Path(given) if given else _base() / version()


def static_root() -> Path:
    return cache_root() / "static"


def oscar_env(data_dir: Path) -> dict[str, str]:
    """The environment of the shop's Django for an instance whose files are in `data_dir`."""
    env = dict(os.environ)
    env.update(PYTHONPATH=str(SITE), DJANGO_SETTINGS_MODULE="cua_oscar_site.settings", CUA_OSCAR_DATA=str(data_dir),
               CUA_OSCAR_STATIC=str(static_root()), PYTHONWARNINGS="ignore")
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


def _run(argv: list[str], data_dir: Path, what: str) -> None:
    try:
        done = subprocess.run(argv, env=oscar_env(data_dir), capture_output=True, text=True,
                              timeout=_BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"Oscar {what} took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise ProductBuildFailed(f"Oscar {what} failed (exit {done.returncode}): {tail}")


def _site_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(SITE.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def template_image() -> Path:
    """The freshly migrated shop's database (Django's migrate over Oscar's migrations), with
    the static files collected beside it."""
    target = cache_root() / "template" / "shop.db"
    if target.is_file() and (static_root() / ".done").is_file():
        return target
    with _locked("template"):
        if target.is_file() and (static_root() / ".done").is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-oscar-init-"))
        try:
            django_admin = str(oscar_python().parent / "django-admin")
            _run([django_admin, "migrate", "--no-input", "-v0"], work, "migrate")
            _run([django_admin, "collectstatic", "--no-input", "-v0"], work, "collectstatic")
            (static_root() / ".done").write_text("ok\n")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / "shop.db", target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _generator_hash() -> str:
    digest = hashlib.sha256((_HERE / "seed_oscar.py").read_bytes())
    digest.update(_site_hash().encode())
    return digest.hexdigest()[:12]


def seed_image(seed: int) -> Path:
    """The shop's database after seed `seed`'s catalogue, customers and orders; built on
    first use (~10 s)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    target = cache_root() / "seeds" / _generator_hash() / f"seed-{seed}.db"
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"cua-oscar-seed{seed}-"))
        try:
            db = work / "shop.db"
            shutil.copyfile(template, db)
            _run([str(oscar_python()), str(_HERE / "seed_oscar.py"), str(seed)], work, f"seeding (seed {seed})")
            conn = sqlite3.connect(db, isolation_level=None)
            try:
                install_activity_log(conn)
                conn.execute("VACUUM")
            finally:
                conn.close()
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(db, target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target
