"""Oracles for the desktop suite: they act only through unified actions (typing into the
terminal, keys and clicks on windows), finding windows with the `windows` state query and
waiting on real state (a marker file the shell writes, a window that appears) before the
next step, as a careful agent would. No step touches the apps directly.

A template names `oracles:shell_oracle` / `oracles:shell_near_miss` and gives, in its
params (usually from a generator in `gen.py`), any of:
  oracle_sh / near_sh          one shell command line, typed into the terminal
  oracle_answer / near_answer  the final answer (done(answer=...))
  oracle_status / near_status  the final status (done(status=...))
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action, Click, Done, Key, Type
from cua.state import ClipboardQuery, FileQuery, WindowsQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError

#: Bound on waiting for a command, a window or a file: generous, since a TCG VM on a loaded
#: host takes minutes to draw a browser page (it is a bound, never a sleep).
WAIT_S = 300.0
#: Between re-reads of state while waiting: state changes come from the apps, not from us.
POLL_S = 0.05


async def _windows(ctx: OracleContext) -> dict[str, Any]:
    result = await ctx.query(WindowsQuery())
    if not result.ok:
        raise OracleError(f"cannot list windows: {result.message}")
    if not isinstance(result.value, dict):
        raise OracleError(f"the window listing is not an object: {str(result.value)[:200]}")
    return result.value


#: A window title to find (a case-insensitive substring), or alternatives: the same dialog
#: is titled differently by different toolkits (LibreOffice's chart wizard: "Chart Wizard"
#: on its X11 backend, its current page, "Chart Type", on GTK 3).
Title = str | tuple[str, ...] | None


def _match(window: dict[str, Any], klass: str | None, title: Title) -> bool:
    if klass and klass.lower() not in (window.get("class") or "").lower():
        return False
    if not title:
        return True
    shown = (window.get("title") or "").lower()
    return any(t.lower() in shown for t in ((title,) if isinstance(title, str) else title))


async def wait_window(ctx: OracleContext, klass: str | None = None, title: Title = None,
                      *, gone: bool = False) -> dict[str, Any] | None:
    """Wait until a matching window is mapped and keeps its place and size across two
    reads (or, with `gone`, until none is there). A window is listed from its creation,
    before the window manager has mapped and placed it: clicks computed from that first
    geometry can land beside a dialog on a loaded machine."""
    deadline = time.monotonic() + WAIT_S
    last: tuple[int, ...] | None = None
    while True:
        listing = await _windows(ctx)
        found: dict[str, Any] | None = next((w for w in listing["windows"] if _match(w, klass, title)
                      and (gone or w.get("mapped", True))), None)
        if gone and found is None:
            return None
        if not gone and found is not None:
            place = (found["id"], found["x"], found["y"], found["width"], found["height"])
            if place == last:
                return found
            last = place
        if time.monotonic() > deadline:
            raise OracleError(f"window class={klass!r} title={title!r} {'still there' if gone else 'never came'}")
        await asyncio.sleep(POLL_S)


#: A title bar's ends hold the window menu (left) and the buttons (right: shade, minimise,
#: maximise, close); a click there is no focus click. Generous for openbox's and xfwm4's themes.
_TITLE_ICON_PX, _TITLE_BUTTONS_PX = 40, 120
#: How far a window's frame reaches above its client area (xfwm4's title bar is taller than openbox's).
_FRAME_TOP_PX = 32


def _clear_point(window: dict[str, Any], others: list[dict[str, Any]]) -> tuple[int, int]:
    """A point on the window's title bar (clicking it moves no text cursor) that no other
    window covers and no title-bar button sits under (a click on minimise passed for closing
    an editor in xfwm4); the title bar's middle when every candidate is covered."""
    def covered(px: int, py: int) -> bool:
        return any(o["id"] != window["id"] and o["x"] - 2 <= px < o["x"] + o["width"] + 2
                   and o["y"] - _FRAME_TOP_PX <= py < o["y"] + o["height"] + 2 for o in others)

    y = max(window["y"] - 10, 1)
    left, width = window["x"], window["width"]
    lo, hi = left + _TITLE_ICON_PX, left + width - _TITLE_BUTTONS_PX
    if hi <= lo:
        return int(left + width / 2), y
    for frac in (0.5, 0.25, 0.75, 0.0, 1.0):
        x = int(lo + (hi - lo) * frac)
        if not covered(x, y):
            return x, y
    return int(left + width / 2), y


def _to_frame(ctx: OracleContext, x: float, y: float) -> tuple[float, float]:
    obs = ctx.observation
    return x * obs.frame.width / obs.screen.width, y * obs.frame.height / obs.screen.height


