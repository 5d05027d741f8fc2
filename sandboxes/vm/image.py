"""VM image recipes: a manifest plus scripts, built into a qcow2 disk and a kernel/initrd.

A recipe is a folder under `vm-images/` with a `manifest.yaml` (format in
`vm-images/README.md`). Building runs in two cached stages so that editing the guest
agent does not re-run debootstrap:

1. base: debootstrap of the Debian suite with the kernel and packages, then the recipe's
   setup scripts in a chroot. Cached as a root directory keyed by the hash of everything
   that stage reads.
2. image: a copy of the base plus the recipe's files (init, guest agent), written with
   `mkfs.ext4 -d` (no loop mounts) and converted to qcow2; the kernel and initrd are
   extracted for direct kernel boot. Keyed by the base hash plus the files' contents.

Images live in `$CUA_CACHE/vm-images` (default `~/.cache/cua/vm-images`); an unchanged
recipe is never rebuilt.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cua.errors import BadRequest, InternalError

__all__ = [
    "BuiltImage",
    "FileSpec",
    "Recipe",
    "build_image",
    "cache_dir",
    "find_recipe",
    "image_hash",
    "load_recipe",
    "recipes_dir",
]

#: Bumped when the builder changes what it produces for the same recipe.
BUILDER_VERSION = "1"
REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MIRROR = "http://deb.debian.org/debian"
_IGNORED_NAMES = {"__pycache__", ".pytest_cache", ".mypy_cache", ".git"}


class DebianSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    suite: str = Field("bookworm", pattern=r"^[a-z]+$")
    variant: str = Field("minbase", pattern=r"^[a-z]+$")
    components: list[str] = Field(default_factory=lambda: ["main"])
    mirror: str | None = None


class FileSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    src: str
    dest: str = Field(pattern=r"^/")
    mode: str | None = Field(None, pattern=r"^0?[0-7]{3,4}$")
    #: Owner as "uid:gid" (default root).
    owner: str | None = Field(None, pattern=r"^\d+:\d+$")


class Recipe(BaseModel):
    """A parsed `manifest.yaml`, with the folder it came from."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    description: str = ""
    debian: DebianSpec = Field(default_factory=DebianSpec)
    kernel: str = "linux-image-cloud-amd64"
    initrd_modules: list[str] = Field(default_factory=list)
    packages: list[str] = Field(default_factory=list)
    #: Installed with apt-get in the chroot after debootstrap: full dependency resolution
    #: (virtual packages, alternatives), for big apps that debootstrap's resolver cannot place.
    apt_packages: list[str] = Field(default_factory=list)
    setup: list[str] = Field(default_factory=list)
    files: list[FileSpec] = Field(default_factory=list)
    disk_size_mb: int = Field(2048, ge=256, le=65536)
    kernel_cmdline: str = "root=/dev/vda rw console=ttyS0"
    folder: Path = Field(exclude=True)

    def resolve(self, src: str) -> Path:
        path = REPO_ROOT / src[len("@repo/"):] if src.startswith("@repo/") else self.folder / src
        return path.resolve()


class BuiltImage(BaseModel):
    """A built image in the cache: what a VM boots."""

    name: str
    hash: str
    dir: Path
    disk: Path
    kernel: Path
    initrd: Path
    kernel_cmdline: str
    size_bytes: int
    build_s: float = 0.0
    cached: bool = True


def recipes_dir() -> Path:
    return Path(os.environ.get("CUA_VM_RECIPES", REPO_ROOT / "vm-images"))


