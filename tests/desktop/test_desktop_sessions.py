"""The desktop kind's sessions (openbox, xfce) and looks (GTK and icon themes), on real
Xvfb containers; and the run-wide override (`--desktop-session`) that judge QA keys apart."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from PIL import Image, ImageChops

from cua.actions import Type
from cua.desktop_override import DesktopOverride, with_desktop
from cua.errors import BadRequest
from cua.qa.qa_cache import Digests
from cua.sandbox import create_sandbox
from cua.sandboxes.desktop import DesktopSandbox
from cua.state import CommandQuery, FileQuery, WindowsQuery
from cua.tasks.selection import selected_templates

_NEEDS = ("bwrap", "Xvfb", "openbox", "xterm", "mousepad", "xprop", "xfwm4", "xfce4-panel", "xfdesktop",
          "xfsettingsd", "dbus-daemon")
_MISSING = [t for t in _NEEDS if shutil.which(t) is None]
needs_x = pytest.mark.skipif(bool(_MISSING), reason=f"needs {', '.join(_MISSING)}")
_XFCE_PROGRAMS = {"xfwm4", "xfce4-panel", "xfdesktop", "xfsettingsd", "xfconfd"}

#: Reads, inside the container, the window manager's name and the types and classes of
#: every managed window (the panel is a DOCK window).
_PROBE = r"""
check=$(xprop -root _NET_SUPPORTING_WM_CHECK | sed 's/.*# //')
xprop -id "$check" _NET_WM_NAME
for w in $(xprop -root _NET_CLIENT_LIST | sed 's/.*# //; s/,//g'); do
  echo "window $w $(xprop -id "$w" _NET_WM_WINDOW_TYPE WM_CLASS | tr '\n' ' ')"
