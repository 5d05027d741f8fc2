"""VM image recipes and helpers that need no VM: parsing, cache keys, the build CLI's
cache path, sparse copies, the accelerator override."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cua.cli import main as cua_main
from cua.errors import BadRequest
from cua.sandboxes.vm import VMConfig
from cua.sandboxes.vm.image import base_hash, image_hash, load_recipe
from cua.sandboxes.vm.qemu import LaunchSpec, QemuProcess, copy_sparse, probe_accel

pytestmark = pytest.mark.slow  # starts Chromium, Xvfb, QEMU, a server or Ray

REPO = Path(__file__).resolve().parents[2]


def _recipe(tmp: Path, *, setup: str = "echo hi\n", extra: str = "") -> Path:
    folder = tmp / "tiny"
    folder.mkdir(exist_ok=True)
    (folder / "setup.sh").write_text(setup)
    (folder / "init.sh").write_text("#!/bin/sh\n")
    (folder / "manifest.yaml").write_text(
        "name: tiny\npackages: [xterm]\nsetup: [setup.sh]\n"
        "files:\n  - {src: init.sh, dest: /opt/cua/init, mode: '0755'}\n" + extra)
    return folder


def test_default_recipe_parses_and_names_the_guest_agent() -> None:
    recipe = load_recipe("desktop")
    assert recipe.name == "desktop" and recipe.debian.suite == "bookworm"
    assert {"xvfb", "openbox", "xterm", "mousepad", "pcmanfm", "python3-xlib", "xdotool", "xclip"} <= set(recipe.packages)
    sources = {recipe.resolve(f.src) for f in recipe.files}
    assert (REPO / "sandboxes" / "guest").resolve() in sources
    assert recipe.initrd_modules[:2] == ["virtio_ring", "virtio"]


def test_hash_follows_every_input(tmp_path: Path) -> None:
    folder = _recipe(tmp_path)
    first = load_recipe(folder)
    key, base = image_hash(first), base_hash(first)
    assert image_hash(load_recipe(folder)) == key, "hash is not stable"
    (folder / "init.sh").write_text("#!/bin/sh\necho changed\n")
    changed_file = load_recipe(folder)
    assert image_hash(changed_file) != key and base_hash(changed_file) == base, \
        "a copied file must change the image hash but not the base (no debootstrap rerun)"
    (folder / "setup.sh").write_text("echo other\n")
    assert base_hash(load_recipe(folder)) != base, "a setup script must change the base hash"
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "x.pyc").write_bytes(b"junk")
    assert image_hash(load_recipe(folder)) == image_hash(load_recipe(folder))


def test_bad_recipes_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(BadRequest, match="no VM image recipe"):
        load_recipe("no-such-recipe")
    folder = _recipe(tmp_path, extra="disk_size_mb: 1\n")
    with pytest.raises(BadRequest, match="invalid VM image recipe"):
        load_recipe(folder)
    (folder / "manifest.yaml").write_text("name: tiny\nfiles:\n  - {src: missing.sh, dest: /x}\n")
    with pytest.raises(BadRequest, match="does not exist"):
        image_hash(load_recipe(folder))


def test_build_cli_reuses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CUA_CACHE", str(tmp_path / "cache"))
    folder = _recipe(tmp_path)
    recipe = load_recipe(folder)
    out = tmp_path / "cache" / "vm-images" / f"tiny-{image_hash(recipe)}"
    out.mkdir(parents=True)
    (out / "image.json").write_text(json.dumps({
        "name": "tiny", "hash": image_hash(recipe), "dir": str(out), "disk": str(out / "disk.qcow2"),
        "kernel": str(out / "vmlinuz"), "initrd": str(out / "initrd.img"), "kernel_cmdline": "x",
        "size_bytes": 123 * 2**20}))
    assert cua_main(["vm", "build", str(folder), "-q"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"cached tiny {image_hash(recipe)}") and "123 MiB" in line
    assert cua_main(["vm", "build", "no-such-recipe"]) == 2


def test_copy_sparse_keeps_data_and_holes(tmp_path: Path) -> None:
    src = tmp_path / "ram"
    with open(src, "wb") as f:
        f.truncate(64 * 2**20)
        for offset in (0, 5 * 2**20 + 123, 63 * 2**20):
            f.seek(offset)
            f.write(os.urandom(70_000))
    dst = tmp_path / "copy"
    copied = copy_sparse(src, dst)
    assert dst.read_bytes() == src.read_bytes()
    assert copied < 8 * 2**20, "holes were copied as data"
    assert dst.stat().st_blocks * 512 < 8 * 2**20


def test_accel_override_and_launch_arguments(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CUA_VM_ACCEL", "tcg")
    assert probe_accel(tmp_path / "vmlinuz") == "tcg"
    if shutil.which("qemu-system-x86_64") is None:
        return
    spec = LaunchSpec(kernel=tmp_path / "k", initrd=tmp_path / "i", cmdline="root=/dev/vda", overlay=tmp_path / "o",
                      ram_file=tmp_path / "ram", workdir=tmp_path, memory_mb=256, incoming=True)
    argv = QemuProcess.argv(spec, qmp_fd=7, agent_fd=8)
    joined = " ".join(argv)
    assert f"mem-path={tmp_path / 'ram'},share=on" in joined and "memory-backend=mem" in joined
    assert argv[-3:] == ["-S", "-incoming", "defer"]
    assert "-nic none" in joined, "the VM must have no network unless asked"


def test_config_validates() -> None:
    assert VMConfig().memory_mb == 512 and VMConfig().accel == "auto"
    with pytest.raises(ValueError):
        VMConfig(memory_mb=64)
    with pytest.raises(ValueError):
        VMConfig(accel="hvf")


def test_old_images_are_pruned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cua.sandboxes.vm.image import _prune

    monkeypatch.setenv("CUA_CACHE", str(tmp_path))
    root = tmp_path / "vm-images"
    dirs = []
    for i in range(4):
        d = root / f"desktop-{i:016x}"
        d.mkdir(parents=True)
        os.utime(d, (1000 + i, 1000 + i))
        dirs.append(d)
    other = root / "other-0000000000000000"
    other.mkdir()
    _prune("desktop", keep={dirs[0]}, log=lambda _m: None)
    assert sorted(p.name for p in root.iterdir()) == sorted([dirs[0].name, dirs[3].name, other.name])


def test_the_desktop_suite_validates_as_vm_configs() -> None:
    """One suite on both kinds: every desktop template runs on the vm kind unchanged, but one
    that chooses a desktop session or look (the container's XFCE, GTK themes), which the VM's
    guest image does not hold: that one is refused when it is asked for, naming the field."""
    from cua.sandbox import validate_config
    from cua.tasks.kinds import with_kind
    from cua.tasks.loader import TaskFormatError
    from cua.tasks.registry import select_templates

    templates = select_templates(["desktop"])
    assert len(templates) >= 30
    refused = []
    for template in templates:
        config = template.spec.sandbox.config
        if "session" in config or "look" in config:
            with pytest.raises(TaskFormatError) as info:
                with_kind(template, "vm")
            assert {p.field.rsplit(".", 1)[-1] for p in info.value.problems} == {"session", "look"} & set(config)
            refused.append(template.id)
            continue
        instance = with_kind(template, "vm").instantiate(0)
        assert instance.sandbox_kind == "vm"
        validate_config("vm", instance.sandbox_config)
    assert len(refused) == 3 and len(templates) - len(refused) >= 27


def test_fields_a_kind_lacks_are_refused_when_the_file_loads() -> None:
    from cua.tasks.kinds import with_kind
    from cua.tasks.loader import TaskFormatError, load_text

    text = """
suite: t
templates:
  - id: t.a@1
    instruction: x
    sandbox: {kind: vm, config: {apps: [xterm], network: none}}
    judge: {checks: [{check: c, get: {kind: file, file: a}, expect: {op: equals, value: x}}]}
    oracle: [{done: {}}]
"""
    with pytest.raises(TaskFormatError) as info:
        load_text(text, "f.yaml")
    assert info.value.field == "templates[0] (t.a@1).sandbox.config.network"
    assert "vm kind has no config field 'network'" in info.value.reason
    [desktop] = load_text(text.replace("kind: vm", "kind: desktop"), "f.yaml")
    with pytest.raises(TaskFormatError, match="sandbox.config.network"):
        with_kind(desktop, "vm")


def test_chromium_in_a_vm_runs_without_the_jit_and_its_network_service_in_process() -> None:
    from cua.sandboxes.desktop import DesktopConfig

    def js_flags(argv: list[str]) -> list[str]:
        return [a for a in argv if a.startswith("--js-flags")]

    vm = VMConfig(apps=["xterm", "chromium", {"name": "chromium", "args": ["file:///x"]}, ["chromium", "http://a"]])
    assert vm.apps[0].argv == ["xterm", *vm.apps[0].argv[1:]] and not js_flags(vm.apps[0].argv)
    # the preset's own --js-flags keeps its heap bound and gains --jitless; a bare argv gets one
    assert [js_flags(a.argv) for a in vm.apps[1:]] == [["--js-flags=--max-old-space-size=128 --jitless"]] * 2 \
        + [["--js-flags=--jitless"]]
    assert vm.apps[2].argv[-1] == "file:///x" and vm.apps[3].argv[-1] == "http://a"
    assert all(a.argv[1] == "--enable-features=NetworkServiceInProcess,NetworkServiceInProcess2" for a in vm.apps[1:])
    assert VMConfig.model_validate(vm.model_dump()).apps == vm.apps  # idempotent on a round trip
    desktop = DesktopConfig(apps=["chromium"]).apps[0].argv
    assert js_flags(desktop) == ["--js-flags=--max-old-space-size=128"] and "NetworkServiceInProcess" not in str(desktop)