async def focus(ctx: OracleContext, klass: str | None = None, title: str | None = None) -> AsyncIterator[Action]:
    """Click the window's title bar (safe: it moves no text cursor) until it has the focus."""
    for _ in range(3):
        window = await wait_window(ctx, klass, title)
        assert window is not None
        if (await _windows(ctx))["focused"] == window["id"]:
            return
        x, y = _to_frame(ctx, *_clear_point(window, (await _windows(ctx))["windows"]))
        yield Click(x=x, y=y)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if (await _windows(ctx))["focused"] == window["id"]:
                return
            await asyncio.sleep(POLL_S)
    raise OracleError(f"could not focus window class={klass!r} title={title!r}")


async def wait_file(ctx: OracleContext, path: str, *, contains: str | None = None) -> None:
    deadline = time.monotonic() + WAIT_S
    while True:
        if contains is None:
            result = await ctx.query(FileQuery(path=path, mode="exists"))
            if result.ok and result.value:
                return
        else:
            result = await ctx.query(FileQuery(path=path))
            if result.ok and contains in (result.value or ""):
                return
        if time.monotonic() > deadline:
            raise OracleError(f"{path} did not appear" + (f" with {contains!r}" if contains else ""))
        await asyncio.sleep(POLL_S)


async def shell(ctx: OracleContext, command: str) -> AsyncIterator[Action]:
    """Type a command line into the terminal and wait until the shell has run it (it then
    touches a marker in the container's private /tmp, outside the judged home)."""
    async for action in focus(ctx, "xterm"):
        yield action
    marker = f"/tmp/.cua-oracle-{uuid.uuid4().hex[:12]}"
    yield Type(text=f"{command}; touch {marker}\n")
    await wait_file(ctx, marker)


async def _scripted(ctx: OracleContext, params: dict[str, Any], prefix: str) -> AsyncIterator[Action]:
    command = params.get(f"{prefix}_sh")
    for line in command if isinstance(command, list) else [command] if command else []:
        async for action in shell(ctx, str(line)):  # a list: one command line after another, as a person works
            yield action
    answer = params.get(f"{prefix}_answer")
    status = params.get(f"{prefix}_status", "success")
    if answer is not None or status != "success":
        yield Done(status=status, answer=None if answer is None else str(answer))


