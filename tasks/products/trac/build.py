"""Trac's install and images.

Trac 1.6 imports `pkg_resources`, which the main venv's setuptools (84) no longer ships, so
Trac lives in a venv of its own that scripts/setup.sh makes from scripts/requirements-trac.txt
(pinned: Trac, setuptools<81, Jinja2 and MarkupSafe at the main venv's versions), at
~/.cache/cua/products/trac/venv (or $CUA_CACHE_DIR/products/trac/venv; $CUA_TRAC_PYTHON
names another interpreter). Its images are cached beside it, per Trac version:

- `template/trac.db`: the database `trac-admin initenv` makes (built on first use);
- `seeds/<generator hash>/seed-N.db`: seed N's project, written by Trac's own model API
  (`seed_trac.py`, run under the Trac venv), keyed by the generator's source.

Builds take a lock and land by an atomic rename, so a crashed build leaves no half image.
"""

from __future__ import annotations

import configparser
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

__all__ = ["PASSWORD", "PROJECT", "cache_root", "env_skeleton", "seed_image", "template_image", "trac_python",
           "version"]

_HERE = Path(__file__).parent
PROJECT = "Kestrel"
#: The seeded accounts' shared password (the login form of tracd_cua.py checks it).
PASSWORD = "kestrel-2026"
_BUILD_TIMEOUT_S = 300
#: What an instance changes in the trac.ini that initenv wrote (its other sections, the
#: ticket workflow among them, stay Trac's defaults).
_TRAC_INI = """[trac]
database = sqlite:db/trac.db
base_url =
default_timezone = UTC
default_date_format = iso8601
auth_cookie_lifetime = 0
[project]
name = {project}
descr = An open-source photo library manager
[logging]
log_type = none
[notification]
smtp_enabled = false
[ticket]
restrict_owner = true
[header_logo]
src =
[search]
min_query_length = 3
"""


def _base() -> Path:
    return Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua") / "products" / "trac"


def trac_python() -> Path:
    given = os.environ.get("CUA_TRAC_PYTHON")
    return Path(given) if given else _base() / "venv" / "bin" / "python"


def version() -> str:
    """The installed Trac's version (its dist-info folder); ProductMissing when there is none."""
    python = trac_python()
    found = sorted(python.parent.parent.glob("lib/python3*/site-packages/[Tt]rac-*.dist-info"))
    if not python.is_file() or not found:
        raise ProductMissing(f"Trac is not installed here ({python} with Trac is needed): run scripts/setup.sh, "
                             "which makes that venv from scripts/requirements-trac.txt")
    return found[-1].name.removesuffix(".dist-info").split("-")[1]


def cache_root() -> Path:
    """This Trac version's images: the folder the service was given (`serve --images`), else
    ~/.cache/cua/products/trac/<version>."""
    given = os.environ.get(IMAGES_ENV)
    return Path(given) if given else _base() / version()


def trac_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONWARNINGS"] = "ignore"  # pkg_resources' deprecation notice, on every start
    env.pop("PYTHONPATH", None)
    return env


def env_skeleton(path: Path) -> Path:
    """A Trac environment folder at `path` (what initenv makes, less the database): its
    VERSION file, trac.ini (initenv's, with `_TRAC_INI` over it) and folders; returns the
    database file's path."""
    for sub in ("conf", "db", "log", "htdocs", "plugins", "templates", "files/attachments"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    (path / "VERSION").write_text("Trac Environment Version 1\n")
    config = configparser.ConfigParser(interpolation=None)
    config.optionxform = str  # type: ignore[assignment,method-assign]  # Trac's option names keep their case
    config.read(template_image().with_name("trac.ini"), encoding="utf-8")
    config.read_string(_TRAC_INI.format(project=PROJECT))
    with open(path / "conf" / "trac.ini", "w", encoding="utf-8") as out:
        out.write("# Written by cua.tasks.products.trac.build: one instance's configuration.\n")
        config.write(out)
    return path / "db" / "trac.db"


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


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, env=trac_env(), capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"Trac {what} took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise ProductBuildFailed(f"Trac {what} failed (exit {done.returncode}): {tail}")


def template_image() -> Path:
    """The freshly initialised environment's database (trac-admin initenv, SQLite)."""
    target = cache_root() / "template" / "trac.db"
    if target.is_file():
        return target
    with _locked("template"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-trac-init-"))
        try:
            admin = trac_python().parent / "trac-admin"
            _run([str(admin), str(work / "env"), "initenv", PROJECT, "sqlite:db/trac.db"], "initenv")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(work / "env" / "conf" / "trac.ini", target.with_name("trac.ini"))
            shutil.copyfile(work / "env" / "db" / "trac.db", target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _generator_hash() -> str:
    digest = hashlib.sha256((_HERE / "seed_trac.py").read_bytes())
    digest.update(_TRAC_INI.encode())
    return digest.hexdigest()[:12]


def seed_image(seed: int) -> Path:
    """The environment's database after seed `seed`'s project; built on first use (~1 s)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")
    target = cache_root() / "seeds" / _generator_hash() / f"seed-{seed}.db"
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"cua-trac-seed{seed}-"))
        try:
            db = env_skeleton(work / "env")
            shutil.copyfile(template, db)
            _run([str(trac_python()), str(_HERE / "seed_trac.py"), str(work / "env"), str(seed)],
                 f"seeding (seed {seed})")
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
