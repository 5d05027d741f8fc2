"""What a person sees of an eval run: its HTML report built and read in a real Chromium
(tests/eval: the demo, repeats and stream runs' cards)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["report_cards"]


def report_cards(run: Path, names: Iterable[str]) -> dict[str, str]:
    """The value each named card of `run`'s report shows once the page says it is ready."""
    # imported here: only the slow tests that call this need Playwright and Chromium
    from playwright.sync_api import sync_playwright

    from cua.report import build_report
    from cua.sandboxes.browser.launcher import find_executable

    index = build_report(run)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=find_executable().path,
                                     args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page()
            page.goto(index.resolve().as_uri())
            page.wait_for_function("document.body.dataset.ready === '1'")
            return {name: page.inner_text(f"[data-card='{name}'] .v") for name in names}
        finally:
            browser.close()
