"""A person at `cua record`'s live view: a headless Chromium that demonstrates tasks with the
page's mouse and keyboard on the screen image, aiming where each task's oracle does (its pixel
actions from an oracle eval of the same variants). One person for the recorder's test
(tests/record/test_record_queue.py) and its soak (bench/record_soak.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["KEYS", "act", "demonstrate", "next_task", "open_live_view", "oracle_pixel_actions"]

#: Key names as the trajectory writes them -> as Playwright's keyboard presses them.
KEYS = {"Control": "Control", "Enter": "Enter", "Tab": "Tab", "Escape": "Escape", "Backspace": "Backspace"}


def oracle_pixel_actions(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Each task's actions (as pixels) from the trajectories an oracle eval wrote under `folder`."""
    from cua.trajectory import find_trajectories, read_trajectory

    out = {}
    for trajectory in find_trajectories(folder):
        traj = read_trajectory(trajectory)
        assert traj.meta is not None
        out[traj.meta.task_id] = [s.action for s in traj.steps if s.action is not None]
    return out


async def open_live_view(pw: Any, url: str) -> tuple[Any, Any]:
    """(browser, page): the person's Chromium on the live view at `url`."""
    from cua.sandboxes.browser.launcher import find_executable

    browser = await pw.chromium.launch(executable_path=find_executable().path,
                                       args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    await page.goto(url)
    return browser, page


async def next_task(page: Any, n: int) -> str:
    """The id of the `n`th task handed out (1-based), once its first frame is on the screen."""
    await page.wait_for_function(f"window.cuaTasks >= {n} && window.cuaFrames > window.cuaTaskFrame",
                                 timeout=120_000)
    return str(await page.inner_text("#task")).split(" · ")[0]


async def act(page: Any, box: dict[str, float], action: dict[str, Any], *, ack_ms: float) -> None:
    """One action as a person does it, waiting (at most `ack_ms`) for the live view to
    acknowledge each input."""

    async def acked(do: Any) -> None:
        before = await page.evaluate("window.cuaAcks")
        await do()
        await page.wait_for_function(f"window.cuaAcks > {before}", timeout=ack_ms)

    kind = action["type"]
    if kind == "click":
        await acked(lambda: page.mouse.click(box["x"] + action["x"], box["y"] + action["y"]))
    elif kind == "type":
        await page.focus("#screen")
        for char in action["text"]:
            await acked(lambda c=char: page.keyboard.press(c))
    elif kind == "key":
        await page.focus("#screen")
        await acked(lambda: page.keyboard.press("+".join(KEYS.get(k, k) for k in action["keys"])))
    elif kind == "scroll":
        await page.mouse.move(box["x"] + action["x"], box["y"] + action["y"])
        await acked(lambda: page.mouse.wheel(action.get("dx", 0), action.get("dy", 0)))
    else:
        raise ValueError(f"this person does not do {kind}")


async def demonstrate(page: Any, box: dict[str, float], actions: list[dict[str, Any]], *, ack_ms: float) -> None:
    """The whole demonstration: every action but the last `done`, its answer typed into the
    answer field, then Done pressed."""
    for action in actions:
        if action["type"] != "done":
            await act(page, box, action, ack_ms=ack_ms)
    final = actions[-1] if actions and actions[-1]["type"] == "done" else {"type": "done"}
    if final.get("answer"):
        await page.fill("#answer", final["answer"])
    await page.click("#done")
