"""The mobile sandbox kind: a phone in Chromium's device emulation, touch only, behind a phone shell."""

from cua.sandboxes.mobile.config import MobileConfig
from cua.sandboxes.mobile.devices import DEVICES, DeviceProfile
from cua.sandboxes.mobile.sandbox import MobileSandbox

__all__ = ["DEVICES", "DeviceProfile", "MobileConfig", "MobileSandbox"]
