"""`ProductApp`: a real product as the kit's `WebApp`.

The kit knows an app by its `WebApp`: the task loader checks its name, the params read
rows from it at a seed, judge QA keeps an in-process copy of it to judge probe end states
(its `schema`, `state()`, `db`). A product's data is written by the product itself, at
image build time (its installer and its own maintenance code), so a `ProductApp` has no
`seed()` of its own: `reset(seed)` puts the finished seed image back, from files cached
per product version.

Two places hold one:
- in process (the loader, judge QA): the database in memory, without the product's
  private tables (`private_tables`: full-text indexes and caches, which no judge reads and
  which cannot be rebuilt row by row);
- in the live service (`cua.tasks.products.service`): the database is the product's own
  file (`FileDB`), which the product's server reads and writes; a reset or restore copies
  an image into it with SQLite's backup API, under the product's own locking.
"""

from __future__ import annotations

import abc
import random
import sqlite3
from collections import OrderedDict
from pathlib import Path
from typing import ClassVar, Protocol

from starlette.routing import BaseRoute

from cua.tasks.apps.activity import install as install_activity_log
from cua.tasks.apps.base import AppDB, WebApp
from cua.tasks.products.errors import ProductBuildFailed, ProductConfigError, ProductMissing, ProductStartFailed
from cua.tasks.products.filedb import FileDB, open_memory, same_text
from cua.tasks.products.service import run as run_service

__all__ = ["FileDB", "ProductApp", "ProductBuild", "ProductBuildFailed", "ProductConfigError", "ProductMissing",
           "ProductStartFailed"]


#: Seed images kept in memory per app object (each a few MB).
MAX_IMAGES = 6


class ProductBuild(Protocol):
    """What a product's build module gives (`cua.tasks.products.<name>.build`): where its
    images are on this machine, and its images, each built there on first use."""

    def cache_root(self) -> Path:
        """The folder of the installed version's images; ProductMissing when not installed."""
        ...

    def template_image(self) -> Path:
        """The freshly installed product's database file."""
        ...

    def seed_image(self, seed: int) -> Path:
        """Seed `seed`'s database file."""
        ...


class ProductApp(WebApp):
    """A real product (see the module's docstring). A subclass names its `schema` (the
    product's own, less its private tables: a file in the repository, so that loading a
    suite needs no installed product), its build module (`builder`: its images), its
    private tables, its `state()`, and how its server runs (`server_argv`,
    `prepare_instance`)."""

    #: Served by its own process: never inside the bundled apps' shared host.
    shared_host: ClassVar[bool] = False
    #: Tables the in-process copy leaves out (full-text indexes, caches): no judge reads them.
    private_tables: ClassVar[tuple[str, ...]] = ()

    def __init__(self) -> None:
        self._images: OrderedDict[tuple[int, bool], bytes] = OrderedDict()
        super().__init__()

    # --- what a product defines ---

    #: The product's build module, which makes and keeps its images.
    builder: ProductBuild

    def template_file(self) -> Path:
        """The freshly installed product's database file (built on first use)."""
        return self.builder.template_image()

    def seed_file(self, seed: int) -> Path:
        """The seeded database file for `seed` (built on first use)."""
        return self.builder.seed_image(seed)

    @abc.abstractmethod
    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        """Write one live instance's configuration into `data_dir`; return its database file."""

    @abc.abstractmethod
    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        """The product's server command line and environment, for an instance in `data_dir`."""

    def sync(self) -> bool:
        """Bring the database up to state kept outside it before the service reads it (a
        mail store's files: `cua.tasks.products.roundcube`); most products keep all in it.
        True when it wrote (the service's own writes do not move SQLite's data_version)."""
        return False

    # --- the WebApp side ---

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        raise NotImplementedError("a product's seeds are images its own code built (seed_file)")

    def routes(self) -> list[BaseRoute]:
        return []  # the product serves its own pages

    def image(self, seed: int, *, private: bool) -> bytes:
        """Seed `seed`'s database as bytes: the product's own file (`private`: for the live
        instance), or its rows in the app's `schema` without the private tables (the
        in-process copy, whose tables judge QA reads and rebuilds row by row)."""
        key = (seed, private)
        cached = self._images.get(key)
        if cached is not None:
            self._images.move_to_end(key)
            return cached
        path = self.seed_file(seed)
        conn = open_memory()
        try:
            if private:
                conn.deserialize(path.read_bytes())
            else:
                conn.executescript(self.schema)
                conn.execute("ATTACH DATABASE ? AS src", (str(path),))
                tables = [r[0] for r in conn.execute(
                    "SELECT name FROM main.sqlite_master WHERE type = 'table' AND name != 'sqlite_sequence'")]
                conn.execute("BEGIN")
                for table in tables:
                    conn.execute(f'INSERT INTO main."{table}" SELECT * FROM src."{table}"')
                if conn.execute("SELECT count(*) FROM main.sqlite_master WHERE name = 'sqlite_sequence'").fetchone()[0] \
                        and conn.execute("SELECT count(*) FROM src.sqlite_master WHERE name = 'sqlite_sequence'").fetchone()[0]:
                    # a schema with no AUTOINCREMENT column (Trac's) has no sequence table
                    conn.execute("INSERT INTO main.sqlite_sequence SELECT * FROM src.sqlite_sequence "
                                 "WHERE name IN (SELECT name FROM main.sqlite_master)")
                conn.execute("COMMIT")
                conn.execute("DETACH DATABASE src")
            install_activity_log(conn)
            data = conn.serialize()
        finally:
            conn.close()
        self._images[key] = data
        while len(self._images) > MAX_IMAGES:
            self._images.popitem(last=False)
        return data

    def private_ddl(self) -> dict[str, list[str]]:
        """The CREATE statements of the private tables, as the installed product made them."""
        conn = open_memory()
        try:
            conn.deserialize(self.template_file().read_bytes())
            out: dict[str, list[str]] = {}
            for table in self.private_tables:
                rows = conn.execute("SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL "
                                    "ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END, rowid", (table,))
                statements = [str(r[0]) for r in rows]
                if statements:
                    out[table] = statements
            return out
        finally:
            conn.close()

    @classmethod
    def schema_db(cls) -> sqlite3.Connection:
        """An empty database of the app's schema (what a judge's SQL reads is learned on it)."""
        conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        conn.create_function("same_text", 2, same_text, deterministic=True)
        conn.executescript(cls.schema)
        install_activity_log(conn)
        return conn

    @classmethod
    def images_folder(cls) -> Path | None:
        """The folder of the product's prebuilt images on this machine (None: not installed)."""
        try:
            return cls.builder.cache_root()
        except ProductMissing:
            return None

    @classmethod
    def service_options(cls) -> list[str]:
        folder = cls.images_folder()
        return ["--images", str(folder)] if folder is not None else []

    def serve_own(self, port: int, socket_path: str, seed: int) -> int:
        return run_service(self, port, socket_path, seed)

    def reset(self, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ProductConfigError(f"a seed is a non-negative integer, not {seed!r}")
        self.db.restore(self.image(seed, private=isinstance(self.db, FileDB)), trusted=True)
        self.activity.forget()
        self.current_seed = seed
