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
    #: Keep a QEMU process loaded with copies of the last snapshot's files, waiting, so
    #: that the next restore of it only loads device state (costs one idle QEMU and a
    #: copy of the RAM file).
    standby: bool = True
    #: Extra kernel command line words (appended to the recipe's).
    kernel_args: str = ""
