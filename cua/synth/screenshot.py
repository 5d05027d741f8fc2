"""The app as a proposing model sees it: one screenshot of its start page.

A model that proposes templates for an app writes better selectors and wordings when it has
seen the page (issue 38): `app_screenshot` opens the app as a generated template's sandbox
does (its start page, app seed 0, a shared browser) and returns the first frame.
"""

from __future__ import annotations

import asyncio
from typing import Any

from cua.observation import Screenshot
from cua.synth.admit import Candidate, screen

__all__ = ["app_screenshot", "screenshot_of"]


async def screenshot_of(sandbox_config: dict[str, Any], seed: int = 0) -> Screenshot:
    """The first frame of a browser sandbox opened with this config (shared isolation: no sandbox process)."""
    from cua.episode.local import open_local

    async with open_local("browser", {**sandbox_config, "isolation": "shared"}) as handle:
        obs = await handle.reset(seed=seed)
    if obs.screenshot is None:
        raise RuntimeError("the browser sandbox returned no screenshot")
    return obs.screenshot


def app_screenshot(suite: str, example: dict[str, Any], seed: int = 0) -> Screenshot:
    """The start page of the app an example template runs in, as its sandbox shows it at `seed`."""
    outcomes, loaded = screen(suite, [Candidate("example", example)], seeds=(seed,))
    if not loaded:
        reason = outcomes[0].reason if outcomes[0] is not None else "no template"
        raise ValueError(f"the example does not load: {reason}")
    return asyncio.run(screenshot_of(loaded[0][1].instantiate(seed).sandbox_config, seed))
