"""Configuration of a VM sandbox."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from cua.observation import Size

__all__ = ["VMConfig"]


class VMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: A recipe name under `vm-images/` or a path to a recipe folder.
    image: str = "desktop"
    #: Build the image when it is not in the cache (a first build takes minutes).
    build: bool = True
    memory_mb: int = Field(512, ge=128, le=65536)
    cpus: int = Field(1, ge=1, le=64)
    screen: Size = Field(default_factory=lambda: Size(width=1280, height=720))
    #: "auto" probes KVM once (cached) and falls back to TCG when KVM hangs or is absent.
    accel: Literal["auto", "kvm", "tcg"] = "auto"
    #: Seconds from QEMU start to a guest agent that answers.
    boot_timeout: float = Field(240.0, gt=0, le=3600)
    #: Upper bound of one guest agent request (an action, a screenshot, a query).
    agent_timeout: float = Field(60.0, gt=0, le=600)
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
    #: Apps started after boot, each an argv (e.g. ["xterm"], ["mousepad"]); their windows
    #: are up before the initial snapshot, so `reset` returns to them.
    apps: list[list[str]] = Field(default_factory=list)
    #: Seconds to wait for each app's first window.
    app_timeout: float = Field(60.0, gt=0, le=600)
    #: Extra kernel command line words (appended to the recipe's).
    kernel_args: str = ""
