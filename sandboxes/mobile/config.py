"""Configuration of a mobile sandbox: a browser sandbox's config with a device, an
orientation, the apps its home screen shows and the phone shell as its first service."""

from __future__ import annotations

import datetime as dt
import sys
from typing import Any

from pydantic import Field, field_validator, model_validator

from cua.errors import BadRequest
from cua.observation import Size
from cua.sandbox import ServiceSpec
from cua.sandboxes.browser.config import BrowserConfig
from cua.sandboxes.mobile.devices import DEVICES, Orientation, device

__all__ = ["SHELL", "SHELL_PORT", "MobileConfig", "shell_service"]

#: The shell's service name: reserved, never an app's.
SHELL = "shell"
#: The shell's port inside a container (its pages' origin there).
SHELL_PORT = 7999
#: The status bar's time when a config names none: the bundled apps' fixed "now".
DEFAULT_CLOCK = dt.datetime(2026, 3, 2, 9, 0, 0)


def shell_service() -> ServiceSpec:
    """The phone shell's own service (shell_server.py), started beside the apps."""
    return ServiceSpec(name=SHELL, argv=[sys.executable, "-P", "-m", "cua.sandboxes.mobile.shell_server"],
                       port=SHELL_PORT, ready_timeout=30.0)


def _own_ports(apps: list[ServiceSpec]) -> list[ServiceSpec]:
    """The apps with a port each in a container (where every service listens on its spec's
    port): apps that share one (the bundled apps' specs all say 8000) move to the next free."""
    taken = {SHELL_PORT}
    out = []
    for spec in apps:
        port = spec.port
        while port in taken:
            port += 1
        taken.add(port)
        out.append(spec if port == spec.port else spec.model_copy(update={"port": port}))
    return out


class MobileConfig(BrowserConfig):
    """`services` are the phone's apps (each its own origin, its service name its id); the
    shell's service is put after them (the first service stays the task's app, as in a
    browser sandbox). `viewport` and `start_url` follow from the device and the shell and
    may not be given."""

    device: str = "pixel_7"
    orientation: Orientation = "portrait"
    #: The apps the home screen shows, in order (service names); None: every service.
    apps: list[str] | None = Field(None, max_length=64)
    #: The app open when an episode starts; None: the home screen.
    start_app: str | None = None
    #: Labels under the icons, by app; default: the name, "phone_" dropped, words capitalised.
    labels: dict[str, str] = Field(default_factory=dict)
    #: Where a share sheet sends shared text, by app: a path with `{text}` (URL-encoded
    #: there); apps without one are not share targets.
    share_paths: dict[str, str] = Field(default_factory=dict)
    #: The sandbox clock the status bar shows.
    clock: dt.datetime = DEFAULT_CLOCK

    @model_validator(mode="before")
    @classmethod
    def _derived(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        name, orientation = data.get("device", "pixel_7"), data.get("orientation", "portrait")
        if not (isinstance(name, str) and name in DEVICES and orientation in ("portrait", "landscape")):
            return data  # the field validators name what is wrong
        size = device(name).viewport(orientation)
        given = data.get("viewport")
        if given is not None and Size.model_validate(given) != size:
            raise ValueError(f"viewport follows from the device ({name}, {orientation}: {size.width}x{size.height}) "
                             "in the mobile kind; choose a device and an orientation instead")
        if data.get("start_url", "/") != "/":
            raise ValueError("start_url is the phone shell's in the mobile kind; choose start_app instead")
        data["viewport"], data["start_url"] = size, "/"
        return data

    @field_validator("device")
    @classmethod
    def _known_device(cls, value: str) -> str:
        if value not in DEVICES:
            raise ValueError(f"unknown device {value!r}; known: {', '.join(sorted(DEVICES))}")
        return value

    @model_validator(mode="after")
    def _shell_first(self) -> MobileConfig:
        apps = [s for s in self.services if s.name != SHELL]
        if any(s.name == SHELL and s != shell_service() for s in self.services):
            raise ValueError(f"service name {SHELL!r} is the phone shell's")
        apps = _own_ports(apps)
        self.services = [*apps, shell_service()]
        names = [s.name for s in apps]
        for app in self.apps or []:
            if app not in names:
                raise ValueError(f"app {app!r} is not among the services ({', '.join(names) or 'none'})")
        if self.start_app is not None and self.start_app not in self.app_names:
            raise ValueError(f"start_app {self.start_app!r} is not among the apps ({', '.join(self.app_names)})")
        for key in (*self.labels, *self.share_paths):
            if key not in names:
                raise ValueError(f"{key!r} (labels, share_paths) is not among the services")
        for app, path in self.share_paths.items():
            if not path.startswith("/") or "{text}" not in path:
                raise ValueError(f"share_paths[{app!r}] must be a path holding {{text}}, got {path!r}")
        return self

    def resolve_start_url(self, ports: dict[str, int]) -> str:
        """The shell's page: every episode starts on the phone (a reset's `start_url` is the
        client's mistake: `start_app` says which app is open)."""
        if self.start_url != "/":
            raise BadRequest(f"start_url {self.start_url[:200]!r}: a mobile sandbox starts on its phone shell; "
                             "name the app to open with start_app", details={"field": "options.start_url"})
        return f"http://127.0.0.1:{ports[SHELL]}/"

    @property
    def app_names(self) -> list[str]:
        return list(self.apps) if self.apps is not None else [s.name for s in self.services if s.name != SHELL]

    def label(self, app: str) -> str:
        if app in self.labels:
            return self.labels[app]
        return app.removeprefix("phone_").replace("_", " ").replace("-", " ").title()
