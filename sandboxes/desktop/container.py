"""The bubblewrap container a desktop sandbox runs in, and the X display numbers it uses.

bwrap gives the desktop its own pid, network (loopback only), IPC, UTS and cgroup
namespaces and a private /tmp; the host system is visible read-only; $HOME is a
host directory bound at /home/user, so the host can snapshot it by copying. The guest
agent is the container's main process: it starts Xvfb and the window manager, and
listens on a unix socket in `run_dir`, a host directory bound at the same path. When
the agent dies, the pid namespace (and every app in it) goes with it.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cua.errors import Capacity, InfraError
from cua.sandboxes._container import Cgroup, ro_bind_paths
from cua.sandboxes.desktop.config import DesktopConfig

__all__ = ["GUEST_DIR", "GUEST_GID", "GUEST_HOME", "GUEST_UID", "DisplayLease", "DesktopContainer", "own_tree"]

GUEST_DIR = Path(__file__).resolve().parent.parent / "guest"
GUEST_HOME = "/home/user"
#: The unprivileged desktop user the apps run as (the VM image's `user` has the same ids).
#: The container sees its own passwd and group files naming it `user`.
GUEST_UID = GUEST_GID = 1000
_PASSWD = (f"root:x:0:0:root:/root:/bin/sh\nuser:x:{GUEST_UID}:{GUEST_GID}:cua desktop user:{GUEST_HOME}:/bin/bash\n"
           "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")
_GROUP = f"root:x:0:\ntty:x:5:\nuser:x:{GUEST_GID}:\nnogroup:x:65534:\n"


def own_tree(path: Path) -> None:
    """Give a tree under the desktop's $HOME to the desktop user (the host writes it as root)."""
    os.lchown(path, GUEST_UID, GUEST_GID)
    for root, dirs, files in os.walk(path):
        for name in (*dirs, *files):
            try:
                os.lchown(os.path.join(root, name), GUEST_UID, GUEST_GID)
            except FileNotFoundError:
                continue  # removed while we walked (an app's temporary file)
#: What an xfce session runs (sandboxes/guest/session.py), checked on the host before a start.
XFCE_TOOLS = ("xfwm4", "xfce4-panel", "xfdesktop", "xfsettingsd", "dbus-daemon")
_LOCK_DIR = Path(tempfile.gettempdir()) / ".cua-displays"
_FIRST_DISPLAY = 100
_MAX_DISPLAYS = 1000


