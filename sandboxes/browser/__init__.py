"""The browser sandbox: Chromium via Playwright, in a bubblewrap container or a shared browser."""

from cua.sandboxes.browser.config import BrowserConfig
from cua.sandboxes.browser.sandbox import BrowserSandbox

__all__ = ["BrowserConfig", "BrowserSandbox"]
