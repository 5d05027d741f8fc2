"""The Roundcube images: Roundcube's own SQLite schema (its installer's
`SQL/sqlite.initial.sql`) as the template, then per seed a database seeded by Roundcube's own
code (`seed.php`: users, identities, address books) beside a Maildir tree of the seed's
mail (`content.plan(seed)`), whose mirror tables are filled from the tree. Both are cached
under ~/.cache/cua/products/roundcube/<version>/ (or $CUA_CACHE_DIR/products/...), built
once, under a lock, landing by an atomic rename.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pwd
import re
import shutil
import sqlite3
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cua.tasks.apps.activity import install as install_activity_log
from cua.tasks.apps.base import IMAGES_ENV
from cua.tasks.products.errors import ProductBuildFailed, ProductConfigError, ProductMissing
from cua.tasks.products.roundcube import content, maildir
from cua.tasks.products.roundcube.config import Instance, roundcube_conf

__all__ = ["DOVECOT", "INSTALL_PATH", "PHP", "cache_root", "product_user", "seed_dir", "seed_image",
           "template_image", "version"]

INSTALL_PATH = Path(os.environ.get("CUA_ROUNDCUBE_PATH", "/usr/share/roundcube"))
DOCROOT = Path(os.environ.get("CUA_ROUNDCUBE_DOCROOT", "/var/lib/roundcube/public_html"))
PHP = os.environ.get("CUA_PHP", "/usr/bin/php")
DOVECOT = os.environ.get("CUA_DOVECOT", "/usr/sbin/dovecot")
#: The IMAP host Roundcube records its users under (the port is each instance's own).
IMAP_HOST = "127.0.0.1"
_HERE = Path(__file__).parent
_BUILD_TIMEOUT_S = 300


def version() -> str:
    """The installed Roundcube's version; ProductMissing when Roundcube, PHP or Dovecot is missing."""
    iniset = INSTALL_PATH / "program" / "include" / "iniset.php"
    missing = [str(p) for p in (iniset, Path(PHP), Path(DOVECOT), DOCROOT) if not p.exists()]
    if missing:
        raise ProductMissing(f"Roundcube is not installed here ({', '.join(missing)} missing): run scripts/setup.sh, "
                             "which installs the Debian packages roundcube-core, roundcube-sqlite3 and dovecot-imapd")
    found = re.search(r"define\('RCMAIL_VERSION',\s*'([^']+)'\)", iniset.read_text(encoding="utf-8"))
    if found is None:
        raise ProductMissing(f"cannot read Roundcube's version from {iniset}")
    return found.group(1)


def product_user() -> str:
    """The user an instance's processes run as: this one, or `nobody` for root (Dovecot's
    mail processes refuse uid 0)."""
    return "nobody" if os.geteuid() == 0 else pwd.getpwuid(os.geteuid()).pw_name


def cache_root() -> Path:
    given = os.environ.get(IMAGES_ENV)
    if given:
        return Path(given)
    base = Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua")
    return base / "products" / "roundcube" / version()


@contextmanager
def _locked(name: str) -> Iterator[None]:
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / f".{name}.lock", "w")  # noqa: SIM115 -- closed below, after the lock
    except OSError as exc:
        raise ProductBuildFailed(f"Roundcube's image {name} is not built and cannot be built in {root} "
                                 f"({exc.strerror or exc}): the host builds each seed's image first") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def template_image() -> Path:
    """Roundcube's empty database, made by its installer's SQL, with the mail mirror tables."""
    target = cache_root() / "template" / "roundcube.sqlite"
    if target.is_file():
        return target
    with _locked("template"):
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(".part")
        part.unlink(missing_ok=True)
        conn = sqlite3.connect(part, isolation_level=None)
        try:
            conn.executescript((INSTALL_PATH / "SQL" / "sqlite.initial.sql").read_text(encoding="utf-8"))
            conn.executescript(maildir.MIRROR_DDL)
        except sqlite3.Error as exc:
            raise ProductBuildFailed(f"Roundcube's schema did not install: {exc}") from exc
        finally:
            conn.close()
        os.replace(part, target)
    return target


