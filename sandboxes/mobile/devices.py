"""Device profiles of the mobile sandbox: a phone's or tablet's CSS size, pixel ratio and
user agent, as Chromium's device emulation takes them (`is_mobile`, `has_touch`).

Sizes are the portrait CSS viewport (the screen less nothing: the phone shell draws its
own status and navigation bars inside it); landscape swaps width and height.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from cua.errors import BadRequest
from cua.observation import Size

__all__ = ["DEVICES", "DeviceProfile", "Orientation", "device"]

Orientation = Literal["portrait", "landscape"]

_CHROME = "Chrome/124.0.0.0 Mobile Safari/537.36"


@dataclass(frozen=True)
class DeviceProfile:
    id: str
    title: str
    #: CSS pixels, portrait.
    width: int
    height: int
    device_scale_factor: float
    user_agent: str
    tablet: bool = False

    def viewport(self, orientation: Orientation) -> Size:
        if orientation == "landscape":
            return Size(width=self.height, height=self.width)
        return Size(width=self.width, height=self.height)


def _android(model: str, version: int = 14) -> str:
    return f"Mozilla/5.0 (Linux; Android {version}; {model}) AppleWebKit/537.36 (KHTML, like Gecko) {_CHROME}"


DEVICES: dict[str, DeviceProfile] = {p.id: p for p in (
    DeviceProfile("pixel_7", "Google Pixel 7", 412, 915, 2.625, _android("Pixel 7")),
    DeviceProfile("galaxy_s23", "Samsung Galaxy S23", 360, 780, 3.0, _android("SM-S911B")),
    DeviceProfile("pixel_5", "Google Pixel 5", 393, 851, 2.75, _android("Pixel 5", 13)),
    DeviceProfile("small_phone", "Compact phone (360x640)", 360, 640, 2.0, _android("moto g(7) play", 11)),
    DeviceProfile("pixel_tablet", "Google Pixel Tablet", 800, 1280, 2.0,
                  _android("Pixel Tablet").replace(" Mobile Safari", " Safari"), tablet=True),
)}


def device(name: str) -> DeviceProfile:
    """The profile `name`; BadRequest (the client's mistake) naming the known ones."""
    found = DEVICES.get(name)
    if found is None:
        raise BadRequest(f"unknown device {name!r}; known: {', '.join(sorted(DEVICES))}",
                         details={"field": "device", "device": name, "known": sorted(DEVICES)})
    return found
