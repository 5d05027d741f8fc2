"""Trac's install and images.

Trac 1.6 imports `pkg_resources`, which the main venv's setuptools (84) no longer ships, so
Trac lives in a venv of its own that scripts/setup.sh makes from scripts/requirements-trac.txt
(pinned: Trac, setuptools<81, Jinja2 and MarkupSafe at the main venv's versions): see
cua.tasks.products.pybuild for where it and the images are. Its images, per Trac version:

- `template/trac.db`: the database `trac-admin initenv` makes (built on first use);
- `seeds/<generator hash>/seed-N.db`: seed N's project, written by Trac's own model API
  (`seed_trac.py`, run under the Trac venv), keyed by the generator's source.
"""

from __future__ import annotations

import configparser
import os
import shutil
from pathlib import Path

from cua.tasks.products.pybuild import VenvProduct, finish_seed, source_hash

__all__ = ["PASSWORD", "PRODUCT", "PROJECT", "cache_root", "env_skeleton", "seed_image", "template_image", "trac_python",
           "version"]

_HERE = Path(__file__).parent
PROJECT = "Kestrel"
#: The seeded accounts' shared password (the login form of tracd_cua.py checks it).
PASSWORD = "kestrel-2026"
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
PRODUCT = VenvProduct("trac", "Trac", "[Tt]rac-*", "requirements-trac.txt")
trac_python = PRODUCT.python
version = PRODUCT.version
cache_root = PRODUCT.cache_root


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


def template_image() -> Path:
    """The freshly initialised environment's database (trac-admin initenv, SQLite), with
    the trac.ini initenv wrote beside it."""
    target = cache_root() / "template" / "trac.db"

    def make(work: Path) -> Path:
        admin = trac_python().parent / "trac-admin"
        PRODUCT.run([str(admin), str(work / "env"), "initenv", PROJECT, "sqlite:db/trac.db"], "initenv", trac_env())
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / "env" / "conf" / "trac.ini", target.with_name("trac.ini"))
        return work / "env" / "db" / "trac.db"

    return PRODUCT.build(target, "template", make)


def _generator_hash() -> str:
    return source_hash(_HERE / "seed_trac.py", _TRAC_INI)


def seed_image(seed: int) -> Path:
    """The environment's database after seed `seed`'s project; built on first use (~1 s)."""

    def make(work: Path) -> Path:
        db = env_skeleton(work / "env")
        shutil.copyfile(template_image(), db)
        PRODUCT.run([str(trac_python()), str(_HERE / "seed_trac.py"), str(work / "env"), str(seed)],
                    f"seeding (seed {seed})", trac_env())
        finish_seed(db)
        return db

    return PRODUCT.seed_image(_generator_hash(), seed, make)