@functools.cache
def _generator_hash() -> str:
    """Read once per process: a running instance keeps using the images it started with."""
    digest = hashlib.sha256()
    for name in ("content.py", "seed.php", "maildir.py"):
        digest.update((_HERE / name).read_bytes())
    return digest.hexdigest()[:12]


def seed_dir(seed: int) -> Path:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ProductConfigError(f"a seed is a non-negative integer, not {seed!r}")
    return cache_root() / f"seed-{seed}-{_generator_hash()}"


def seed_image(seed: int) -> Path:
    """Seed `seed`'s database file; its Maildir tree is `seed_dir(seed) / "mail"`."""
    folder = seed_dir(seed)
    target = folder / "roundcube.sqlite"
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-roundcube-build-", dir=cache_root()))
        try:
            _build(seed, template, work)
            os.chmod(work, 0o755)
            shutil.rmtree(folder, ignore_errors=True)
            os.rename(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _build(seed: int, template: Path, work: Path) -> None:
    users = content.plan(seed)
    db_file = work / "roundcube.sqlite"
    shutil.copyfile(template, db_file)
    conf = work / "config"
    conf.mkdir()
    inst = Instance(work, 0, 0, product_user(), None)
    (conf / "config.inc.php").write_text(roundcube_conf(inst))
    (conf / "defaults.inc.php").symlink_to("/etc/roundcube/defaults.inc.php")
    plan = {"host": IMAP_HOST, "users": [
        {"email": u.email, "name": u.name, "role": u.role, "identities": u.identities, "contacts": u.contacts,
         "groups": u.groups, "prefs": {"timezone": "UTC", "date_format": "Y-m-d", "mail_pagesize": 50}}
        for u in users]}
    env = dict(os.environ, ROUNDCUBE_CONFIG_DIR=str(conf))
    try:
        done = subprocess.run([PHP, str(_HERE / "seed.php")], input=json.dumps(plan), env=env, cwd=INSTALL_PATH,
                              capture_output=True, text=True, timeout=_BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"Roundcube's seeding took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        raise ProductBuildFailed(f"Roundcube's seeding failed (exit {done.returncode}): "
                                 f"{(done.stdout + done.stderr).strip()[-1500:]}")
    shutil.rmtree(conf)
    shutil.rmtree(work / "logs", ignore_errors=True)
    shutil.rmtree(work / "temp", ignore_errors=True)
    mail = work / "mail"
    for user in users:
        for folder in user.folders:
            maildir.folder_dir(mail, user.email, folder).mkdir(parents=True, exist_ok=True)
            for sub in ("cur", "new", "tmp"):
                (maildir.folder_dir(mail, user.email, folder) / sub).mkdir(exist_ok=True)
        (mail / user.email / "subscriptions").write_text("\n".join(f for f in user.folders if f != "INBOX") + "\n")
        for m in user.messages:
            (maildir.folder_dir(mail, user.email, m.folder) / "cur" / f"{m.key}:2,{m.flags}").write_bytes(m.raw)
    # the database's fixed stamps (Roundcube wrote the wall clock), its mirror of the tree, the activity log
    conn = sqlite3.connect(db_file, isolation_level=None)
    try:
        for table, cols in (("users", ("created", "last_login")), ("contacts", ("changed",)),
                            ("contactgroups", ("changed",)), ("identities", ("changed",))):
            for col in cols:
                conn.execute(f"UPDATE {table} SET {col} = '2026-03-01 08:00:00'")
        conn.execute("UPDATE users SET last_login = NULL, failed_login = NULL, failed_login_counter = NULL")
        maildir.sync(conn, mail)
        install_activity_log(conn)
        conn.execute("PRAGMA journal_mode = DELETE")  # Roundcube turns WAL on; an image is one file
        conn.execute("VACUUM")
    finally:
        conn.close()
    if os.geteuid() == 0:
        pw = pwd.getpwnam(product_user())
        for dirpath, _, filenames in os.walk(mail):
            os.chown(dirpath, pw.pw_uid, pw.pw_gid)
            for name in filenames:
                os.chown(os.path.join(dirpath, name), pw.pw_uid, pw.pw_gid)
    for path in (db_file, mail):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
