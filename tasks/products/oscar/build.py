"""django-oscar's install and images.

Oscar pins Django and its own Django apps, so it lives in a venv of its own that
scripts/setup.sh makes from scripts/requirements-oscar.txt (pinned, with waitress, the WSGI
server): see cua.tasks.products.pybuild for where it and the images are. The Django project
is `site/cua_oscar_site` in this folder. Its images, per Oscar version:

- `template/shop.db`: the database Django's `migrate` makes (Oscar's own migrations), and
  `static/`: the collected static files (`collectstatic`), both built on first use;
- `seeds/<generator hash>/seed-N.db`: seed N's shop, written through Oscar's own models
  (`seed_oscar.py`, run under the Oscar venv), keyed by the generator's and settings' source.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cua.tasks.products.pybuild import VenvProduct, finish_seed, source_hash, tree_files

__all__ = ["PASSWORD", "PRODUCT", "SHOP", "cache_root", "oscar_env", "oscar_python", "seed_image", "static_root",
           "template_image", "version"]

_HERE = Path(__file__).parent
SITE = _HERE / "site"
SHOP = "Fernhill Outfitters"
#: The seeded accounts' shared password (seed_oscar.PASSWORD).
PASSWORD = "fernhill-2026"
PRODUCT = VenvProduct("oscar", "django-oscar", "django_oscar-*", "requirements-oscar.txt", build_timeout_s=600)
oscar_python = PRODUCT.python
version = PRODUCT.version
cache_root = PRODUCT.cache_root


def static_root() -> Path:
    return cache_root() / "static"


def oscar_env(data_dir: Path) -> dict[str, str]:
    """The environment of the shop's Django for an instance whose files are in `data_dir`."""
    env = dict(os.environ)
    env.update(PYTHONPATH=str(SITE), DJANGO_SETTINGS_MODULE="cua_oscar_site.settings", CUA_OSCAR_DATA=str(data_dir),
               CUA_OSCAR_STATIC=str(static_root()), PYTHONWARNINGS="ignore")
    return env


def template_image() -> Path:
    """The freshly migrated shop's database (Django's migrate over Oscar's migrations), with
    the static files collected beside it."""

    def make(work: Path) -> Path:
        django_admin = str(oscar_python().parent / "django-admin")
        PRODUCT.run([django_admin, "migrate", "--no-input", "-v0"], "migrate", oscar_env(work))
        PRODUCT.run([django_admin, "collectstatic", "--no-input", "-v0"], "collectstatic", oscar_env(work))
        (static_root() / ".done").write_text("ok\n")
        return work / "shop.db"

    return PRODUCT.build(cache_root() / "template" / "shop.db", "template", make,
                         ready=lambda: (static_root() / ".done").is_file())


def _generator_hash() -> str:
    return source_hash(_HERE / "seed_oscar.py", source_hash(*tree_files(SITE, ["*.py"])))


def seed_image(seed: int) -> Path:
    """The shop's database after seed `seed`'s catalogue, customers and orders; built on
    first use (~10 s)."""

    def make(work: Path) -> Path:
        db = work / "shop.db"
        shutil.copyfile(template_image(), db)
        PRODUCT.run([str(oscar_python()), str(_HERE / "seed_oscar.py"), str(seed)], f"seeding (seed {seed})",
                    oscar_env(work))
        finish_seed(db)
        return db

    return PRODUCT.seed_image(_generator_hash(), seed, make)