async def shell_oracle(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _scripted(ctx, params, "oracle"):
        yield action


async def shell_near_miss(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _scripted(ctx, params, "near"):
        yield action


# --- the text editor (mousepad), by keyboard as a user would ---

async def _editor(ctx: OracleContext, keys_then_text: list[Any], *, save: bool) -> AsyncIterator[Action]:
    async for action in focus(ctx, "mousepad"):
        yield action
    for item in keys_then_text:
        yield Key(keys=item[1]) if item[0] == "key" else Type(text=item[1])
    if save:
        yield Key(keys=["Control", "s"])


async def _saved(ctx: OracleContext, params: dict[str, Any]) -> None:
    await wait_file(ctx, params["file"], contains=params.get("saved_marker") or "")


async def _line_saved(ctx: OracleContext, params: dict[str, Any], *moves: str) -> AsyncIterator[Action]:
    """Press `moves`, type the line, save, and wait until the file on disk holds it."""
    async for action in _editor(ctx, [*(("key", m) for m in moves), ("text", f"{params['line']}\n")], save=True):
        yield action
    await wait_file(ctx, params["file"], contains=params["line"])


def editor_append(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _line_saved(ctx, params, "ctrl+End")


def editor_append_unsaved(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the line is typed but the document is never saved."""
    return _editor(ctx, [("key", "ctrl+End"), ("text", f"{params['line']}\n")], save=False)


def editor_insert_top(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _line_saved(ctx, params, "ctrl+Home")


def editor_insert_second(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the line goes below the first line instead of above it."""
    return _line_saved(ctx, params, "ctrl+Home", "Down")


async def _delete_line(ctx: OracleContext, params: dict[str, Any], index: int) -> AsyncIterator[Action]:
    steps: list[Any] = [("key", "ctrl+Home")] + [("key", "Down")] * index + [
        ("key", "Home"), ("key", "shift+Down"), ("key", "Delete")]
    async for action in _editor(ctx, steps, save=True):
        yield action
    deadline = time.monotonic() + WAIT_S
    while True:  # saved when the line is gone from the file
        result = await ctx.query(FileQuery(path=params["file"]))
        lines = (result.value or "").splitlines() if result.ok else []
        if result.ok and len(lines) == params["n_lines"] - 1:
            return
        if time.monotonic() > deadline:
            raise OracleError("the line was not deleted")
        await asyncio.sleep(POLL_S)


async def editor_delete_line(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _delete_line(ctx, params, int(params["index"])):
        yield action


async def editor_delete_wrong_line(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _delete_line(ctx, params, int(params["wrong_index"])):
        yield action


async def _copy_line(ctx: OracleContext, index: int) -> AsyncIterator[Action]:
    steps: list[Any] = [("key", "ctrl+Home")] + [("key", "Down")] * index + [
        ("key", "Home"), ("key", "shift+End"), ("key", "ctrl+c")]
    async for action in _editor(ctx, steps, save=False):
        yield action


def editor_copy_line(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _copy_line(ctx, int(params["index"]))


def editor_copy_wrong_line(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _copy_line(ctx, int(params["wrong_index"]))


async def editor_replace_all(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Search > Find and Replace (ctrl+r): both fields, match case, replace all, save."""
    async for action in _replace(ctx, params, replace_all=True):
        yield action


async def editor_replace_unsaved(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: replaces every occurrence but never saves the file."""
    async for action in _replace(ctx, params, replace_all=True, save=False):
        yield action


#: Where the controls of mousepad's Find and Replace dialog are, relative to the dialog's
#: client area (read off the dialog as it shows with Debian's default GTK theme and fonts).
#: "Replace" becomes "Replace All", a little to the left, once "Replace all in" is ticked.
REPLACE_DIALOG = {"search": (250, 24), "replace": (250, 62), "match_case": (19, 132), "replace_all": (19, 216),
                  "replace_button": (298, 256), "replace_all_button": (274, 256)}


async def _replace(ctx: OracleContext, params: dict[str, Any], *, replace_all: bool,
                   save: bool = True) -> AsyncIterator[Action]:
    async for action in focus(ctx, "mousepad", params["file"]):
        yield action
    yield Key(keys=["Control", "Home"])
    yield Key(keys=["Control", "r"])
    dialog = await wait_window(ctx, "mousepad", "replace")
    assert dialog is not None

    def at(control: str) -> Click:
        dx, dy = REPLACE_DIALOG[control]
        x, y = _to_frame(ctx, dialog["x"] + dx, dialog["y"] + dy)
        return Click(x=x, y=y)

    # The replacement first: typing a search term starts a search that keeps the focus
    # in the search field for a moment.
    yield at("replace")
    yield Type(text=str(params["new"]))
    yield at("search")
    yield Type(text=str(params["old"]))
    yield at("match_case")
    if replace_all:
        yield at("replace_all")
        yield at("replace_all_button")
    else:
        yield at("replace_button")
    yield Key(keys=["Escape"])
    await wait_window(ctx, "mousepad", "replace", gone=True)
    if not save:
        return
    async for action in focus(ctx, "mousepad", params["file"]):
        yield action
    yield Key(keys=["Control", "s"])
    await wait_file(ctx, params["file"], contains=str(params["new"]))


async def close_editor(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in focus(ctx, "mousepad"):
        yield action
    yield Key(keys=["Control", "q"])
    await wait_window(ctx, "mousepad", gone=True)


async def close_terminal(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: closes the terminal instead of the editor."""
    async for action in focus(ctx, "xterm"):
        yield action
    yield Type(text="exit\n")
    await wait_window(ctx, "xterm", gone=True)


# --- across apps ---

async def _copy_page(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Select all text of the page in the browser and copy it; checks the clipboard, and
    tries again when the page was not ready to copy yet."""
    window = await wait_window(ctx, "chromium", params["page_title"])
    assert window is not None
    for _ in range(5):
        async for action in focus(ctx, "chromium"):
            yield action
        # A click on the page itself: the keyboard focus may be in the address bar, where
        # ctrl+a would select the URL.
        x, y = _to_frame(ctx, window["x"] + window["width"] * 0.6, window["y"] + window["height"] * 0.75)
        yield Click(x=x, y=y)
        yield Key(keys=["Control", "a"])
        yield Key(keys=["Control", "c"])
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            clip = await ctx.query(ClipboardQuery())
            if clip.ok and clip.value and str(params["order"]) in clip.value:
                return
            await asyncio.sleep(POLL_S)
    raise OracleError("the page text never reached the clipboard")


async def browser_to_file(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Copy the page's text in the browser, then filter the clipboard in the terminal."""
    async for action in _copy_page(ctx, params):
        yield action
    async for action in shell(ctx, str(params["oracle_sh"])):
        yield action


async def browser_to_file_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _copy_page(ctx, params):
        yield action
    async for action in shell(ctx, str(params["near_sh"])):
        yield action


async def open_in_editor(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in shell(ctx, str(params["oracle_sh"])):
        yield action
    await wait_window(ctx, "mousepad", f"{params['name']}.txt")


async def open_wrong_in_editor(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in shell(ctx, str(params["near_sh"])):
        yield action
    await wait_window(ctx, "mousepad")


# --- the file manager (pcmanfm) ---

async def _fm_new_folder(ctx: OracleContext, name: str) -> AsyncIterator[Action]:
    """File > Create New > Folder (ctrl+shift+n), type the name in the dialog, Enter."""
    async for action in focus(ctx, "pcmanfm"):
        yield action
    yield Key(keys=["Control", "Shift", "n"])
    await wait_window(ctx, "pcmanfm", "new folder")
    yield Key(keys=["Control", "a"])
    yield Type(text=f"{name}\n")
    await wait_window(ctx, "pcmanfm", "new folder", gone=True)
    await wait_file(ctx, name)


def fm_new_folder(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _fm_new_folder(ctx, str(params["name"]))


def fm_new_folder_misnamed(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    return _fm_new_folder(ctx, str(params["wrong"]))
