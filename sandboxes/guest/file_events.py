"""What happened to the user's files, in order: a bounded log of inotify events under the
home folder, kept per path.

Two manifests (manifest.py) show the start and the end; they cannot show a file deleted
and made again identical, a file edited and then restored, or a secret copied out and the
copy deleted. This log can: every create, modify, attribute change, delete and move under
the home folder, from the agent's start, numbered (`seq`), kept per path as its sequence
of operations. A judge reads it with the manifest (the `files` query) and counts only the
operations numbered after the reading it took at the episode's start.

Standard library only (inotify through ctypes on libc; no inotify-tools in the image).

Rules:
- Which paths: those the manifest lists by default (`manifest.listed`): hidden entries
  are neither watched nor logged (applications churn there), but for the home folder's
  `WATCHED_DOTFILES`. Symbolic links are never followed.
- Operations: `create`, `modify`, `attrib`, `delete`, `moved_from` (with `to`, when the
  destination is seen) and `moved_to` (with `from`). A run of the same operation is one
  entry (its `seq` the last). A close after writing is folded into the `modify` it
  closes; a close without a write is no change (LibreOffice opens documents read-write).
- Bounds: at most `max_paths` paths and `max_ops` operations per path. Nothing is dropped
  silently: a path past the bound, a watch the kernel refused (its watch limit) and an
  overflow of the kernel's queue are each a `cut` {seq, reason}, and `truncated` is set.
- Snapshots: the log is part of the sandbox's state. A VM's memory snapshot holds it;
  the desktop kind reads it with its snapshot and puts it back after restoring $HOME
  (`replace`), dropping the events of that copy itself. So reset and restore give the log
  of the moment restored, and its numbering goes on from there.
- Freshness: every read first takes what the kernel has queued (`_drain`), so a reading
  has every change made before it; a thread drains in between, so the kernel's queue does
  not overflow during a long episode.
- Writes in flight: a file written and not yet closed is being written (`writing`). A state
  read waits for those (`wait_quiet`): a judge that reads a document while its application
  is still saving it reads half a file. A file held open after its last write (an editor
  keeping its document open) counts as written once it has been quiet for `quiet_s`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
import threading
import time
from typing import Any

try:
    from .manifest import listed
except ImportError:  # run as a script from this folder (inside a VM image)
    from manifest import listed  # type: ignore[no-redef,import-not-found]

__all__ = ["FileEvents", "OPS"]

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_EXCL_UNLINK = 0x04000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

WATCH_MASK = (IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB
              | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
#: The operations a path's log holds.
OPS = ("create", "modify", "attrib", "delete", "moved_from", "moved_to")
_HEADER = struct.Struct("iIII")
#: Cuts kept: the first ones and the latest (a reading needs only whether one came after it).
MAX_CUTS = 16


class _Inotify:
    """The three libc calls, typed."""

    def __init__(self) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self._init1 = libc.inotify_init1
        self._init1.argtypes = [ctypes.c_int]
        self._init1.restype = ctypes.c_int
        self._add = libc.inotify_add_watch
        self._add.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        self._add.restype = ctypes.c_int
        self._rm = libc.inotify_rm_watch
        self._rm.argtypes = [ctypes.c_int, ctypes.c_int]
        self._rm.restype = ctypes.c_int

    def init(self) -> int:
        fd = int(self._init1(IN_NONBLOCK | IN_CLOEXEC))
        if fd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_init1: {os.strerror(code)}")
        return fd

    def add(self, fd: int, path: str) -> int:
        wd = int(self._add(fd, os.fsencode(path), WATCH_MASK))
        if wd < 0:
            code = ctypes.get_errno()
            raise OSError(code, f"inotify_add_watch {path}: {os.strerror(code)}")
        return wd

    def rm(self, fd: int, wd: int) -> None:
        self._rm(fd, wd)  # a watch the kernel already dropped (its folder gone) is no error


class FileEvents:
    """The log of one home folder. `start()` begins watching; `log()` reads it; `replace()`
    puts back a log read earlier (a restore); `stop()` ends it."""

    def __init__(self, home: str, *, max_paths: int = 20_000, max_ops: int = 32) -> None:
        self.home = os.path.normpath(home)
        self.max_paths = max_paths
        self.max_ops = max_ops
        self._lock = threading.Lock()
        self._fd = -1
        self._inotify: _Inotify | None = None
        #: watch descriptor -> folder relative to home ("" is home itself), and back
        self._folder: dict[int, str] = {}
        self._wd: dict[str, int] = {}
        #: path -> [{"op", "seq", "to"|"from"?}]
        self._paths: dict[str, list[dict[str, Any]]] = {}
        self._seq = 0
        self._cuts: list[dict[str, Any]] = []
        #: why nothing is recorded (inotify missing), or None
        self.unavailable: str | None = None
        self._stop_r, self._stop_w = -1, -1
        self._thread: threading.Thread | None = None
        #: path -> when its latest write was seen (monotonic s), until the writer closes it
        self._open_writes: dict[str, float] = {}
        #: notified whenever events were taken from the kernel
        self._drained = threading.Condition(self._lock)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        try:
            self._inotify = _Inotify()
            self._fd = self._inotify.init()
        except (OSError, AttributeError) as exc:  # AttributeError: a libc without inotify
            self.unavailable = f"no inotify in this guest: {exc}"
            return
        with self._lock:
            self._watch_tree("", record=False)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._run, name="file-events", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            os.write(self._stop_w, b"x")
            self._thread.join(timeout=5)
            self._thread = None
        for fd in (self._fd, self._stop_r, self._stop_w):
            if fd >= 0:
                os.close(fd)
        self._fd = self._stop_r = self._stop_w = -1

    def _run(self) -> None:
        while True:
            ready, _, _ = select.select([self._fd, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            with self._lock:
                self._drain(record=True)
                self._drained.notify_all()

    # ------------------------------------------------------------------ reading and restoring

    def log(self, roots: list[str] | None = None) -> dict[str, Any]:
        """{"seq": the last operation's number, "paths": {path: [{"op", "seq", ...}]},
        "truncated", "cuts": [{"seq", "reason"}]}, or {"unavailable": why}; with `roots`
        (folders relative to home), only the paths under them."""
        if self.unavailable is not None:
            return {"unavailable": self.unavailable}
        with self._lock:
            self._drain(record=True)
            tops = [_rel(r) for r in roots or ["."]]
            paths = {p: [dict(o) for o in ops] for p, ops in self._paths.items()
                     if any(t == "" or p == t or p.startswith(t + "/") for t in tops)}
            return {"seq": self._seq, "paths": paths, "truncated": bool(self._cuts), "cuts": list(self._cuts)}

    def sequence(self) -> int:
        """The number of the latest change to the user's files (0 without inotify): a read
        that spans a change sees it move."""
        if self.unavailable is not None:
            return 0
        with self._lock:
            self._drain(record=True)
            return self._seq

    def writing(self, quiet_s: float) -> list[str]:
        """The paths being written now: written and not closed, the latest write less than
        `quiet_s` ago."""
        with self._lock:
            self._drain(record=True)
            return sorted(self._writing(quiet_s, time.monotonic()))

    def wait_quiet(self, quiet_s: float, limit_s: float) -> list[str]:
        """Wait until no file is being written (see `writing`), at most `limit_s`; the paths
        still being written when the limit came (empty: quiet)."""
        if self.unavailable is not None:
            return []
        deadline = time.monotonic() + limit_s
        with self._lock:
            while True:
                self._drain(record=True)
                now = time.monotonic()
                pending = self._writing(quiet_s, now)
                if not pending or now >= deadline:
                    return sorted(pending)
                # woken by the next events, or when the oldest pending write turns quiet
                expiry = min(self._open_writes[p] for p in pending) + quiet_s
                self._drained.wait(timeout=max(0.001, min(expiry, deadline) - now))

    def _writing(self, quiet_s: float, now: float) -> list[str]:
        return [p for p, seen in self._open_writes.items() if now - seen < quiet_s]

    def replace(self, saved: dict[str, Any] | None) -> None:
        """Make the log `saved` (a `log()` read at a snapshot), or an empty one for None:
        the events queued until now (those of putting $HOME back) are dropped, and the
        watches follow the folders as they now are."""
        if self.unavailable is not None:
            return
        with self._lock:
            self._drain(record=False)
            self._open_writes.clear()
            self._watch_tree("", record=False)  # folders made by the copy that no event named in time
            saved = saved or {}
            paths = saved.get("paths") or {}
            if not isinstance(paths, dict):
                raise ValueError("a file event log's paths must be an object")
            self._paths = {str(p): [dict(o) for o in ops if isinstance(o, dict) and o.get("op") in OPS]
                           for p, ops in paths.items() if isinstance(ops, list)}
            self._seq = int(saved.get("seq") or 0)
            self._cuts = [dict(c) for c in saved.get("cuts") or [] if isinstance(c, dict)][:MAX_CUTS]

    # ------------------------------------------------------------------ recording

    def _record(self, path: str, op: str, **extra: str) -> None:
        if not listed(path):
            return
        ops = self._paths.get(path)
        if ops is None:
            if len(self._paths) >= self.max_paths:
                self._cut(f"more than {self.max_paths} paths changed: {path} and later ones are not logged")
                return
            ops = self._paths[path] = []
        self._seq += 1
        if ops and ops[-1]["op"] == op and not extra and len(ops[-1]) == 2:
            ops[-1]["seq"] = self._seq  # a run of one operation is one entry
            return
        ops.append({"op": op, "seq": self._seq, **extra})
        if len(ops) > self.max_ops:
            # the first operation says how the path's episode began; the latest say how it
            # ended; those between only repeat that the path changed, which is still known
            del ops[1]

    def _cut(self, reason: str) -> None:
        """A loss, numbered as an operation is (so a reading before it and one after it
        tell it apart)."""
        self._seq += 1
        if len(self._cuts) < MAX_CUTS:
            self._cuts.append({"seq": self._seq, "reason": reason})
        elif self._cuts[-1]["seq"] < self._seq:
            self._cuts[-1] = {"seq": self._seq, "reason": reason}  # the latest loss stays known

    def _drain(self, *, record: bool) -> None:
        """Take every event the kernel has queued (the lock held)."""
        moved_from: dict[int, tuple[str, bool]] = {}
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            offset = 0
            while offset + _HEADER.size <= len(data):
                wd, mask, cookie, size = _HEADER.unpack_from(data, offset)
                name = data[offset + _HEADER.size: offset + _HEADER.size + size].rstrip(b"\0")
                offset += _HEADER.size + size
                self._event(wd, mask, cookie, os.fsdecode(name), moved_from, record)
        # a folder moved out of the home folder (no moved_to came): stop watching it
        for path, is_dir in moved_from.values():
            if is_dir:
                self._unwatch(path)

    def _event(self, wd: int, mask: int, cookie: int, name: str, moved_from: dict[int, tuple[str, bool]],
               record: bool) -> None:
        if mask & IN_Q_OVERFLOW:
            if record:
                self._cut("the kernel's event queue overflowed: some file events were lost")
            self._watch_tree("", record=False)  # folders made meanwhile get their watches
            return
        if mask & IN_IGNORED:
            folder = self._folder.pop(wd, None)
            if folder is not None and self._wd.get(folder) == wd:
                del self._wd[folder]
            return
        folder = self._folder.get(wd)
        if folder is None or not name:
            return  # a watch being removed, or the folder itself (its parent reports it by name)
        path = f"{folder}/{name}" if folder else name
        is_dir = bool(mask & IN_ISDIR)
        if mask & IN_CREATE:
            if record:
                self._record(path, "create")
            if is_dir:
                self._watch_tree(path, record=record)
        if mask & IN_MODIFY and not is_dir and listed(path):
            self._open_writes[path] = time.monotonic()
            if record:
                self._record(path, "modify")
        if mask & (IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM):
            self._open_writes.pop(path, None)
        if mask & IN_ATTRIB and record:
            self._record(path, "attrib")
        if mask & IN_DELETE:
            if record:
                self._record(path, "delete")
        if mask & IN_MOVED_FROM:
            moved_from[cookie] = (path, is_dir)
            if record:
                self._record(path, "moved_from")
        if mask & IN_MOVED_TO:
            source = moved_from.pop(cookie, None)
            if source is not None:
                if record:
                    self._name_destination(source[0], path)
                    self._record(path, "moved_to", **{"from": source[0]})
                if is_dir and listed(path):
                    # a folder watched so far keeps its watches; one made and moved before
                    # its watch came (or a hidden one given a plain name) is new here
                    seen = source[0] in self._wd
                    self._rename_watches(source[0], path)
                    self._watch_tree(path, record=record and not seen)
                elif is_dir:
                    self._unwatch(source[0])  # hidden now: as unwatched as any hidden folder
            else:
                if record:
                    self._record(path, "moved_to")
                if is_dir:
                    self._watch_tree(path, record=record)

    def _name_destination(self, source: str, destination: str) -> None:
        ops = self._paths.get(source)
        if ops and ops[-1]["op"] == "moved_from" and "to" not in ops[-1]:
            ops[-1]["to"] = destination

    # ------------------------------------------------------------------ watches

    def _watch_tree(self, top: str, *, record: bool) -> None:
        """Watch `top` and every listed folder under it; with `record`, each entry found is
        a `create` (it came before its folder's watch could report it)."""
        assert self._inotify is not None
        stack = [top]
        while stack:
            folder = stack.pop()
            if folder and not listed(folder):
                continue
            full = os.path.join(self.home, folder) if folder else self.home
            try:
                wd = self._inotify.add(self._fd, full)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                    continue  # gone already: its removal is an event of its parent
                if exc.errno == errno.ENOSPC:
                    self._cut(f"the kernel's inotify watch limit is reached: changes under {folder or '~'} are unseen")
                    continue
                raise
            old = self._folder.get(wd)
            if old is not None and old != folder:
                self._wd.pop(old, None)
            self._folder[wd] = folder
            self._wd[folder] = wd
            try:
                with os.scandir(full) as it:
                    entries = sorted(it, key=lambda e: e.name)
            except (FileNotFoundError, NotADirectoryError):
                continue
            except PermissionError:
                self._cut(f"the folder {folder or '~'} cannot be read: changes under it are unseen")
                continue
            for entry in entries:
                path = f"{folder}/{entry.name}" if folder else entry.name
                if record:
                    self._record(path, "create")
                if entry.is_dir(follow_symlinks=False):
                    stack.append(path)

    def _rename_watches(self, old: str, new: str) -> None:
        """A folder moved within the home folder keeps its watches; they now name `new`."""
        for folder, wd in list(self._wd.items()):
            if folder == old or folder.startswith(old + "/"):
                renamed = new + folder[len(old):]
                del self._wd[folder]
                self._wd[renamed] = wd
                self._folder[wd] = renamed

    def _unwatch(self, top: str) -> None:
        assert self._inotify is not None
        for folder, wd in list(self._wd.items()):
            if folder == top or folder.startswith(top + "/"):
                self._inotify.rm(self._fd, wd)
                del self._wd[folder]
                self._folder.pop(wd, None)


def _rel(root: str) -> str:
    rel = os.path.normpath(root.lstrip("/") if not root.startswith("~") else root[1:].lstrip("/"))
    return "" if rel == "." else rel
