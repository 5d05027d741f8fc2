"""The desktop and VM kinds are one guest-backed sandbox: the same checks, run over both.

Each kind starts once per module (a desktop container; a QEMU VM under TCG, marked `vm`)
with the same apps, an xterm and a GTK editor with its accessibility tree on, and is held
to the same promises: `check_sandbox` (on a fork, as it closes what it checks), an
observation's title, focused window and accessibility tree read from the real desktop,
browser-only actions refused as agent faults, and one way of counting steps.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import pytest_asyncio

from cua.actions import Click, ClickElement, Done, Goto, Move, Nav, Tap, Type
from cua.conformance import check_sandbox
from cua.observation import ObserveOptions
from cua.sandbox import Sandbox, create_sandbox
from cua.sandboxes.guest.sandbox import GuestSandbox
from cua.state import A11yQuery, FileQuery, WindowsQuery

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800), pytest.mark.asyncio(loop_scope="module")]

APPS = ["xterm", {"name": "mousepad", "args": ["notes.txt"]}]
FILES = {"notes.txt": "guest sandbox\n"}


def _missing(tools: tuple[str, ...]) -> str | None:
    absent = [t for t in tools if shutil.which(t) is None]
    return f"needs {', '.join(absent)}" if absent else None


KINDS = [
    pytest.param(("desktop", {"apps": APPS, "files": FILES, "accessibility": True}), id="desktop",
                 marks=pytest.mark.skipif(bool(_missing(("bwrap", "Xvfb", "openbox", "xterm", "mousepad"))),
                                          reason=f"the desktop kind {_missing(('bwrap', 'Xvfb', 'openbox', 'xterm', 'mousepad'))}")),
    pytest.param(("vm", {"apps": APPS, "files": FILES, "accel": "tcg", "screen": {"width": 1024, "height": 768},
                         "boot_timeout": 600, "app_timeout": 300}), id="vm",
                 marks=[pytest.mark.vm,
                        pytest.mark.skipif(bool(_missing(("qemu-system-x86_64", "qemu-img"))),
                                           reason=f"the VM kind {_missing(('qemu-system-x86_64', 'qemu-img'))}")]),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=KINDS)
async def guest(request: pytest.FixtureRequest) -> AsyncIterator[GuestSandbox]:
    kind, config = request.param
    sandbox = await create_sandbox(kind, config, sandbox_id=f"test-guest-{kind}")
    assert isinstance(sandbox, GuestSandbox)
    try:
        yield sandbox
    finally:
        await sandbox.close()


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for child in node.get("children", []):
        yield from _walk(child)


async def _listing(sb: Sandbox) -> dict[str, Any]:
    assert isinstance(sb, GuestSandbox)
    [windows] = await sb.query([WindowsQuery()])
    assert windows.ok, windows
    return dict(windows.value)


async def test_observation_carries_title_focus_and_accessibility_tree(guest: GuestSandbox) -> None:
    await guest.reset()
    listing = await _listing(guest)
    [focused] = [w for w in listing["windows"] if w["id"] == listing["focused"]]
    obs = await guest.observe(ObserveOptions(focused=True, axtree=True))
    assert obs.title == focused["title"] and obs.title, (obs.title, focused)
    assert obs.focused is not None and obs.focused["id"] == focused["id"] and obs.focused["class"] == focused["class"]
    # the title comes without asking for the focused window or a screenshot, as on the browser kind
    plain = await guest.observe(ObserveOptions(screenshot=False))
    assert plain.title == focused["title"] and plain.focused is None and plain.axtree is None
    if obs.axtree is None:  # say why: the query's own answer
        t0 = time.monotonic()
        [tree] = await guest.query([A11yQuery()])
        raise AssertionError(f"no accessibility tree; the a11y query answered {tree.error}: {tree.message} "
                             f"after {time.monotonic() - t0:.1f} s (the observation took {obs.timings_ms})")
    assert obs.axtree[0]["role"] == "desktop", obs.axtree
    nodes = list(_walk(obs.axtree[0]))
    assert any(n["role"] == "application" and n["name"] == "mousepad" for n in nodes), \
        sorted({(n["role"], n["name"]) for n in nodes if n["role"] == "application"})
    assert any(n["role"] == "text" and n.get("text") == FILES["notes.txt"] for n in nodes)
    # an action's observation carries them too, read after the action settled
    acted = await guest.act(Move(x=1, y=1), observe=ObserveOptions(focused=True))
    assert acted.title == focused["title"] and acted.focused is not None and acted.settle is not None


async def test_browser_only_and_touch_actions_are_agent_faults(guest: GuestSandbox) -> None:
    await guest.reset()
    for action in (Goto(url="http://127.0.0.1/"), ClickElement(element="1"), Tap(x=1, y=1), Nav(button="home")):
        obs = await guest.act(action)
        assert obs.error is not None and obs.error.reason == "unsupported_action", (action, obs.error)
    assert guest.alive


async def test_steps_count_as_on_the_browser_kind(guest: GuestSandbox) -> None:
    """Every act counts (an agent fault and `done` too), reset starts at 0, and a restore
    resumes the count the snapshot was taken at."""
    assert (await guest.reset()).step == 0
    assert (await guest.act(Move(x=5, y=5))).step == 1
    assert (await guest.act(Move(x=20_000, y=5))).step == 2  # out of bounds: a fault, still a step
    assert (await guest.act(Done())).step == 3
    assert (await guest.observe()).step == 3  # observing is not a step
    ref = await guest.snapshot()
    assert ref.meta["step"] == 3
    assert (await guest.act(Move(x=6, y=6))).step == 4
    assert (await guest.restore(ref)).step == 3
    assert (await guest.act(Move(x=7, y=7))).step == 4
    child = await guest.fork(ref, sandbox_id=f"{guest.id}-steps")
    try:
        assert (await child.act(Move(x=8, y=8))).step == 4
    finally:
        await child.close()
    assert (await guest.reset()).step == 0
    await guest.delete_snapshot(ref)


async def test_conformance_on_a_fork(guest: GuestSandbox) -> None:
    await guest.reset()
    listing = await _listing(guest)
    [term] = [w for w in listing["windows"] if w["class"] == "XTerm"]
    # The typed line goes to whichever window has the focus: the terminal's shell, so that
    # the fork's effect can be read back (and is absent from the parent).
    await guest.act(Click(x=term["x"] + term["width"] // 2, y=term["y"] + term["height"] // 2))
    ref = await guest.snapshot()
    child = await guest.fork(ref, sandbox_id=f"{guest.id}-conformance")
    report = await check_sandbox(child, changing_action=Type(text="echo conformance > conformance.txt\n"))
    assert report.ok, str(report)
    assert not child.alive
    await guest.delete_snapshot(ref)
    # the parent is untouched by what its fork did
    [made] = await guest.query([FileQuery(path="conformance.txt", mode="exists")])
    assert made.ok and made.value is False
