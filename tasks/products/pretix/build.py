"""pretix's install and images.

pretix pins Django, Celery and some forty libraries of its own, so it lives in a venv of its
own that scripts/setup.sh makes from scripts/requirements-pretix.txt (pinned, with waitress,
the WSGI server), at ~/.cache/cua/products/pretix/venv (or $CUA_CACHE_DIR/products/pretix/venv;
$CUA_PRETIX_PYTHON names another interpreter). pretix's settings are its own
(`site/cua_pretix_site/settings.py` extends them), configured by $PRETIX_* variables: SQLite,
no Redis, no Celery broker (tasks run eagerly in the request). Its static files are the
wheel's own compiled `static.dist` (pretix builds them, SCSS and offline compression
included, when the wheel is made), served by the front. Its images are cached beside the
venv, per pretix version:

- `template/pretix.db`: the database pretix's `migrate` makes (its own migrations);
- `seeds/<generator hash>/seed-N.db`: seed N's organizer, events, orders and staff, written
  through pretix's own models and services (`seed_pretix.py`, run under the pretix venv),
  keyed by the generator's and settings' source.

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

__all__ = ["PASSWORD", "ORGANIZER", "cache_root", "pretix_env", "pretix_python", "seed_image", "static_root",
           "template_image", "version"]

_HERE = Path(__file__).parent
SITE = _HERE / "site"
ORGANIZER = "Lakeside Live"
#: The seeded staff accounts' shared password (seed_pretix.PASSWORD).
PASSWORD = "lakeside-2026"
_BUILD_TIMEOUT_S = 600


def _base() -> Path:
    return Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua") / "products" / "pretix"


def pretix_python() -> Path:
    given = os.environ.get("CUA_PRETIX_PYTHON")
    return Path(given) if given else _base() / "venv" / "bin" / "python"


def version() -> str:
    """The installed pretix's version (its dist-info folder); ProductMissing when there is none."""
    python = pretix_python()
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages/pretix-*.dist-info"))
    if not python.is_file() or not found:
        raise ProductMissing(f"pretix is not installed here ({python} with pretix is needed): run "
                             "scripts/setup.sh, which makes that venv from scripts/requirements-pretix.txt")
    return found[-1].name.removesuffix(".dist-info").split("-")[1]


def cache_root() -> Path:
    """This pretix version's images: the folder the service was given (`serve --images`), else
    ~/.cache/cua/products/pretix/<version>."""
    given = os.environ.get(IMAGES_ENV)
    return Path(given) if given else _base() / version()


def static_root() -> Path:
    """pretix's compiled static files, as its wheel ships them (its STATIC_ROOT)."""
    found = sorted(pretix_python().parent.parent.glob("lib/python3*/site-packages/pretix/static.dist"))
    if not found:
        raise ProductMissing("pretix's compiled static files (pretix/static.dist) are missing: run scripts/setup.sh")
    return found[-1]


def pretix_env(data_dir: Path, port: int = 0) -> dict[str, str]:
    """The environment of pretix for an instance whose files are in `data_dir`, served on
    `port` (its absolute links: pretix's SITE_URL)."""
    env = dict(os.environ)
    env.update(PYTHONPATH=str(SITE), DJANGO_SETTINGS_MODULE="cua_pretix_site.settings", PYTHONWARNINGS="ignore",
               PRETIX_PRETIX_DATADIR=str(data_dir), PRETIX_DATABASE_BACKEND="sqlite3",
               PRETIX_DATABASE_NAME=str(data_dir / "pretix.db"),
               PRETIX_PRETIX_URL=f"http://127.0.0.1:{port}" if port else "http://127.0.0.1",
               PRETIX_PRETIX_INSTANCE_NAME=f"{ORGANIZER} tickets", PRETIX_PRETIX_CURRENCY="EUR",
               PRETIX_PRETIX_ECB_RATES="false", PRETIX_PRETIX_REGISTRATION="false",
               PRETIX_PRETIX_PASSWORD_RESET="false", PRETIX_DJANGO_DEBUG="false",
               PRETIX_DJANGO_SECRET=os.environ.get("CUA_PRETIX_SECRET", "cua-pretix-not-secret"),
               PRETIX_DJANGO_PASSWORDS_ARGON2="false", PRETIX_LOCALE_TIMEZONE="UTC",
               PRETIX_MAIL_FROM="tickets@lakeside-live.example")
    for name in ("PRETIX_CONFIG_FILE", "PRETIX_REDIS_LOCATION", "PRETIX_CELERY_BROKER", "PRETIX_MEMCACHED_LOCATION"):
        env.pop(name, None)
    env["PRETIX_CONFIG_FILE"] = os.devnull  # never /etc/pretix/pretix.cfg or ~/.pretix.cfg
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
        done = subprocess.run(argv, env=pretix_env(data_dir), capture_output=True, text=True,
                              timeout=_BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"pretix {what} took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise ProductBuildFailed(f"pretix {what} failed (exit {done.returncode}): {tail}")


def _site_hash() -> str:
    digest = hashlib.sha256()
    for path in sorted(SITE.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def template_image() -> Path:
    """The freshly migrated pretix's database (`python -m pretix migrate`, pretix's own
    migrations; about 90 s)."""
    target = cache_root() / "template" / "pretix.db"
    if target.is_file():
        return target
    with _locked("template"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-pretix-init-"))
        try:
            _run([str(pretix_python()), "-m", "pretix", "migrate", "--no-input", "-v0"], work, "migrate")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / "pretix.db", target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _generator_hash() -> str:
    digest = hashlib.sha256((_HERE / "seed_pretix.py").read_bytes())
    digest.update(_site_hash().encode())
    return digest.hexdigest()[:12]


def seed_image(seed: int) -> Path:
    """pretix's database after seed `seed`'s organizer, events, orders and staff; built on
    first use (about a minute)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    target = cache_root() / "seeds" / _generator_hash() / f"seed-{seed}.db"
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"cua-pretix-seed{seed}-"))
        try:
            db = work / "pretix.db"
            shutil.copyfile(template, db)
            _run([str(pretix_python()), str(_HERE / "seed_pretix.py"), str(seed)], work, f"seeding (seed {seed})")
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