class DisplayLease:
    """An X display number held (flock) by one sandbox on this host.

    Each container has its own /tmp and network namespace, so their X sockets cannot
    collide; distinct numbers still keep logs, debugging sessions and containers run
    with the host's network apart.
    """

    def __init__(self) -> None:
        _LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
        for n in range(_FIRST_DISPLAY, _FIRST_DISPLAY + _MAX_DISPLAYS):
            if os.path.exists(f"/tmp/.X11-unix/X{n}") or os.path.exists(f"/tmp/.X{n}-lock"):
                continue  # a host X server uses it
            fd = os.open(_LOCK_DIR / f"{n}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.number, self._fd = n, fd
            return
        raise Capacity(f"no free X display number among {_MAX_DISPLAYS}")

    @property
    def name(self) -> str:
        return f":{self.number}"

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


@dataclass
class DesktopContainer:
    """Host-side files of one desktop container: run dir, home, logs, cgroup, argv."""

    run_dir: Path
    home: Path
    socket: Path
    log: Path
    argv: list[str]
    cgroup: Cgroup
    display: DisplayLease

    @classmethod
    def prepare(cls, sandbox_id: str, config: DesktopConfig) -> "DesktopContainer":
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise InfraError("desktop sandboxes need bubblewrap (apt-get install bubblewrap)")
        session_tools = XFCE_TOOLS if config.session == "xfce" else ()
        for tool in ("Xvfb", *(config.wm_argv or [])[:1], *session_tools):
            if shutil.which(tool) is None:
                raise InfraError(f"desktop sandboxes need {tool} on the host")
        run_dir = Path(tempfile.mkdtemp(prefix=f"cua-desktop-{sandbox_id[:20]}-"))
        home = run_dir / "home"
        home.mkdir()
        os.chown(home, GUEST_UID, GUEST_GID)
        # The agent (root in the container) logs and listens in run_dir; snapshots live in
        # its root-only subfolder, out of the apps' reach.
        run_dir.chmod(0o711)
        (run_dir / "snapshots").mkdir(mode=0o700)
        (run_dir / "passwd").write_text(_PASSWD)
        (run_dir / "group").write_text(_GROUP)
        display = DisplayLease()
        cgroup = Cgroup.create(f"cua-desktop-{run_dir.name}", config.memory_mb, config.pids)
        socket = run_dir / "agent.sock"
        python = config.agent_python or sys.executable
        # Every namespace but the user namespace: in one, only our own uid/gid map, and
        # xterm cannot give its pty to the tty group.
        argv = [bwrap, "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                *([] if config.network == "host" else ["--unshare-net"]),
                "--die-with-parent", "--new-session", "--hostname", "cua-desktop"]
        # Fresh /tmp and /home first, the host's read-only paths after them: a checkout or venv
        # under /tmp or /home must stay visible inside the container.
        argv += ["--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp",
                 "--perms", "1777", "--dir", "/var/tmp", "--tmpfs", "/home"]
        bound = ro_bind_paths([str(GUEST_DIR)])
        # bwrap makes the missing parents of a bind 0700, which the desktop user could not
        # pass: make them 0755 first (their contents stay what is bound).
        made = {"/", "/tmp", "/home", "/var/tmp", "/proc", "/dev"}
        for p in bound:
            for parent in reversed(Path(p).parents):
                if str(parent) not in made and not any(str(parent) == b for b in bound):
                    made.add(str(parent))
                    argv += ["--perms", "0755", "--dir", str(parent)]
        for p in bound:
            argv += ["--symlink", os.readlink(p), p] if os.path.islink(p) else ["--ro-bind", p, p]
        argv += ["--ro-bind", str(run_dir / "passwd"), "/etc/passwd", "--ro-bind", str(run_dir / "group"), "/etc/group"]
        argv += ["--bind", str(home), GUEST_HOME,
                 "--bind", str(run_dir), str(run_dir),
                 "--dir", "/tmp/xdg", "--chmod", "0700", "/tmp/xdg",
                 "--setenv", "HOME", GUEST_HOME, "--setenv", "USER", "user", "--setenv", "LOGNAME", "user",
                 "--setenv", "TMPDIR", "/tmp",
                 "--setenv", "XDG_RUNTIME_DIR", "/tmp/xdg", "--setenv", "LANG", "C.UTF-8",
                 # GSettings in a file under $HOME: app settings survive restarts and snapshots.
                 "--setenv", "GSETTINGS_BACKEND", "keyfile",
                 *([] if config.accessibility else ["--setenv", "NO_AT_BRIDGE", "1"]),
                 "--chdir", GUEST_HOME, "--",
                 python, "-E", "-s", str(GUEST_DIR / "agent.py"), "--listen", f"unix:{socket}",
                 "--display", display.name, "--start-x", f"{config.screen.width}x{config.screen.height}",
                 "--home", GUEST_HOME, "--input", config.input, "--app-log", str(run_dir / "apps.log"),
                 "--app-user", f"{GUEST_UID}:{GUEST_GID}"]
        if config.accessibility:
            argv.append("--dbus")
        if config.wm_argv:
            argv += ["--wm", " ".join(config.wm_argv)]
        if config.session != "openbox":
            argv += ["--session", config.session]
        if config.look:
            argv += ["--look", config.look]
        script = "\n".join([*cgroup.join_lines(), "exec " + " ".join(shlex.quote(a) for a in argv)])
        return cls(run_dir=run_dir, home=home, socket=socket, log=run_dir / "container.log",
                   argv=["/bin/sh", "-c", script], cgroup=cgroup, display=display)

    def host_path(self, guest_path: str) -> Path:
        """The host path of a file under the guest's $HOME (relative paths are under $HOME)."""
        p = guest_path
        if p.startswith("~/"):
            p = p[2:]
        if os.path.isabs(p):
            rel = os.path.relpath(os.path.normpath(p), GUEST_HOME)
        else:
            rel = os.path.normpath(p)
        if rel == ".." or rel.startswith("../") or os.path.isabs(rel):
            raise ValueError(f"{guest_path!r} is outside the desktop's home {GUEST_HOME}")
        return self.home / rel

    def log_tail(self, n: int = 2000) -> str:
        out = []
        for path in (self.log, self.run_dir / "apps.log"):
            try:
                out.append(path.read_text(errors="replace")[-n:])
            except OSError:
                continue  # not written yet
        return "\n".join(out)

    def cleanup(self) -> None:
        self.cgroup.remove()
        self.display.release()
        shutil.rmtree(self.run_dir, ignore_errors=True)
