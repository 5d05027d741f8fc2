"""Oracles of the office suite: keyboard and pointer actions only, as an agent would type
them (cell navigation from A1 with the arrow keys, formulas typed, Ctrl+S), waiting on
real state (the document's window, the saved file's checksum) between steps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

from cua.actions import Action, Key, Type
from cua.state import FileQuery
from cua.task import OracleContext
from cua.tasks.oracle import OracleError
from cua.tasks.suites.desktop.oracles import focus, wait_window

#: Bound on waiting for LibreOffice to open a document or write it (a loaded machine).
WAIT_S = 180.0


async def _sha(ctx: OracleContext, path: str) -> str | None:
    result = await ctx.query(FileQuery(path=path, mode="sha256"))
    return str(result.value) if result.ok else None


async def _saved(ctx: OracleContext, path: str, before: str | None) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if (now := await _sha(ctx, path)) is not None and now != before:
            return
        await asyncio.sleep(0.1)  # LibreOffice writes the file some time after Ctrl+S
    raise OracleError(f"{path} was not saved within {WAIT_S:g} s")


async def _open(ctx: OracleContext, klass: str, name: str) -> AsyncIterator[Action]:
    """Wait (bounded) for the document's window, then focus it."""
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
    for step in keys:
        yield Type(text=step) if isinstance(step, str) else Key(keys=list(step))
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
