"""Oracles of the office suite: keyboard and pointer actions only, as an agent would type
them (cell navigation from A1 with the arrow keys, formulas typed, Ctrl+S), waiting on
real state (the document's window, the saved file's checksum) between steps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action, Key, Type
from cua.state import CommandQuery, FileQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError
from cua.tasks.suites.desktop.oracles import focus, wait_file, wait_window

#: Bound on waiting for LibreOffice to open a document or write it (a loaded machine).
WAIT_S = 180.0


async def _sha(ctx: OracleContext, path: str) -> str | None:
    result = await ctx.query(FileQuery(path=path, mode="sha256"))
    return str(result.value) if result.ok else None


#: A saved file counts as written once its checksum has held this long: an app writes
#: in pieces (VLC's playlist was judged half written once, when its first bytes counted).
STILL_S = 0.4


async def _saved(ctx: OracleContext, path: str, before: str | None) -> None:
    """Wait until `path` exists, differs from `before` (its checksum, or None: absent)
    and has stopped changing."""
    deadline = time.monotonic() + WAIT_S
    seen: tuple[str, float] | None = None
    while time.monotonic() < deadline:
        now = await _sha(ctx, path)
        if now is None or now == before:
            seen = None
        elif seen is None or seen[0] != now:
            seen = (now, time.monotonic())
        elif time.monotonic() - seen[1] >= STILL_S:
            return
        await asyncio.sleep(0.1)  # the app writes the file some time after the keystroke
    raise OracleError(f"{path} was not saved within {WAIT_S:g} s")


#: An app counts as idle once it used under this share of one core for `IDLE_S`.
IDLE_SHARE = 0.1
IDLE_S = 1.0
#: Linux's USER_HZ, which /proc/PID/stat counts in, on every architecture the images have.
CLOCK_TICKS = 100
#: LibreOffice's process, whichever document it shows.
OFFICE_PROCESS = "soffice.bin"
#: The window class of LibreOffice's dialogs, matched as a substring: "libreoffice" under
#: its X11 backend (the desktop kind here), "Soffice" under GTK 3 (the office VM image).
DIALOG_CLASS = "office"
#: The chart wizard's title: its name on the X11 backend, its first page's on GTK 3.
CHART_WIZARD_X11, CHART_WIZARD_GTK3 = "Chart Wizard", "Chart Type"
CHART_WIZARD = (CHART_WIZARD_X11, CHART_WIZARD_GTK3)


async def _cpu_ticks(ctx: OracleContext, process: str) -> int:
    """CPU clock ticks (user + system) the processes named `process` used so far."""
    script = f"for p in $(pgrep -x {process}); do cut -d' ' -f14,15 /proc/$p/stat; done"
    result = await ctx.query(CommandQuery(argv=["sh", "-c", script]))
    if not result.ok:
        raise OracleError(f"could not read the CPU use of {process}: {result.error}")
    return sum(int(v) for v in str(result.value["stdout"]).split())


async def _idle(ctx: OracleContext, process: str) -> None:
    """Wait until `process` has gone idle. A LibreOffice window shows its document's title
    while the document is still loading, and keys it gets then can be lost: under an
    emulated CPU the first arrow key of `calc_tax_column` and the selection of
    `writer_retitle` were, and their text went to the wrong place."""
    deadline = time.monotonic() + WAIT_S
    since, ticks = time.monotonic(), await _cpu_ticks(ctx, process)
    while True:
        await asyncio.sleep(0.25)  # a CPU share is measured over an interval: no event says "idle"
        now, used = time.monotonic(), await _cpu_ticks(ctx, process)
        if used - ticks > IDLE_SHARE * CLOCK_TICKS * (now - since):
            since, ticks = now, used  # busy: start the quiet stretch again
        elif now - since >= IDLE_S:
            return
        if now > deadline:
            raise OracleError(f"{process} never went idle within {WAIT_S:g} s")


async def _open(ctx: OracleContext, klass: str, name: str) -> AsyncIterator[Action]:
    """Wait (bounded) for the document's window, focus it, and wait until LibreOffice is
    done loading it (`_idle`)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        try:
            await wait_window(ctx, klass, name)
            break
        except OracleError:
            if time.monotonic() > deadline:
                raise
    async for action in focus(ctx, klass, name):
        yield action
    await _idle(ctx, OFFICE_PROCESS)


