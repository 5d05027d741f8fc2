"""Configuration of a browser sandbox."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from cua.observation import Size
from cua.sandbox import ServiceSpec

__all__ = ["BrowserConfig", "Isolation"]

#: `container`: own Chromium in its own bubblewrap namespaces (network: loopback only).
#: `shared`: a context in one browser per process; services on host loopback (weaker).
Isolation = Literal["container", "shared"]


class BrowserConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    isolation: Isolation = "container"
    viewport: Size = Size(width=1280, height=720)
    #: Absolute URL, or a path ("/lists/1") resolved against the first service.
    start_url: str = "about:blank"
    services: list[ServiceSpec] = Field(default_factory=list)
    seed: int = 0
    #: Upper bound of the settle wait after each action.
    settle_timeout_ms: int = Field(3000, ge=0, le=60_000)
    #: Quiet window without DOM mutations that counts as settled.
    settle_quiet_ms: int = Field(40, ge=0, le=5000)
    #: Bound on every single browser call; exceeding it raises cua.errors.Timeout.
    call_timeout_s: float = Field(30.0, gt=0, le=600)
    #: Bound on navigations (goto/back/forward/reset/restore), reported as agent faults.
    navigation_timeout_ms: int = Field(15_000, ge=100, le=300_000)
    #: Extra Chromium switches.
    extra_args: list[str] = Field(default_factory=list)
    #: Extra host paths bound read-only into the container (e.g. a user's app code).
    extra_ro_binds: list[str] = Field(default_factory=list)
    #: cgroup v1 limits for the container (best effort; see info().details["cgroup"]).
    memory_limit_mb: int | None = Field(2048, ge=64)
    pids_limit: int | None = Field(512, ge=16)
    #: Shared isolation: serve bundled apps (`python -m cua.tasks.apps.serve NAME`) from one
    #: process-wide app host (each instance its own database, port and socket) instead of
    #: one Python process per sandbox. Other services always get their own process.
    shared_app_host: bool = True
    locale: str = "en-US"
    timezone: str = "UTC"

    @field_validator("services")
    @classmethod
    def _unique_names(cls, value: list[ServiceSpec]) -> list[ServiceSpec]:
        names = [s.name for s in value]
        if len(set(names)) != len(names):
            raise ValueError(f"service names must be unique, got {names}")
        return value

    def resolve_start_url(self, ports: dict[str, int]) -> str:
        """The start URL with a bare path resolved against the first service's port."""
        if self.start_url.startswith("/"):
            if not self.services:
                raise ValueError(f"start_url {self.start_url!r} is a path but the sandbox has no service")
            return f"http://127.0.0.1:{ports[self.services[0].name]}{self.start_url}"
        return self.start_url
