"""`check_sandbox`: does a sandbox honour the contract every kind promises?

Like Gymnasium's `check_env`, for cua's `Sandbox`: a new kind (a user's own, or the
desktop and VM kinds) runs this against a live instance, and every promise that
runners, judges and policies rely on is exercised on the real thing:

- observations state their frame, and the screenshot really has that size and format;
- a resized frame maps action coordinates back to the screen;
- an out-of-bounds or foreign action is an agent fault in the observation, and the
  sandbox keeps working afterwards;
- unsupported state queries answer with a typed failure, never an exception;
- where it can snapshot: snapshot -> act -> restore gives back the same screen;
- close is idempotent.

Failures are collected, not raised one by one, so a report lists everything at once.
"""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from PIL import Image, ImageChops

from cua.actions import Action, Click, Goto, Move, Tap, Wait
from cua.observation import Observation, ObserveOptions, Size
from cua.sandbox import Queryable, Sandbox, Snapshottable
from cua.state import CommandQuery, DomQuery, StateQuery

__all__ = ["ConformanceReport", "check_sandbox", "image_of"]


@dataclass
class ConformanceReport:
    kind: str
    passed: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        lines = [f"{self.kind}: {len(self.passed)} passed, {len(self.failed)} failed"]
        lines += [f"  FAIL {name}: {why}" for name, why in self.failed]
        return "\n".join(lines)


def image_of(obs: Observation) -> Image.Image:
    assert obs.screenshot is not None, "observation has no screenshot"
    return Image.open(io.BytesIO(obs.screenshot.data))


def _same_pixels(a: Observation, b: Observation) -> bool:
    return ImageChops.difference(image_of(a).convert("RGB"), image_of(b).convert("RGB")).getbbox() is None


async def check_sandbox(sandbox: Sandbox, *, quiet_action: Action | None = None,
                        changing_action: Action | None = None) -> ConformanceReport:
    """Exercise `sandbox` (already created). `quiet_action` must change nothing on screen
    (default: move the pointer to a corner); `changing_action` must change the screen (used
    for the snapshot check; skipped when not given)."""
    report = ConformanceReport(kind=sandbox.kind)

    async def check(name: str, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except AssertionError as exc:
            report.failed.append((name, str(exc) or "assertion failed"))
        except Exception as exc:  # any other error is a failed promise too, reported with its type
            report.failed.append((name, f"{type(exc).__name__}: {exc}"))
        else:
            report.passed.append(name)

    screen = sandbox.info().screen
    # A touch screen (the mobile kind) refuses the mouse: its pointer actions are taps.
    touch = (await sandbox.act(Move(x=0, y=0))).error is not None and \
        (await sandbox.act(Tap(x=0, y=0))).error is None

    def pointer(x: int, y: int) -> Action:
        return Tap(x=x, y=y) if touch else Move(x=x, y=y)

    async def formats() -> None:
        for fmt in ("png", "jpeg", "webp"):
            obs = await sandbox.observe(ObserveOptions(format=fmt))
            assert obs.screenshot is not None and obs.screenshot.format == fmt, f"{fmt}: wrong format"
            img = image_of(obs)
            assert (img.format or "").lower() == fmt, f"{fmt}: bytes are {img.format}"
            assert img.size == (obs.frame.width, obs.frame.height) == (screen.width, screen.height), \
                f"{fmt}: image {img.size} vs frame {obs.frame} vs screen {screen}"
            assert obs.screen == screen

    async def resized_frame() -> None:
        half = Size(width=screen.width // 2, height=screen.height // 2)
        obs = await sandbox.observe(ObserveOptions(frame=half))
        assert obs.frame == half and image_of(obs).size == (half.width, half.height), "frame not honoured"
        obs = await sandbox.act(pointer(half.width - 1, half.height - 1), frame=half, observe=ObserveOptions(frame=half))
        assert obs.error is None, f"in-frame move refused: {obs.error}"
        obs = await sandbox.act(pointer(half.width + 1, 1), frame=half)
        assert obs.error is not None and obs.error.reason == "out_of_bounds", "point outside the frame accepted"

    async def agent_faults() -> None:
        obs = await sandbox.act(Tap(x=screen.width + 10, y=5) if touch else Click(x=screen.width + 10, y=5))
        assert obs.error is not None and obs.error.reason == "out_of_bounds", f"got {obs.error}"
        if sandbox.kind != "browser":
            obs = await sandbox.act(Goto(url="http://127.0.0.1/"))
            assert obs.error is not None and obs.error.reason == "unsupported_action", f"got {obs.error}"
        obs = await sandbox.act(Wait(seconds=0))
        assert obs.error is None and obs.screenshot is not None, "sandbox unusable after an agent fault"

    async def queries() -> None:
        if not isinstance(sandbox, Queryable):
            return
        answered = set(sandbox.info().queries)
        probes: list[StateQuery] = [DomQuery(selector="body"), CommandQuery(argv=["true"])]
        results = await sandbox.query(probes)
        assert len(results) == len(probes), "one result per query"
        for probe, result in zip(probes, results, strict=True):
            if probe.kind not in answered:
                assert not result.ok and result.error == "unsupported", f"{probe.kind}: {result}"

    async def snapshot_restore() -> None:
        if not isinstance(sandbox, Snapshottable) or changing_action is None:
            return
        opts = ObserveOptions(format="png")
        before = await sandbox.act(quiet_action or pointer(0, 0), observe=opts)
        ref = await sandbox.snapshot()
        changed = await sandbox.act(changing_action, observe=opts)
        assert not _same_pixels(before, changed), "changing_action did not change the screen"
        restored = await sandbox.restore(ref, observe=opts)
        assert _same_pixels(before, restored), "restore did not bring the screen back"
        await sandbox.delete_snapshot(ref)

    await check("screenshot formats and sizes", formats)
    await check("resized frame maps coordinates", resized_frame)
    await check("agent faults are reported, sandbox stays usable", agent_faults)
    await check("unsupported queries fail softly", queries)
    await check("snapshot -> act -> restore", snapshot_restore)

    async def close_twice() -> None:
        await sandbox.close()
        await sandbox.close()
        assert not sandbox.alive, "alive after close"

    await check("close is idempotent", close_twice)
    return report