done
"""


async def _create(config: dict[str, Any], sandbox_id: str) -> DesktopSandbox:
    sb = await create_sandbox("desktop", config, sandbox_id=sandbox_id)
    assert isinstance(sb, DesktopSandbox)
    return sb


async def _frame(sb: DesktopSandbox) -> Image.Image:
    obs = await sb.observe()
    assert obs.screenshot is not None
    return Image.open(io.BytesIO(obs.screenshot.data)).convert("RGB")


def _differing_share(a: Image.Image, b: Image.Image) -> float:
    """The share of pixels whose channels differ by more than 48 (JPEG noise stays under)."""
    diff = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v > 48 else 0)
    return diff.histogram()[255] / (a.width * a.height)


def _host_pids(programs: set[str]) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() in programs:
                    out.add(int(entry.name))
            except OSError:
                continue  # exited while we looked
    return out


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def xfce() -> AsyncIterator[DesktopSandbox]:
    sb = await _create({"session": "xfce", "apps": ["xterm"]}, "test-xfce")
    yield sb
    await sb.close()


pytestmark = [pytest.mark.asyncio(loop_scope="module")]


async def test_a_bad_session_or_a_contradicting_window_manager_is_a_typed_error() -> None:
    with pytest.raises(BadRequest, match="session"):
        await create_sandbox("desktop", {"session": "gnome"}, sandbox_id="bad-session")
    with pytest.raises(BadRequest, match="window_manager") as caught:
        await create_sandbox("desktop", {"session": "xfce", "window_manager": ["openbox"]}, sandbox_id="bad-wm")
    assert caught.value.details["field"] == "session"
    with pytest.raises(BadRequest, match="look"):
        await create_sandbox("desktop", {"look": "neon"}, sandbox_id="bad-look")


@pytest.mark.slow
@needs_x
async def test_xfce_runs_xfwm4_with_its_panel_which_is_no_app(xfce: DesktopSandbox) -> None:
    [probe] = await xfce.query([CommandQuery(argv=["sh", "-c", _PROBE])])
    out = probe.value["stdout"]
    assert '_NET_WM_NAME(UTF8_STRING) = "Xfwm4"' in out, out
    panel = [line for line in out.splitlines() if "_NET_WM_WINDOW_TYPE_DOCK" in line]
    assert panel and "xfce4-panel" in panel[0], out
    assert any("_NET_WM_WINDOW_TYPE_DESKTOP" in line for line in out.splitlines()), out
    # the window listing (what agents, oracles and snapshots see) holds the apps only
    [listing] = await xfce.query([WindowsQuery()])
    classes = [w["class"].lower() for w in listing.value["windows"]]
    assert classes == ["xterm"], listing.value


@pytest.mark.slow
@needs_x
async def test_snapshot_and_restore_keep_working_in_xfce(xfce: DesktopSandbox) -> None:
    ref = await xfce.snapshot()
    await xfce.act(Type(text="echo changed > changed.txt\n"))
    [after] = await xfce.query([FileQuery(path="changed.txt", mode="exists")])
    for _ in range(100):
        if after.value:
            break
        [after] = await xfce.query([FileQuery(path="changed.txt", mode="exists")])
    assert after.value
    await xfce.restore(ref)
    [gone] = await xfce.query([FileQuery(path="changed.txt", mode="exists")])
    assert gone.value is False
    [probe] = await xfce.query([CommandQuery(argv=["sh", "-c", _PROBE])])
    assert "_NET_WM_WINDOW_TYPE_DOCK" in probe.value["stdout"]  # restore left the panel running
    [listing] = await xfce.query([WindowsQuery()])
    assert [w["class"].lower() for w in listing.value["windows"]] == ["xterm"]
    await xfce.delete_snapshot(ref)


@pytest.mark.slow
@needs_x
async def test_first_frames_differ_between_sessions_and_between_looks(xfce: DesktopSandbox) -> None:
    frames = {}
    for name, config in (("openbox", {}), ("xfce", {"session": "xfce"}),
                         ("light", {"look": "light"}), ("dark", {"look": "dark"})):
        sb = await _create({"apps": ["mousepad"], **config}, f"test-look-{name}")
        try:
            frames[name] = await _frame(sb)
        finally:
            await sb.close()
    assert _differing_share(frames["openbox"], frames["xfce"]) > 0.2
    assert _differing_share(frames["light"], frames["dark"]) > 0.15  # the editor's page: white, then dark


@pytest.mark.slow
@needs_x
async def test_closing_an_xfce_desktop_leaves_no_process() -> None:
    before = _host_pids(_XFCE_PROGRAMS)
    sb = await _create({"session": "xfce", "look": "contrast", "apps": ["xterm"]}, "test-xfce-close")
    ours = _host_pids(_XFCE_PROGRAMS) - before
    assert {"xfwm4", "xfce4-panel", "xfdesktop", "xfsettingsd", "xfconfd"} <= {
        Path(f"/proc/{p}/comm").read_text().strip() for p in ours}
    await sb.close()
    left = [p for p in ours if os.path.exists(f"/proc/{p}") and
            "Z" not in Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0]]
    assert left == []


async def test_the_override_sets_desktop_instances_only_and_keys_verdicts_apart() -> None:
    [editor] = selected_templates(["desktop.editor_append_line@1"])
    [todo] = selected_templates(["todo.rename@1"])
    wrapped = DesktopOverride(editor, "xfce", "dark")
    assert wrapped.instantiate(0).sandbox_config["session"] == "xfce"
    assert wrapped.instantiate(0).sandbox_config["look"] == "dark"
    assert "session" not in editor.instantiate(0).sandbox_config
    assert wrapped.raw["sandbox"]["config"]["session"] == "xfce"
    digests = Digests()
    keys = [digests.template_key(t, [], seeds=[0], isolation=None, kind="desktop")
            for t in (editor, wrapped, DesktopOverride(editor, "xfce", None), DesktopOverride(editor, None, "dark"))]
    assert None not in keys and len(set(keys)) == 4
    browser = DesktopOverride(todo, "xfce", None)
    assert browser.instantiate(0).sandbox_config == todo.instantiate(0).sandbox_config
    assert with_desktop([editor], None, None) == [editor]