def cache_dir() -> Path:
    root = os.environ.get("CUA_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "cua"
    return base / "vm-images"


def find_recipe(name_or_path: str | os.PathLike[str] = "desktop") -> Path:
    """A recipe folder from a name under `vm-images/` or a path to a folder/manifest."""
    path = Path(name_or_path)
    if path.name == "manifest.yaml":
        path = path.parent
    if not path.is_dir():
        path = recipes_dir() / str(name_or_path)
    if not (path / "manifest.yaml").is_file():
        known = sorted(p.parent.name for p in recipes_dir().glob("*/manifest.yaml"))
        raise BadRequest(f"no VM image recipe {str(name_or_path)!r}; known: {', '.join(known) or 'none'}",
                         details={"recipe": str(name_or_path)})
    return path.resolve()


def load_recipe(name_or_path: str | os.PathLike[str] = "desktop") -> Recipe:
    folder = find_recipe(name_or_path)
    try:
        data = yaml.safe_load((folder / "manifest.yaml").read_text())
        return Recipe.model_validate({**(data or {}), "folder": folder})
    except (yaml.YAMLError, ValidationError) as exc:
        raise BadRequest(f"invalid VM image recipe {folder / 'manifest.yaml'}: {exc}") from exc


# --- hashing ---

def _walk(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    for child in sorted(path.iterdir()):
        if child.name in _IGNORED_NAMES or child.suffix == ".pyc":
            continue
        if child.is_dir() and not child.is_symlink():
            yield from _walk(child)
        else:
            yield child


def _hash_tree(h: "hashlib._Hash", path: Path) -> None:
    if not path.exists():
        raise BadRequest(f"recipe file {path} does not exist")
    for f in _walk(path):
        h.update(str(f.relative_to(path) if f != path else f.name).encode() + b"\0")
        h.update(f"{f.stat().st_mode & 0o777:o}".encode() + b"\0")
        h.update(hashlib.sha256(f.read_bytes()).digest())


def base_hash(recipe: Recipe) -> str:
    h = hashlib.sha256(f"cua-vm-base:{BUILDER_VERSION}\0".encode())
    spec = recipe.model_dump(include={"debian", "kernel", "initrd_modules", "packages", "apt_packages", "setup"})
    spec["debian"]["mirror"] = None  # the mirror does not change what is installed
    h.update(json.dumps(spec, sort_keys=True).encode())
    for script in recipe.setup:
        _hash_tree(h, recipe.resolve(script))
    return h.hexdigest()[:16]


def image_hash(recipe: Recipe) -> str:
    """The cache key of the whole recipe: manifest, scripts and every copied file."""
    h = hashlib.sha256(f"cua-vm-image:{BUILDER_VERSION}:{base_hash(recipe)}\0".encode())
    h.update(json.dumps(recipe.model_dump(include={"files", "disk_size_mb", "kernel_cmdline"}),
                        sort_keys=True).encode())
    for spec in recipe.files:
        _hash_tree(h, recipe.resolve(spec.src))
    return h.hexdigest()[:16]


# --- building ---

def host_debian_mirror() -> str:
    """The Debian mirror the host's apt uses (so builds work where only it is reachable)."""
    if env := os.environ.get("CUA_DEBIAN_MIRROR"):
        return env
    sources: list[str] = []
    for path in [Path("/etc/apt/sources.list"), *sorted(Path("/etc/apt/sources.list.d").glob("*"))]:
        if path.is_file() and path.suffix in (".list", ".sources", ""):
            sources.append(path.read_text(errors="replace"))
    text = "\n".join(sources)
    uris = re.findall(r"^\s*URIs:\s*(\S+)", text, re.M) + re.findall(r"^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)", text, re.M)
    for uri in uris:
        base = str(uri).rstrip("/")
        if base.endswith("/debian"):
            return base
    return DEFAULT_MIRROR


Log = Callable[[str], None]


def _run(argv: list[str], log: Log, *, env: dict[str, str] | None = None, timeout: float = 3600,
         progress: bool = False) -> None:
    """Run a build step; with `progress`, stream its output as throttled progress lines
    (debootstrap and apt-get print one line per package: minutes of silence otherwise)."""
    log("$ " + " ".join(argv[:8]) + (" ..." if len(argv) > 8 else ""))
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **(env or {})}, errors="replace")
    assert proc.stdout is not None
    lines: list[str] = []
    last_said, count = 0.0, 0
    try:
        for raw in proc.stdout:
            line = raw.rstrip()
            lines.append(line)
            del lines[:-40]
            if not progress or not line:
                continue
            count += 1
            phase = _phase(line)
            now = time.monotonic()
            if now - started > timeout:
                proc.kill()
                raise InternalError(f"{argv[0]} ran past {timeout:.0f} s", details={"argv": argv})
            if phase != "routine" or now - last_said >= 5.0:
                log(f"  [{now - started:5.0f} s, {count} lines] {line[:120]}")
                last_said = now
        returncode = proc.wait(timeout=max(1.0, timeout - (time.monotonic() - started)))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if returncode != 0:
        tail = "\n".join(lines)
        raise InternalError(f"{argv[0]} failed with exit code {returncode}:\n{tail}",
                            details={"argv": argv, "returncode": returncode})
    if progress:
        log(f"  done in {time.monotonic() - started:.0f} s")


#: One line per package (debootstrap's "I: Retrieving NAME VERSION", apt's "Unpacking ...",
#: "Setting up ..."): shown at most every few seconds; any other line at once.
_ROUTINE = re.compile(r"^(I: (Retrieving|Validating|Extracting|Unpacking|Configuring) |Get:\d+ |Unpacking |"
                      r"Setting up |Selecting previously |Preparing to unpack |Processing triggers |"
                      r"\(Reading database)")


