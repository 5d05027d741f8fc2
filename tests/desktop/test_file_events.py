"""The guest's file event log (sandboxes/guest/file_events.py), on a real folder with the
real kernel's inotify: what the end state hides (a file deleted and made again, edited
and restored, a copy made and deleted) is in the log, each path's operations in order,
hidden paths follow the manifest's rule, losses are reported, and `replace` (a restore)
drops the events of putting the folder back.

These run the guest module the desktop container and the VM guest both run, in this
process, without an X display (the VM's copy is the same file; no QEMU here)."""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cua.sandboxes.guest.file_events import FileEvents


@pytest.fixture
def home(tmp_path: Path) -> Path:
    h = tmp_path / "home"
    (h / "docs").mkdir(parents=True)
    (h / "docs" / "a.txt").write_text("alpha\n")
    (h / "b.txt").write_text("bravo\n")
    (h / ".config").mkdir()
    return h


@pytest.fixture
def events(home: Path) -> Iterator[FileEvents]:
    fe = FileEvents(str(home))
    fe.start()
    assert fe.unavailable is None, fe.unavailable
    yield fe
    fe.stop()


def _ops(log: dict[str, Any], path: str) -> list[str]:
    return [o["op"] for o in log["paths"].get(path, [])]


def test_changes_the_end_state_hides_are_logged_in_order(home: Path, events: FileEvents, tmp_path: Path) -> None:
    start = events.log()
    assert start["paths"] == {} and start["truncated"] is False
    shutil.copy2(home / "docs" / "a.txt", tmp_path / "keep")
    (home / "docs" / "a.txt").unlink()
    shutil.copy2(tmp_path / "keep", home / "docs" / "a.txt")  # deleted, made again identical
    (home / "b.txt").write_text("BRAVO\n")
    (home / "b.txt").write_text("bravo\n")  # edited, restored
    shutil.copy(home / "b.txt", home / "leak.txt")
    (home / "leak.txt").unlink()  # a copy made and deleted
    log = events.log()
    assert _ops(log, "docs/a.txt")[:2] == ["delete", "create"]
    assert "modify" in _ops(log, "docs/a.txt")
    assert _ops(log, "b.txt") == ["modify"]  # a run of writes is one entry
    assert _ops(log, "leak.txt")[0] == "create" and _ops(log, "leak.txt")[-1] == "delete"
    seqs = [o["seq"] for ops in log["paths"].values() for o in ops]
    assert len(set(seqs)) == len(seqs) and max(seqs) == log["seq"] > start["seq"]


def test_moves_are_paired_and_new_folders_are_watched(home: Path, events: FileEvents, tmp_path: Path) -> None:
    (home / "new").mkdir()
    events.log()  # the folder's creation is taken: its watch exists from here
    (home / "new" / "deep").mkdir()
    events.log()
    (home / "new" / "deep" / "f.txt").write_text("x")
    os.rename(home / "b.txt", home / "new" / "b.txt")
    os.rename(home / "new", home / "renamed")
    (home / "renamed" / "deep" / "g.txt").write_text("y")  # the moved folder is still watched, by its new name
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "in.txt").write_text("z")
    os.rename(outside, home / "brought")  # a folder moved in: its content is new here
    log = events.log()
    assert log["paths"]["b.txt"][-1] == {"op": "moved_from", "seq": log["paths"]["b.txt"][-1]["seq"],
                                         "to": "new/b.txt"}
    assert log["paths"]["new/b.txt"][-1]["from"] == "b.txt"
    assert _ops(log, "new/deep/f.txt") == ["create", "modify"]
    assert log["paths"]["renamed"][-1]["from"] == "new"
    assert _ops(log, "renamed/deep/g.txt") == ["create", "modify"]
    assert _ops(log, "brought") == ["moved_to"] and _ops(log, "brought/in.txt") == ["create"]
    (home / "brought" / "later.txt").write_text("w")
    assert "brought/later.txt" in events.log()["paths"]


def test_hidden_paths_follow_the_manifests_rule(home: Path, events: FileEvents) -> None:
    (home / ".config" / "app.ini").write_text("x")
    (home / ".cache").mkdir()
    (home / ".cache" / "thumb").write_text("x")
    (home / ".bashrc").write_text("alias ls='rm -rf ~'\n")
    (home / "docs" / ".bashrc").write_text("not a startup file")
    paths = set(events.log()["paths"])
    assert ".bashrc" in paths
    assert not {".config/app.ini", ".cache", ".cache/thumb", "docs/.bashrc"} & paths


def test_roots_select_paths(home: Path, events: FileEvents) -> None:
    (home / "docs" / "a.txt").write_text("changed")
    (home / "b.txt").write_text("changed")
    assert set(events.log(["docs"])["paths"]) == {"docs/a.txt"}
    assert set(events.log(["~/docs"])["paths"]) == {"docs/a.txt"}
    assert set(events.log(["."])["paths"]) == {"docs/a.txt", "b.txt"}


