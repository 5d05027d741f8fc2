"""The desktop sandbox: Xvfb, a window manager and real apps in a bubblewrap container,
driven through the guest agent (`cua.sandboxes.guest`)."""

from cua.sandboxes.desktop.config import APP_PRESETS, AppSpec, DesktopConfig, SettleSpec
from cua.sandboxes.desktop.sandbox import DesktopSandbox

__all__ = ["APP_PRESETS", "AppSpec", "DesktopConfig", "DesktopSandbox", "SettleSpec"]
