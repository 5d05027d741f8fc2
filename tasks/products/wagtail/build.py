"""Wagtail's install and images.

Wagtail (with the Django it supports) and waitress live in a venv of their own that
scripts/setup.sh makes from scripts/requirements-wagtail.txt (Wagtail 8 wants Django 5.2,
pillow and friends the main venv does not pin): see cua.tasks.products.pybuild for where it
and the images are. Its images, per Wagtail version:

- `template/<site hash>/wagtail.db`: the database Django's `migrate` makes for the site (cmsite/);
- `seeds/<generator hash>/seed-N.db` and `seed-N.media/`: seed N's site, written by
  Wagtail's own models (`seed_wagtail.py`, run under the Wagtail venv), with its media
  files (images, documents), keyed by the generator's and the site's source.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cua.tasks.products.pybuild import VenvProduct, finish_seed, source_hash, tree_files

__all__ = ["PASSWORD", "PRODUCT", "SITE", "cache_root", "media_image", "seed_image", "site_env", "template_image",
           "version", "wagtail_python"]

_HERE = Path(__file__).parent
SITE = _HERE / "cmsite"
#: The seeded accounts' shared password (seed_wagtail.py sets it).
PASSWORD = "harbour-2026"
PRODUCT = VenvProduct("wagtail", "Wagtail", "wagtail-*", "requirements-wagtail.txt")
wagtail_python = PRODUCT.python
version = PRODUCT.version
cache_root = PRODUCT.cache_root


def site_env(db: Path, media: Path) -> dict[str, str]:
    """The environment the site's Python runs in, for database file `db` and media folder `media`."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.update(PYTHONWARNINGS="ignore", DJANGO_SETTINGS_MODULE="settings", CUA_WAGTAIL_DB=str(db),
               CUA_WAGTAIL_MEDIA=str(media))
    return env


def _site_hash() -> str:
    return source_hash(*tree_files(SITE, ["*.py", "*.html"]), root=SITE)


def template_image() -> Path:
    """The freshly migrated site's database (Django's migrate, SQLite)."""

    def make(work: Path) -> Path:
        db = work / "wagtail.db"
        PRODUCT.run([str(wagtail_python()), "-m", "django", "migrate", "--no-input", "-v0"], "migrate",
                    site_env(db, work / "media"), cwd=SITE)
        return db

    return PRODUCT.build(cache_root() / "template" / _site_hash() / "wagtail.db", "template", make)


def _generator_hash() -> str:
    return source_hash(_HERE / "seed_wagtail.py", _site_hash())


def seed_image(seed: int) -> Path:
    """The site's database after seed `seed`'s content; built on first use (~20 s), with
    its media folder beside it (`media_image`)."""

    def make(work: Path) -> Path:
        db = work / "wagtail.db"
        shutil.copyfile(template_image(), db)
        (work / "media").mkdir()
        PRODUCT.run([str(wagtail_python()), str(_HERE / "seed_wagtail.py"), str(seed)], f"seeding (seed {seed})",
                    site_env(db, work / "media"), cwd=SITE)
        finish_seed(db)
        media = PRODUCT.seed_path(_generator_hash(), seed, ".media")
        media.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(media, ignore_errors=True)
        os.replace(work / "media", media)
        return db

    return PRODUCT.seed_image(_generator_hash(), seed, make)


def media_image(seed: int) -> Path:
    """Seed `seed`'s media folder (its images' and documents' files)."""
    seed_image(seed)
    return PRODUCT.seed_path(_generator_hash(), seed, ".media")
