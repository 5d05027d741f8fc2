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

import os
import shutil
from pathlib import Path

from cua.tasks.products.errors import ProductMissing
from cua.tasks.products.pybuild import VenvProduct, finish_seed, source_hash, tree_files

__all__ = ["PASSWORD", "ORGANIZER", "PRODUCT", "cache_root", "pretix_env", "pretix_python", "seed_image",
           "static_root", "template_image", "version"]

_HERE = Path(__file__).parent
SITE = _HERE / "site"
ORGANIZER = "Lakeside Live"
#: The seeded staff accounts' shared password (seed_pretix.PASSWORD).
PASSWORD = "lakeside-2026"
PRODUCT = VenvProduct("pretix", "pretix", "pretix-*", "requirements-pretix.txt", build_timeout_s=600)
pretix_python = PRODUCT.python
version = PRODUCT.version
cache_root = PRODUCT.cache_root


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


def template_image() -> Path:
    """The freshly migrated pretix's database (`python -m pretix migrate`, pretix's own
    migrations; about 90 s)."""

    def make(work: Path) -> Path:
        PRODUCT.run([str(pretix_python()), "-m", "pretix", "migrate", "--no-input", "-v0"], "migrate",
                    pretix_env(work))
        return work / "pretix.db"

    return PRODUCT.build(cache_root() / "template" / "pretix.db", "template", make)


def _generator_hash() -> str:
    return source_hash(_HERE / "seed_pretix.py", source_hash(*tree_files(SITE, ["*.py"])))


def seed_image(seed: int) -> Path:
    """pretix's database after seed `seed`'s organizer, events, orders and staff; built on
    first use (about a minute)."""

    def make(work: Path) -> Path:
        db = work / "pretix.db"
        shutil.copyfile(template_image(), db)
        PRODUCT.run([str(pretix_python()), str(_HERE / "seed_pretix.py"), str(seed)], f"seeding (seed {seed})",
                    pretix_env(work))
        finish_seed(db)
        return db

    return PRODUCT.seed_image(_generator_hash(), seed, make)