def _phase(line: str) -> str:
    return "routine" if _ROUTINE.match(line) else line


def _require_tools() -> None:
    missing = [t for t in ("debootstrap", "mkfs.ext4", "qemu-img", "chroot") if shutil.which(t) is None]
    if missing:
        raise InternalError(f"building VM images needs {', '.join(missing)} (apt-get install debootstrap "
                            "e2fsprogs qemu-utils)")
    if os.geteuid() != 0:
        raise InternalError("building VM images needs root (debootstrap and chroot)")


def _build_base(recipe: Recipe, dest: Path, log: Log) -> None:
    mirror = recipe.debian.mirror or host_debian_mirror()
    work = Path(tempfile.mkdtemp(prefix="base-", dir=dest.parent))
    rootfs = work / "rootfs"
    debs = cache_dir() / "debs"  # downloaded packages, shared by every recipe's builds
    debs.mkdir(parents=True, exist_ok=True)
    env = {"DEBIAN_FRONTEND": "noninteractive", "CUA_INITRD_MODULES": " ".join(recipe.initrd_modules),
           "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
    try:
        include = [recipe.kernel, *recipe.packages]
        _run(["debootstrap", f"--variant={recipe.debian.variant}", f"--cache-dir={debs}",
              f"--components={','.join(recipe.debian.components)}", f"--include={','.join(include)}",
              recipe.debian.suite, str(rootfs), mirror], log, env={"DEBIAN_FRONTEND": "noninteractive"},
             progress=True)
        if recipe.apt_packages:
            _apt_install(recipe, rootfs, mirror, debs, env, log)
        for script in recipe.setup:
            target = rootfs / "tmp" / Path(script).name
            shutil.copy2(recipe.resolve(script), target)
            _run(["mount", "-t", "proc", "proc", str(rootfs / "proc")], log)
            try:
                _run(["chroot", str(rootfs), "/bin/sh", f"/tmp/{target.name}"], log, env=env, progress=True)
            finally:
                subprocess.run(["umount", "-l", str(rootfs / "proc")], check=False)
            target.unlink()
        rootfs.rename(dest)
    finally:
        for sub in ("var/cache/apt/archives", "proc"):
            if (rootfs / sub).is_mount():
                subprocess.run(["umount", "-l", str(rootfs / sub)], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _apt_install(recipe: Recipe, rootfs: Path, mirror: str, debs: Path, env: dict[str, str], log: Log) -> None:
    """apt-get install the recipe's `apt_packages` in the chroot (no Recommends), through
    the same mirror, with the shared package cache mounted as apt's archive folder."""
    components = " ".join(recipe.debian.components)
    (rootfs / "etc/apt/sources.list").write_text(f"deb {mirror} {recipe.debian.suite} {components}\n")
    shutil.copyfile("/etc/resolv.conf", rootfs / "etc/resolv.conf")
    archives = rootfs / "var/cache/apt/archives"
    archives.mkdir(parents=True, exist_ok=True)
    _run(["mount", "--bind", str(debs), str(archives)], log)
    _run(["mount", "-t", "proc", "proc", str(rootfs / "proc")], log)
    try:
        _run(["chroot", str(rootfs), "apt-get", "update"], log, env=env, progress=True)
        _run(["chroot", str(rootfs), "apt-get", "install", "-y", "--no-install-recommends",
              "-o", "Dpkg::Use-Pty=0", *recipe.apt_packages], log, env=env, progress=True)
    finally:
        subprocess.run(["umount", "-l", str(rootfs / "proc")], check=False)
        subprocess.run(["umount", "-l", str(archives)], check=False)
    (rootfs / "etc/resolv.conf").unlink(missing_ok=True)


def _copy_into(src: Path, dest: Path, spec: FileSpec) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*_IGNORED_NAMES, "*.pyc"))
        paths = [dest, *dest.rglob("*")]
    else:
        shutil.copy2(src, dest)
        paths = [dest]
    if spec.mode is not None:
        for p in paths:
            if p.is_file():
                p.chmod(int(spec.mode, 8))
    if spec.owner is not None:
        uid, gid = (int(x) for x in spec.owner.split(":"))
        for p in paths:
            os.lchown(p, uid, gid)


def _newest(boot: Path, prefix: str) -> Path:
    found = sorted(boot.glob(prefix + "*"))
    if not found:
        raise InternalError(f"the image has no {boot / prefix}*; is a kernel in the recipe?")
    return found[-1]


