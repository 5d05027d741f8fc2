"""Configuration of a VM sandbox.

`apps`, `files` and `screen` (or `viewport`) take the desktop kind's shapes (app presets
by name, `{name, args}`, full specs), so one task's sandbox config runs on either kind;
an argv list (`["xterm", "-geometry", "80x20"]`) is also an app.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cua.observation import Size
from cua.sandbox import screen_from_viewport
from cua.sandboxes.desktop.config import APP_START_TIMEOUT, AppSpec, chromium_for_vm, expand_apps

__all__ = ["VMConfig"]


class VMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: A recipe name under `vm-images/` or a path to a recipe folder; default
    #: `$CUA_VM_IMAGE`, else "desktop" (e.g. `CUA_VM_IMAGE=office cua tasks check office --kind vm`).
    image: str = Field(default_factory=lambda: os.environ.get("CUA_VM_IMAGE") or "desktop")
    #: Build the image when it is not in the cache (a first build takes minutes).
    build: bool = True
    memory_mb: int = Field(512, ge=128, le=65536)
    cpus: int = Field(1, ge=1, le=64)
    screen: Size = Field(default_factory=lambda: Size(width=1280, height=720))
    #: "auto" probes KVM once (cached) and falls back to TCG when KVM hangs or is absent.
    accel: Literal["auto", "kvm", "tcg"] = "auto"
    #: Seconds from QEMU start to a guest agent that answers (generous: a TCG boot on a
    #: loaded host took 220 s; a QEMU that exits fails the boot at once).
    boot_timeout: float = Field(900.0, gt=0, le=3600)
    #: Upper bound of one guest agent request (an action, a screenshot, a query).
    agent_timeout: float = Field(60.0, gt=0, le=600)
    #: Upper bound on reading the accessibility tree (`A11yQuery`, `ObserveOptions(axtree=True)`;
    #: within `agent_timeout`). AT-SPI costs a D-Bus round trip per property of every node:
    #: a GTK editor's tree took over 20 s under TCG on a loaded host.
    a11y_timeout: float = Field(50.0, gt=0, le=600)
    #: Screen settling after an action (guest agent): the first update must come within
    #: `settle_first_ms` (else nothing changed), then `settle_quiet_ms` without updates,
    #: all within `settle_timeout_ms`. Looser than a container's: an emulated CPU draws late.
    settle_first_ms: float = Field(150.0, ge=0, le=10_000)
    settle_quiet_ms: float = Field(60.0, ge=0, le=10_000)
    settle_timeout_ms: float = Field(3000.0, ge=0, le=60_000)
    #: Keep a QEMU process loaded with copies of the last snapshot's files, waiting, so
    #: that the next restore of it only loads device state (costs one idle QEMU and a
    #: copy of the RAM file).
    standby: bool = True
    #: Apps started after boot (desktop shapes: a preset name such as "xterm", a spec
    #: dict, or an argv list); their windows are up before the initial snapshot, so
    #: `reset` returns to them.
    apps: list[AppSpec] = Field(default_factory=list)
    #: Files written into the desktop user's home before the apps start: path (relative
    #: to $HOME, or absolute under /home/user) -> text.
    files: dict[str, str] = Field(default_factory=dict)
    #: Binary files, the same way: path -> base64 of the bytes (spreadsheets, images).
    binary_files: dict[str, str] = Field(default_factory=dict)
    #: Outer bound (s) on each app's first window. The guest fails the wait early when
    #: the app exits or uses no CPU for `app_stall_s`, so a loaded machine that starts
    #: apps slowly is waited for, and a stuck app is not.
    app_timeout: float = Field(APP_START_TIMEOUT, gt=0, le=3600)
    app_stall_s: float = Field(120.0, gt=0, le=3600)
    #: Extra kernel command line words (appended to the recipe's).
    kernel_args: str = ""

    _viewport = model_validator(mode="before")(staticmethod(screen_from_viewport))

    @field_validator("apps", mode="before")
    @classmethod
    def _apps(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, list):  # an argv
                if not item or not all(isinstance(a, str) for a in item):
                    raise ValueError("an app's argv must be a non-empty list of strings")
                name = "".join(c if c.isalnum() or c in "_.-" else "_" for c in item[0].rsplit("/", 1)[-1])[:64]
                out.append({"name": name or "app", "argv": item})
            else:
                out.append(item)
        return [{**app, "argv": chromium_for_vm(app["argv"])} if isinstance(app, dict) and "argv" in app else app
                for app in expand_apps(out)]
