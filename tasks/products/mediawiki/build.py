"""The MediaWiki images: installed once per version into a template database, then seeded
once per seed, both cached under ~/.cache/cua/products/mediawiki/<version>/ (or
$CUA_CACHE_DIR/products/...). Every seeded page, user, revision and log entry is written by
MediaWiki's own code (`seed.php` carrying out `content.plan(seed)`), at image build time,
never at reset: a reset copies a finished image.

Builds take a lock (two processes wanting the same image build it once) and land by an
atomic rename, so a crashed build leaves no half image behind.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import json
import os
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
from cua.tasks.products.base import ProductBuildFailed, ProductConfigError, ProductMissing
from cua.tasks.products.mediawiki import content
from cua.tasks.products.mediawiki.settings import SITE_NAME, local_settings

__all__ = ["DB_NAME", "INSTALL_PATH", "PHP", "cache_root", "l10n_dir", "php_env", "seed_image", "template_image",
           "version"]

INSTALL_PATH = Path(os.environ.get("CUA_MEDIAWIKI_PATH", "/usr/share/mediawiki"))
PHP = os.environ.get("CUA_PHP", "/usr/bin/php")
DB_NAME = "wikidb"
_HERE = Path(__file__).parent
#: The admin account the installer makes (the seeded users come from the plan).
_ADMIN = ("Admin", "Admin-pass-2026")
#: Build steps may take this long (a seed is ~400 edits through MediaWiki).
_BUILD_TIMEOUT_S = 900
#: The localisation cache's one file (English only), as the `array` store names it.
_L10N_FILE = "en.l10n.php"


def version() -> str:
    """The installed MediaWiki's version (from its own Defines.php); ProductMissing when
    there is none."""
    defines = INSTALL_PATH / "includes" / "Defines.php"
    if not defines.is_file() or not Path(PHP).is_file():
        raise ProductMissing(f"MediaWiki is not installed here ({INSTALL_PATH} and {PHP} are needed): run "
                             "scripts/setup.sh, which installs the Debian packages mediawiki and php-cli")
    found = re.search(r"define\(\s*'MW_VERSION',\s*'([^']+)'", defines.read_text(encoding="utf-8"))
    if found is None:
        raise ProductMissing(f"cannot read MediaWiki's version from {defines}")
    return found.group(1)


def cache_root() -> Path:
    """This MediaWiki version's images: the folder the service was given (`serve --images`,
    which a container sandbox binds read-only), else ~/.cache/cua/products/mediawiki/<version>."""
    given = os.environ.get(IMAGES_ENV)
    if given:
        return Path(given)
    base = Path(os.environ.get("CUA_CACHE_DIR") or Path.home() / ".cache" / "cua")
    return base / "products" / "mediawiki" / version()


def l10n_dir() -> Path:
    """This version's English localisation cache, as PHP arrays (MediaWiki's `array` store,
    which OPcache keeps compiled: ~10% less CPU a page than the CDB file it replaces, the
    same messages); built on first use, beside the images (a second or two)."""
    target = cache_root() / "l10n-array"
    if (target / _L10N_FILE).is_file():
        return target
    with _locked("l10n"):
        if (target / _L10N_FILE).is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-mw-l10n-"))
        try:
            out, data = work / "l10n", work / "data"
            out.mkdir()
            data.mkdir()  # no database is read: the messages come from MediaWiki's files
            settings = work / "LocalSettings.php"
            settings.write_text(local_settings(data, out, control_socket=None, manual_recache=False))
            _run([PHP, "maintenance/rebuildLocalisationCache.php", "--lang", "en", "--force"], php_env(settings),
                 "localisation cache")
            if not (out / _L10N_FILE).is_file():
                raise ProductBuildFailed(f"MediaWiki's localisation cache: rebuildLocalisationCache.php wrote no "
                                         f"{_L10N_FILE} in {out}")
            shutil.rmtree(target, ignore_errors=True)
            partial = target.with_name(f"{target.name}.part-{os.getpid()}")
            shutil.copytree(out, partial)
            os.replace(partial, target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def php_env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PHP_CLI_SERVER_WORKERS"}
    env.update(MW_INSTALL_PATH=str(INSTALL_PATH), MW_CONFIG_FILE=str(config))
    return env


@contextmanager
def _locked(name: str) -> Iterator[None]:
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        lock = open(root / f".{name}.lock", "w")  # noqa: SIM115 -- closed below, after the lock
    except OSError as exc:
        raise ProductBuildFailed(f"MediaWiki's image {name} is not built and cannot be built in {root} "
                                 f"({exc.strerror or exc}): a container sandbox sees the image folder read-only, "
                                 "so the host builds each seed's image first (loading the task does)") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _run(argv: list[str], env: dict[str, str], what: str) -> None:
    try:
        done = subprocess.run(argv, env=env, cwd=INSTALL_PATH, capture_output=True, text=True,
                              timeout=_BUILD_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired as exc:
        raise ProductBuildFailed(f"MediaWiki {what} took over {_BUILD_TIMEOUT_S} s") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-1500:]
        raise ProductBuildFailed(f"MediaWiki {what} failed (exit {done.returncode}): {tail}")


def template_image() -> Path:
    """The freshly installed wiki (MediaWiki's own installer, SQLite), with its
    localisation cache; built on first use."""
    target = cache_root() / "template" / f"{DB_NAME}.sqlite"
    if target.is_file():
        return target
    with _locked("template"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix="cua-mw-install-"))
        try:
            data, conf = work / "data", work / "conf"
            data.mkdir()
            conf.mkdir()
            env = php_env(conf / "LocalSettings.php")
            env.pop("MW_CONFIG_FILE")  # the installer writes its own
            _run([PHP, "maintenance/install.php", "--dbtype", "sqlite", "--dbpath", str(data), "--dbname", DB_NAME,
                  "--server", "http://127.0.0.1", "--scriptpath", "", "--lang", "en", "--pass", _ADMIN[1],
                  "--confpath", str(conf), "--skins", "Vector", SITE_NAME, _ADMIN[0]], env, "install")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data / f"{DB_NAME}.sqlite", target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target


def _generator_hash() -> str:
    """Seed images are keyed by the generator's own source, so a change to it rebuilds them."""
    digest = hashlib.sha256()
    for name in ("content.py", "seed.php", "settings.py"):
        digest.update((_HERE / name).read_bytes())
    return digest.hexdigest()[:12]


def _normalise(db: Path) -> None:
    """What the installer stamped with the wall clock (its admin account, the first Main
    Page revision) gets the wiki's fixed start, so a seed's state is the same on every
    machine; the activity log's table is added; the file is compacted."""
    start = content.BASE_TIME.replace(hour=0).strftime("%Y%m%d%H%M%S")
    #: Later than every planned action (a plan spans months), earlier than any build.
    cutoff = (content.BASE_TIME + dt.timedelta(days=330)).strftime("%Y%m%d%H%M%S")
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute("UPDATE user SET user_registration = ? WHERE user_registration > ?", (start, cutoff))
        conn.execute("UPDATE user SET user_touched = ? WHERE user_touched > ?", (start, cutoff))
        conn.execute("UPDATE revision SET rev_timestamp = ? WHERE rev_timestamp > ?", (start, cutoff))
        conn.execute("UPDATE recentchanges SET rc_timestamp = ? WHERE rc_timestamp > ?", (start, cutoff))
        conn.execute("UPDATE logging SET log_timestamp = ? WHERE log_timestamp > ?", (start, cutoff))
        conn.execute("UPDATE page SET page_touched = ? WHERE page_touched > ?", (start, cutoff))
        _plain_installer_text(conn)
        conn.execute("DELETE FROM objectcache")
        conn.execute("DELETE FROM job")
        install_activity_log(conn)
        conn.execute("VACUUM")
    finally:
        conn.close()


def _sha1_base36(text: str) -> str:
    """MediaWiki's content hash: SHA-1 in base 36, 31 digits."""
    n, digits = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16), ""
    while n:
        n, r = divmod(n, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
    return digits.rjust(31, "0")


def _plain_installer_text(conn: sqlite3.Connection) -> None:
    """The installer's placeholder Main Page (the wiki's first revision, replaced by the
    seeded one) says "MediaWiki has been installed." in HTML bold: written here in
    wikitext bold, with its hashes and size, so that no seeded text carries HTML (judge QA
    takes a column whose seed rows carry HTML tags for rich text, and wikitext is not)."""
    row = conn.execute("SELECT old_id, old_text FROM text WHERE old_id = 1").fetchone()
    if row is None or "<strong>" not in str(row[1]):
        return
    text = re.sub(r"</?strong>", "'" * 3, str(row[1]))
    sha1, size = _sha1_base36(text), len(text.encode("utf-8"))
    conn.execute("UPDATE text SET old_text = ? WHERE old_id = 1", (text,))
    conn.execute("UPDATE content SET content_sha1 = ?, content_size = ? WHERE content_address = 'tt:1'", (sha1, size))
    conn.execute("UPDATE revision SET rev_sha1 = ?, rev_len = ? WHERE rev_id = 1", (sha1, size))


def seed_image(seed: int) -> Path:
    """The wiki after the seeded plan for `seed`; built on first use (tens of seconds)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ProductConfigError(f"a seed is a non-negative integer, not {seed!r}")
    target = cache_root() / "seeds" / _generator_hash() / f"seed-{seed}.sqlite"
    l10n_dir()  # an instance of the seed reads it: built with the images (a container sees them read-only)
    if target.is_file():
        return target
    template = template_image()
    with _locked(f"seed-{seed}"):
        if target.is_file():
            return target
        work = Path(tempfile.mkdtemp(prefix=f"cua-mw-seed{seed}-"))
        try:
            data = work / "data"
            data.mkdir()
            shutil.copyfile(template, data / f"{DB_NAME}.sqlite")
            settings = work / "LocalSettings.php"
            settings.write_text(local_settings(data, l10n_dir(), control_socket=None))
            plan_file = work / "plan.json"
            plan_file.write_text(json.dumps(content.plan(seed).to_json()))
            env = php_env(settings)
            _run([PHP, str(_HERE / "seed.php"), "--plan", str(plan_file), "--password", content.PASSWORD], env,
                 f"seeding (seed {seed})")
            _normalise(data / f"{DB_NAME}.sqlite")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(data / f"{DB_NAME}.sqlite", target.with_suffix(".part"))
            os.replace(target.with_suffix(".part"), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return target
