"""A PyPI product's install and image cache, shared by the products that live in a venv of
their own (Trac, django-oscar, Wagtail, ...): each pins libraries the main venv cannot hold,
so scripts/setup.sh makes it a venv at ~/.cache/cua/products/<name>/venv (or
$CUA_CACHE_DIR/products/<name>/venv; $CUA_<NAME>_PYTHON names another interpreter).

Its images are cached beside the venv, per installed version (or in the folder the service
was given, `serve --images`). An image is built once, under a lock, in a scratch folder,
and lands by an atomic rename: a crashed build leaves no half image, and two sandboxes
starting at once build it once. A product's build.py says what its images are made of
(`VenvProduct.build` with its own steps) and keys its seeds by its generator's source
(`source_hash`), so a changed generator builds new seeds beside the old.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cua.tasks.apps.activity import install as install_activity_log
from cua.tasks.apps.base import IMAGES_ENV
from cua.tasks.products.errors import ProductBuildFailed, ProductMissing
from cua.tasks.products.stale import own_folder

__all__ = ["VenvProduct", "check_seed", "finish_seed", "source_hash", "tree_files"]


def check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a non-negative integer, not {seed!r}")


def source_hash(*parts: Path | str | bytes, root: Path | None = None) -> str:
    """A short key of `parts`: files (their bytes; below `root`, with their relative path
    too, so a rename counts), strings and bytes, in the order given."""
    digest = hashlib.sha256()
    for part in parts:
        if isinstance(part, Path):
            if root is not None:
                digest.update(part.relative_to(root).as_posix().encode())
            digest.update(part.read_bytes())
        else:
            digest.update(part.encode() if isinstance(part, str) else part)
    return digest.hexdigest()[:12]


def tree_files(root: Path, patterns: Iterable[str]) -> list[Path]:
    """The files below `root` matching any of `patterns`, sorted per pattern, caches aside."""
    return [p for pattern in patterns for p in sorted(root.rglob(pattern)) if "__pycache__" not in p.parts]


def finish_seed(db: Path) -> None:
    """Make a freshly seeded database an image: the activity log's table, then VACUUM (the
    image is copied at every reset, so it carries no free pages)."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        install_activity_log(conn)
        conn.execute("VACUUM")
    finally:
        conn.close()


@dataclass(frozen=True)
class VenvProduct:
    """One product's venv and image cache.

    `name` is its folder and variable name (`trac`: ~/.cache/cua/products/trac,
    $CUA_TRAC_PYTHON), `label` how messages name it, `dist` the glob of its dist-info
    folder's name (`[Tt]rac-*`), `requirements` the pinned file setup.sh installs."""

    name: str
    label: str
    dist: str
    requirements: str
    build_timeout_s: float = 300.0

    def base(self) -> Path:
        return Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua") / "products" / self.name

    def python(self) -> Path:
        given = os.environ.get(f"CUA_{self.name.upper()}_PYTHON")
        return Path(given) if given else self.base() / "venv" / "bin" / "python"

    def version(self) -> str:
        """The installed version (its dist-info folder); ProductMissing when there is none."""
        python = self.python()
        found = sorted(python.parent.parent.glob(f"lib/python3*/site-packages/{self.dist}.dist-info"))
        if not python.is_file() or not found:
            raise ProductMissing(f"{self.label} is not installed here ({python} with {self.label} is needed): run "
                                 f"scripts/setup.sh, which makes that venv from scripts/{self.requirements}")
        return found[-1].name.removesuffix(".dist-info").split("-")[1]

    def cache_root(self) -> Path:
        """This version's images: the folder the service was given (`serve --images`), else
        ~/.cache/cua/products/<name>/<version>."""
        given = os.environ.get(IMAGES_ENV)
        return Path(given) if given else self.base() / self.version()

    def seed_path(self, key: str, seed: int, suffix: str = ".db") -> Path:
        """Where seed `seed`'s image (or, with another `suffix`, what goes beside it) is kept
        for generator key `key`."""
        return self.cache_root() / "seeds" / key / f"seed-{seed}{suffix}"

    def seed_image(self, key: str, seed: int, make: Callable[[Path], Path]) -> Path:
        """Seed `seed`'s image for generator key `key`, built by `make` on first use (see
        `build`); ValueError for a seed that is not a non-negative integer."""
        check_seed(seed)
        return self.build(self.seed_path(key, seed), f"seed-{seed}", make)

    @contextmanager
    def locked(self, what: str) -> Iterator[None]:
        """Hold the cache's lock for building `what` (other processes wait on it)."""
        root = self.cache_root()
        root.mkdir(parents=True, exist_ok=True)
        with open(root / f".{what}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def run(self, argv: list[str], what: str, env: Mapping[str, str], cwd: Path | None = None) -> None:
        """Run one build step under the product's Python; ProductBuildFailed with its output's
        tail when it fails or outlasts the build timeout."""
        try:
            done = subprocess.run(argv, env=dict(env), cwd=cwd, capture_output=True, text=True,
                                  timeout=self.build_timeout_s, check=False)
        except subprocess.TimeoutExpired as exc:
            raise ProductBuildFailed(f"{self.label} {what} took over {self.build_timeout_s:.0f} s") from exc
        if done.returncode != 0:
            tail = (done.stdout + done.stderr).strip()[-1500:]
            raise ProductBuildFailed(f"{self.label} {what} failed (exit {done.returncode}): {tail}")

    def build(self, target: Path, what: str, make: Callable[[Path], Path],
              ready: Callable[[], bool] | None = None) -> Path:
        """`target`, built by `make` when it is not there yet (or `ready()` says the rest of
        it is missing): `make` gets a scratch folder and returns the file to land at
        `target`; the scratch folder goes afterwards, whatever happened."""

        def done() -> bool:
            return target.is_file() and (ready is None or ready())

        if done():
            return target
        with self.locked(what):
            if done():
                return target
            work = Path(tempfile.mkdtemp(prefix=f"cua-{self.name}-{what}-"))
            try:
                own_folder(work)  # a build killed outright leaves it: the product's next service removes it
                made = make(work)
                target.parent.mkdir(parents=True, exist_ok=True)
                part = target.with_name(target.name + ".part")
                shutil.copyfile(made, part)
                os.replace(part, target)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return target