def build_image(recipe: Recipe | str = "desktop", *, force: bool = False, log: Log | None = None) -> BuiltImage:
    """Build (or find in the cache) the image of a recipe."""
    recipe = load_recipe(recipe) if isinstance(recipe, str) else recipe
    say: Log = log or (lambda _msg: None)
    key = image_hash(recipe)
    out = cache_dir() / f"{recipe.name}-{key}"
    meta_path = out / "image.json"
    if meta_path.is_file() and not force:
        return BuiltImage.model_validate({**json.loads(meta_path.read_text()), "cached": True})
    cache_dir().mkdir(parents=True, exist_ok=True)
    # One build of a recipe at a time on this host: two builders racing to publish would
    # delete the image a VM of the first is already booting from.
    with open(cache_dir() / f".{recipe.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if meta_path.is_file() and not force:
            return BuiltImage.model_validate({**json.loads(meta_path.read_text()), "cached": True})
        return _build_locked(recipe, key, out, force, say)


def _build_locked(recipe: Recipe, key: str, out: Path, force: bool, say: Log) -> BuiltImage:
    _require_tools()
    started = time.monotonic()
    cache_dir().mkdir(parents=True, exist_ok=True)
    bases = cache_dir() / "bases"
    bases.mkdir(exist_ok=True)
    base = bases / f"{recipe.name}-{base_hash(recipe)}"
    if force and base.exists():
        shutil.rmtree(base)
    if not base.is_dir():
        say(f"building base {base.name} (debootstrap {recipe.debian.suite}, {len(recipe.packages)} packages)")
        _build_base(recipe, base, say)
    else:
        say(f"reusing base {base.name}")

    work = Path(tempfile.mkdtemp(prefix=f"{recipe.name}-", dir=cache_dir()))
    try:
        stage = work / "rootfs"
        _run(["cp", "-a", "--reflink=auto", str(base), str(stage)], say)
        for spec in recipe.files:
            _copy_into(recipe.resolve(spec.src), stage / spec.dest.lstrip("/"), spec)
        kernel = _newest(stage / "boot", "vmlinuz-")
        initrd = _newest(stage / "boot", "initrd.img-")
        shutil.copyfile(kernel, work / "vmlinuz")
        shutil.copyfile(initrd, work / "initrd.img")
        raw = work / "disk.raw"
        _run(["mkfs.ext4", "-q", "-F", "-L", "cua-root", "-E", "root_owner=0:0", "-d", str(stage), str(raw),
              f"{recipe.disk_size_mb}M"], say)
        shutil.rmtree(stage)
        _run(["qemu-img", "convert", "-f", "raw", "-O", "qcow2", "-o", "cluster_size=65536",
              str(raw), str(work / "disk.qcow2")], say)
        raw.unlink()
        (work / "disk.qcow2").chmod(0o444)
        size = sum(p.stat().st_size for p in work.iterdir() if p.is_file())
        image = BuiltImage(name=recipe.name, hash=key, dir=out, disk=out / "disk.qcow2", kernel=out / "vmlinuz",
                           initrd=out / "initrd.img", kernel_cmdline=recipe.kernel_cmdline, size_bytes=size,
                           build_s=round(time.monotonic() - started, 1), cached=False)
        (work / "image.json").write_text(image.model_dump_json(indent=2, exclude={"cached"}))
        if out.exists():
            shutil.rmtree(out)
        work.rename(out)  # atomic publish: a half-built image is never seen in the cache
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _prune(recipe.name, keep={out, base}, log=say)
    return image


def _prune(name: str, *, keep: set[Path], log: Log, keep_others: int = 1) -> None:
    """Delete older images and bases of a recipe (each is most of a gigabyte), keeping the
    ones just used and the `keep_others` most recent others (a branch switch back is cheap)."""
    for folder in (cache_dir(), cache_dir() / "bases"):
        old = sorted((p for p in folder.glob(f"{name}-*") if p.is_dir() and p not in keep
                      and re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{16}}", p.name)),
                     key=lambda p: p.stat().st_mtime, reverse=True)
        for path in old[keep_others:]:
            log(f"pruning old {path}")
            shutil.rmtree(path, ignore_errors=True)


def image_for(recipe: str = "desktop", *, build: bool = True, log: Log | None = None) -> BuiltImage:
    """The cached image of a recipe, building it first when `build` is true."""
    loaded = load_recipe(recipe)
    meta = cache_dir() / f"{loaded.name}-{image_hash(loaded)}" / "image.json"
    if meta.is_file():
        return BuiltImage.model_validate(json.loads(meta.read_text()))
    if not build:
        raise BadRequest(f"VM image {loaded.name!r} is not built; run `cua vm build {loaded.name}`",
                         details={"recipe": loaded.name})
    return build_image(loaded, log=log)