async def _steps(ctx: OracleContext, steps: list[Any]) -> AsyncIterator[Action]:
    """Key combos (lists) and text (strings), in order. After a combo that opens a menu
    (Alt and a letter), wait until LibreOffice is idle, so that the item's key reaches a
    built menu however slow the guest (a precaution: keys LibreOffice got while busy
    loading a document were lost)."""
    for step in steps:
        if isinstance(step, str):
            yield Type(text=step)
            continue
        yield Key(keys=list(step))
        if _opens_menu(step):
            await _idle(ctx, OFFICE_PROCESS)


def _opens_menu(keys: list[str]) -> bool:
    return len(keys) == 2 and keys[0] == "Alt" and len(keys[1]) == 1 and keys[1].isalpha()


async def _cells(ctx: OracleContext, entries: list[list[Any]]) -> AsyncIterator[Action]:
    before = await _sha(ctx, "budget.xlsx")
    async for action in _open(ctx, "libreoffice-calc", "budget.xlsx"):
        yield action
    for down, right, text in entries:
        yield Key(keys=["Control", "Home"])
        for _ in range(int(down)):
            yield Key(keys=["Down"])
        for _ in range(int(right)):
            yield Key(keys=["Right"])
        yield Type(text=f"{text}\n")
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "budget.xlsx", before)