def test_a_bounded_log_says_what_it_lost(home: Path) -> None:
    fe = FileEvents(str(home), max_paths=3, max_ops=4)
    fe.start()
    try:
        for i in range(5):
            (home / f"n{i}.txt").write_text("x")
        for i in range(10):
            (home / "b.txt").write_text(str(i))
            (home / "b.txt").chmod(0o600 if i % 2 else 0o644)
        log = fe.log()
    finally:
        fe.stop()
    assert len(log["paths"]) == 3 and log["truncated"] is True
    assert any("more than 3 paths" in c["reason"] for c in log["cuts"])
    ops = log["paths"]["n0.txt"]
    assert [o["op"] for o in ops] == ["create", "modify"]
    assert all(c["seq"] > ops[-1]["seq"] for c in log["cuts"])  # a cut is numbered as an operation


def test_a_full_kernel_queue_is_a_cut_not_a_silent_loss(home: Path, events: FileEvents) -> None:
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    if limit > 70_000:
        pytest.skip(f"max_queued_events is {limit}: too many files to make here")
    before = events.log()["seq"]
    # the watcher cannot drain while a reading holds the log: the kernel's queue fills
    with events._lock:
        for i in range(limit // 2 + 100):  # a create and a close each
            (home / "docs" / f"f{i}").touch()
    log = events.log()
    assert log["truncated"] and any("overflowed" in c["reason"] and c["seq"] > before for c in log["cuts"])
    (home / "docs" / "after.txt").write_text("x")
    assert "docs/after.txt" in events.log()["paths"]  # watching goes on


def test_replace_puts_back_a_saved_log_without_the_restores_own_events(home: Path, events: FileEvents,
                                                                        tmp_path: Path) -> None:
    (home / "b.txt").write_text("at the snapshot\n")
    saved = events.log()
    shutil.copytree(home, tmp_path / "snap", symlinks=True)
    (home / "docs" / "a.txt").unlink()
    (home / "c.txt").write_text("after the snapshot")
    # a restore: the folder emptied and copied back (as the desktop kind does), then the log
    for entry in list(home.iterdir()):
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    for entry in (tmp_path / "snap").iterdir():
        target = home / entry.name
        shutil.copytree(entry, target) if entry.is_dir() else shutil.copy2(entry, target)
    events.replace(saved)
    assert events.log() == saved
    (home / "docs" / "new.txt").write_text("x")  # the copied folder is watched
    log = events.log()
    assert log["paths"]["docs/new.txt"][0]["seq"] == saved["seq"] + 1
    events.replace(None)
    assert events.log() == {"seq": 0, "paths": {}, "truncated": False, "cuts": []}


def test_a_file_being_written_is_waited_for_until_its_writer_closes_it(home: Path, events: FileEvents) -> None:
    """A state read must not read a document its application is still saving."""
    f = open(home / "docs" / "a.txt", "w")  # noqa: SIM115 -- held open on purpose
    try:
        f.write("half")
        f.flush()
        assert events.writing(quiet_s=60.0) == ["docs/a.txt"]
        finished = threading.Timer(0.3, f.close)
        finished.start()
        start = time.monotonic()
        assert events.wait_quiet(quiet_s=60.0, limit_s=30.0) == []
        assert time.monotonic() - start < 25.0  # the close ended the wait, not the limit
        finished.join()
    finally:
        f.close()
    assert events.writing(quiet_s=60.0) == []


def test_a_file_held_open_after_writing_is_quiet_after_a_pause(home: Path, events: FileEvents) -> None:
    """An editor keeping its document open: once its writes pause for quiet_s, it is saved;
    a hidden file and a deleted one are never waited for."""
    with open(home / "b.txt", "w") as held, open(home / ".hidden", "w") as hidden:
        held.write("x")
        held.flush()
        hidden.write("y")
        hidden.flush()
        assert events.writing(quiet_s=60.0) == ["b.txt"]
        assert events.wait_quiet(quiet_s=0.2, limit_s=30.0) == []
        assert events.wait_quiet(quiet_s=60.0, limit_s=0.1) == ["b.txt"]  # the limit reports it
        os.unlink(home / "b.txt")
        assert events.writing(quiet_s=60.0) == []


def test_the_sequence_moves_with_every_change_a_read_could_overlap(home: Path, events: FileEvents) -> None:
    """A state read compares it before and after: a save that began meanwhile makes it read again."""
    first = events.sequence()
    assert events.sequence() == first  # reading changes nothing
    (home / "b.txt").write_text("changed\n")
    after_write = events.sequence()
    assert after_write > first
    (home / ".hidden").write_text("x")  # an application's own hidden files are no change of the user's
    assert events.sequence() == after_write