async def calc_enter(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Type the template's cell entries (`entries`: rows down, columns right, text) and save."""
    async for action in _cells(ctx, params["entries"]):
        yield action


async def calc_enter_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the plausible wrong entries (`near_entries`), saved."""
    async for action in _cells(ctx, params["near_entries"]):
        yield action


async def _writer(ctx: OracleContext, keys: list[Any]) -> AsyncIterator[Action]:
    before = await _sha(ctx, "memo.docx")
    async for action in _open(ctx, "libreoffice-writer", "memo.docx"):
        yield action
    async for action in _steps(ctx, keys):
        yield action
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "memo.docx", before)


async def writer_bold_title(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _writer(ctx, [["Control", "Home"], ["Shift", "End"], ["Control", "b"]]):
        yield action


async def writer_bold_second(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: bolds the paragraph after the title."""
    async for action in _writer(ctx, [["Control", "Home"], ["Down"], ["Home"], ["Shift", "End"], ["Control", "b"]]):
        yield action


async def writer_append(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _writer(ctx, [["Control", "End"], ["Return"], str(params["extra"])]):
        yield action


async def writer_prepend(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the paragraph goes first, not last."""
    async for action in _writer(ctx, [["Control", "Home"], str(params["extra"]), ["Return"]]):
        yield action


async def writer_retitle(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _writer(ctx, [["Control", "Home"], ["Shift", "End"], str(params["new_title"])]):
        yield action


async def writer_retitle_added(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the new title goes above the old one, which stays."""
    async for action in _writer(ctx, [["Control", "Home"], str(params["new_title"]), ["Return"]]):
        yield action


# --- Calc: menus, selections, the chart wizard ---

async def _calc(ctx: OracleContext, keys: AsyncIterator[Action] | list[Any]) -> AsyncIterator[Action]:
    """Open budget.xlsx's window, perform `keys` (key combos as lists, text as strings, or
    an async iterator of actions), save and wait for the write."""
    before = await _sha(ctx, "budget.xlsx")
    async for action in _open(ctx, "libreoffice-calc", "budget.xlsx"):
        yield action
    if isinstance(keys, list):
        async for action in _steps(ctx, keys):
            yield action
    else:
        async for action in keys:
            yield action
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "budget.xlsx", before)


def _goto(down: int, right: int) -> list[Any]:
    return [["Control", "Home"], *[["Down"]] * int(down), *[["Right"]] * int(right)]


def _select(region: list[int]) -> list[Any]:
    """From A1: to (down, right), then extend the selection by (rows, columns)."""
    down, right, rows, columns = (int(v) for v in region)
    return [*_goto(down, right), *[["Shift", "Down"]] * rows, *[["Shift", "Right"]] * columns]


def _sorted_by(cell: list[int]) -> list[Any]:
    """Data > Sort Ascending with the cursor in the column to sort by (Calc takes the
    whole table and keeps its header row)."""
    return [*_goto(*cell), ["Alt", "d"], "a"]


async def calc_sort(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _calc(ctx, _sorted_by(params["cost_cell"])):
        yield action


async def calc_sort_by_name(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: rows kept whole, but sorted by the item column."""
    async for action in _calc(ctx, _sorted_by(params["name_cell"])):
        yield action


#: The format each template's key applies to its selection.
FORMAT_KEYS = {"currency": ["Control", "Shift", "4"], "bold": ["Control", "b"], "filter": ["Control", "Shift", "l"]}


async def calc_format(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Select `select` (down, right, extra rows, extra columns from A1) and press the
    template's format key (`format`: currency, bold or filter)."""
    async for action in _calc(ctx, [*_select(params["select"]), FORMAT_KEYS[params["format"]]]):
        yield action


async def calc_format_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the same format on `near_select` (a row short, one header cell, one column)."""
    async for action in _calc(ctx, [*_select(params["near_select"]), FORMAT_KEYS[params["format"]]]):
        yield action


def _finish_keys(wizard: dict[str, Any]) -> list[str]:
    """The keys that press the wizard's Finish, read from what the wizard shows. On the X11
    backend Finish is the default button and has no mnemonic, so Return presses it; under
    GTK 3 (titled by its page) the type list takes Return for itself, and Finish is Alt+F."""
    on_gtk3 = CHART_WIZARD_GTK3.lower() in (wizard.get("title") or "").lower()
    return ["Alt", "f"] if on_gtk3 else ["Return"]


async def _chart(ctx: OracleContext, down: int) -> AsyncIterator[Action]:
    """Insert > Chart with the cursor in the table (the wizard takes the whole table), the
    type `down` rows below Column in the wizard's list, Finish, leave the chart."""
    async for action in _steps(ctx, [["Control", "Home"], ["Alt", "i"], "c"]):
        yield action
    wizard = await wait_window(ctx, DIALOG_CLASS, CHART_WIZARD)
    assert wizard is not None
    await _idle(ctx, OFFICE_PROCESS)  # the wizard maps before it takes keys (its preview renders)
    for _ in range(int(down)):
        yield Key(keys=["Down"])
    await _idle(ctx, OFFICE_PROCESS)  # each type redraws the preview
    yield Key(keys=_finish_keys(wizard))
    await wait_window(ctx, DIALOG_CLASS, CHART_WIZARD, gone=True)
    for _ in range(2):  # out of the chart's edit mode, then off the chart
        yield Key(keys=["Escape"])


async def calc_chart(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _calc(ctx, _chart(ctx, params["chart_down"])):
        yield action


async def calc_chart_default(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the right data in the wizard's default type (Column)."""
    async for action in _calc(ctx, _chart(ctx, params["near_chart_down"])):
        yield action


# --- Writer: styles, alignment, lists, find and replace ---

#: Key steps per Writer template (`steps` names one; `near_steps` its near miss).
WRITER_STEPS: dict[str, list[Any]] = {
    "heading": [["Control", "Home"], ["Control", "1"]],
    "bold_title": [["Control", "Home"], ["Shift", "End"], ["Control", "b"]],
    "center": [["Control", "Home"], ["Control", "e"]],
    "right": [["Control", "Home"], ["Control", "r"]],
    "bullets": [["Control", "Home"], ["Down"], ["Home"], ["Shift", "Control", "End"], ["Shift", "F12"]],
    "numbers": [["Control", "Home"], ["Down"], ["Home"], ["Shift", "Control", "End"], ["F12"]],
}


async def writer_steps(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _writer(ctx, WRITER_STEPS[params["steps"]]):
        yield action


async def writer_near_steps(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _writer(ctx, WRITER_STEPS[params["near_steps"]]):
        yield action


async def _replace(ctx: OracleContext, old: str, new: str, select: list[list[str]]) -> AsyncIterator[Action]:
    """Edit > Find and Replace from the top, after `select` (none: the whole document; a
    selection across paragraphs turns on 'current selection only'): the search and the
    replacement typed, then Replace All (Alt+L)."""
    before = await _sha(ctx, "memo.docx")
    async for action in _open(ctx, "libreoffice-writer", "memo.docx"):
        yield action
    yield Key(keys=["Control", "Home"])
    for keys in select:
        yield Key(keys=keys)
    yield Key(keys=["Control", "h"])
    await wait_window(ctx, DIALOG_CLASS, "Find and Replace")
    await _idle(ctx, OFFICE_PROCESS)  # the dialog takes keys once it is built
    yield Key(keys=["Control", "a"])
    yield Type(text=old)
    yield Key(keys=["Alt", "p"])
    yield Key(keys=["Control", "a"])
    yield Type(text=new)
    yield Key(keys=["Alt", "l"])
    yield Key(keys=["Escape"])
    await wait_window(ctx, DIALOG_CLASS, "Find and Replace", gone=True)
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "memo.docx", before)


async def writer_replace_all(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _replace(ctx, params["old"], params["new"], []):
        yield action


async def writer_replace_selected(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the first two paragraphs left selected, so Replace All changes only them."""
    async for action in _replace(ctx, params["old"], params["new"], [["Shift", "Down"], ["Shift", "End"]]):
        yield action


# --- Impress ---

async def _impress(ctx: OracleContext, pages: int, keys: list[Any]) -> AsyncIterator[Action]:
    """Open deck.pptx's window, go to the first slide and `pages` slides on, perform
    `keys`, save and wait for the write."""
    before = await _sha(ctx, "deck.pptx")
    async for action in _open(ctx, "libreoffice-impress", "deck.pptx"):
        yield action
    yield Key(keys=["Home"])
    for _ in range(int(pages)):
        yield Key(keys=["Next"])
    async for action in _steps(ctx, keys):
        yield action
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "deck.pptx", before)


def _retitle(text: str, objects: int = 1) -> list[Any]:
    """Select the slide's `objects`-th object (Tab from none: 1 is the title, 2 the content
    box), edit it, replace its text, leave it."""
    return [*[["Tab"]] * int(objects), ["Return"], ["Control", "a"], text, ["Escape"], ["Escape"]]


async def impress_retitle(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _impress(ctx, params["pages"], _retitle(str(params["new_title"]))):
        yield action


async def impress_retitle_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the next slide's title replaced."""
    async for action in _impress(ctx, params["near_pages"], _retitle(str(params["new_title"]))):
        yield action


async def impress_body(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _impress(ctx, params["pages"], _retitle(str(params["point"]), params["objects"])):
        yield action


async def impress_body_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the new text typed over the slide's title instead."""
    async for action in _impress(ctx, params["pages"], _retitle(str(params["point"]), params["near_objects"])):
        yield action


#: Slide > Delete Slide: the Slide menu (Alt+L), four items down.
DELETE_SLIDE = [["Alt", "l"], ["Down"], ["Down"], ["Down"], ["Down"], ["Return"]]


async def impress_delete(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _impress(ctx, params["pages"], DELETE_SLIDE):
        yield action


async def impress_delete_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the slide after the asked one deleted."""
    async for action in _impress(ctx, params["near_pages"], DELETE_SLIDE):
        yield action


async def impress_add(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Slide > New Slide (Ctrl+M) after the current slide, then its title."""
    async for action in _impress(ctx, params["pages"], [["Control", "m"], *_retitle(str(params["new_title"]))]):
        yield action


async def impress_add_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the new slide goes after the first, not at the end."""
    async for action in _impress(ctx, params["near_pages"], [["Control", "m"], *_retitle(str(params["new_title"]))]):
        yield action


# --- GIMP ---

async def _gimp_action(ctx: OracleContext, query: str) -> AsyncIterator[Action]:
    """Help > Search and Run a Command ("/"): the query (unique to one action), Return."""
    yield Type(text="/")
    await wait_window(ctx, "gimp", "Search Actions")
    yield Type(text=query)
    yield Key(keys=["Return"])
    await wait_window(ctx, "gimp", "Search Actions", gone=True)


async def _gimp(ctx: OracleContext, params: dict[str, Any], steps: AsyncIterator[Action]) -> AsyncIterator[Action]:
    """Focus GIMP's window on the picture, perform `steps`, then File > Export As
    (Shift+Ctrl+E) to `out` as PNG with the exporter's defaults; wait for the file."""
    await wait_window(ctx, "gimp", f"[{params['name']}]")
    async for action in focus(ctx, "gimp", f"[{params['name']}]"):
        yield action
    async for action in steps:
        yield action
    yield Key(keys=["Shift", "Control", "e"])
    await wait_window(ctx, "gimp", "Export Image")
    yield Key(keys=["Control", "a"])
    yield Type(text=f"{params['out']}\n")
    await wait_window(ctx, "gimp", "Export Image as PNG")
    yield Key(keys=["Return"])
    await wait_window(ctx, "gimp", "Export Image as PNG", gone=True)
    await _saved(ctx, str(params["out"]), None)
    await wait_window(ctx, "gimp", f"[{params['out'].rsplit('.', 1)[0]}] (exported)")  # written to the end


async def gimp_action(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _gimp(ctx, params, _gimp_action(ctx, str(params["action"]))):
        yield action


async def gimp_near_action(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: a look-alike action (the view flipped, not the picture; the other way round)."""
    async for action in _gimp(ctx, params, _gimp_action(ctx, str(params["near_action"]))):
        yield action


async def _scale(ctx: OracleContext, width: int) -> AsyncIterator[Action]:
    """Image > Scale Image: the width typed (the chain keeps the aspect ratio), Scale."""
    async for action in _gimp_action(ctx, "scale image"):
        yield action
    await wait_window(ctx, "gimp", "Scale Image")
    yield Key(keys=["Control", "a"])
    yield Type(text=f"{width}\t")
    yield Key(keys=["Alt", "s"])
    await wait_window(ctx, "gimp", "Scale Image", gone=True)


async def gimp_scale(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _gimp(ctx, params, _scale(ctx, int(params["width"]))):
        yield action


async def gimp_scale_near(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the height's number typed as the width."""
    async for action in _gimp(ctx, params, _scale(ctx, int(params["near_width"]))):
        yield action


async def _table(ctx: OracleContext, rows: int, cells: str) -> AsyncIterator[Action]:
    """Table > Insert Table (Ctrl+F12) in a new last paragraph: two columns, `rows` rows,
    Insert (Return); then the cells typed left to right, top to bottom, Tab between them."""
    before = await _sha(ctx, "memo.docx")
    async for action in _open(ctx, "libreoffice-writer", "memo.docx"):
        yield action
    for keys in (["Control", "End"], ["Return"], ["Control", "F12"]):
        yield Key(keys=keys)
    # A dialog mapped is not yet a dialog with the keyboard, nor is the document once the
    # dialog is gone (keys typed in between went elsewhere under load): focus each first.
    async for action in focus(ctx, DIALOG_CLASS, "Insert Table"):
        yield action
    for value in ("2", str(rows)):  # Name -> Columns -> Rows
        yield Key(keys=["Tab"])
        yield Key(keys=["Control", "a"])
        yield Type(text=value)
    # Return in the Rows field presses the default button, Insert. Alt+I does only on the X11
    # backend, which gives buttons mnemonics of its own; GTK 3 leaves Insert without one.
    yield Key(keys=["Return"])
    await wait_window(ctx, DIALOG_CLASS, "Insert Table", gone=True)
    async for action in focus(ctx, "libreoffice-writer", "memo.docx"):
        yield action
    yield Type(text=cells)
    yield Key(keys=["Control", "s"])
    await _saved(ctx, "memo.docx", before)


async def writer_table(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _table(ctx, int(params["rows"]), str(params["cells"])):
        yield action


async def writer_table_short(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the table without its last item's row."""
    async for action in _table(ctx, int(params["near_rows"]), str(params["near_cells"])):
        yield action


# --- VLC ---

async def _save_playlist(ctx: OracleContext, name: str) -> AsyncIterator[Action]:
    """Media > Save Playlist to File (Ctrl+Y): the file name typed into the dialog (its
    type stays XSPF), Return; wait for the file."""
    await wait_window(ctx, "vlc", "VLC media player")
    async for action in focus(ctx, "vlc", "VLC media player"):
        yield action
    yield Key(keys=["Control", "y"])
    await wait_window(ctx, "vlc", "Save playlist as")
    yield Type(text=f"{name}\n")
    await wait_window(ctx, "vlc", "Save playlist as", gone=True)
    await _saved(ctx, name, None)


async def vlc_save_playlist(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _save_playlist(ctx, str(params["out"])):
        yield action


async def vlc_save_playlist_m3u(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: saved under the name of another format (.m3u), not the asked file."""
    async for action in _save_playlist(ctx, str(params["near_out"])):
        yield action


# --- Thunderbird ---

#: Thunderbird's main process (its content processes are thunderbird-bin).
THUNDERBIRD_PROCESS = "thunderbird"


async def _send_mail(ctx: OracleContext, params: dict[str, Any], *, cc_on_to_line: bool) -> AsyncIterator[Action]:
    """Write (Ctrl+N), each address committed with Return, the Cc row opened with
    Ctrl+Shift+C, Tab to the subject and on to the body, Send (Ctrl+Return). The compose
    window's title shows the subject once it is in its field; the server's file shows the
    message sent."""
    await wait_window(ctx, "thunderbird", "Mozilla Thunderbird")
    await _idle(ctx, THUNDERBIRD_PROCESS)  # its main window is up seconds before it takes shortcuts
    async for action in focus(ctx, "thunderbird", "Mozilla Thunderbird"):
        yield action
    yield Key(keys=["Control", "n"])
    await wait_window(ctx, "thunderbird", "Write:")
    await _idle(ctx, THUNDERBIRD_PROCESS)  # keys before its fields are built are lost (under TCG)
    async for action in focus(ctx, "thunderbird", "Write:"):
        yield action
    yield Type(text=f"{params['to']}\n")
    if not cc_on_to_line:
        yield Key(keys=["Control", "Shift", "c"])
    yield Type(text=f"{params['cc']}\n")
    yield Key(keys=["Tab"])
    yield Type(text=str(params["subject"]))
    await wait_window(ctx, "thunderbird", f"Write: {params['subject']}")
    yield Key(keys=["Tab"])
    yield Type(text=str(params["body"]))
    yield Key(keys=["Control", "Return"])
    await wait_file(ctx, f"{params['outbox']}/001.eml")
    await wait_window(ctx, "thunderbird", "Write:", gone=True)


async def thunderbird_send_mail(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    async for action in _send_mail(ctx, params, cc_on_to_line=False):
        yield action


async def thunderbird_send_mail_all_to(ctx: OracleContext, params: dict[str, Any]) -> AsyncIterator[Action]:
    """Near miss: the copy recipient on the To line, beside the recipient, not in Cc."""
    async for action in _send_mail(ctx, params, cc_on_to_line=True):
        yield action
