"""Configuration of a browser sandbox."""

from __future__ import annotations

import os
import re
import shutil
import zoneinfo
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from cua.errors import BadRequest
from cua.launcher import LAUNCHER
from cua.launcher import page_url as launcher_page
from cua.observation import Size
from cua.sandbox import ServiceSpec
from cua.variant import Variant, parse_variant

__all__ = ["ALLOWED_SCHEMES", "BrowserConfig", "Isolation", "check_start_url", "reset_options"]

_LOCALE = re.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}")


#: The URL schemes a sandbox's page may be sent to, by its start URL or a `goto`: no
#: `file:` (a shared-isolation browser runs on the host and would show the host's files),
#: no `chrome:`, `javascript:` or `view-source:`.
ALLOWED_SCHEMES = frozenset({"http", "https", "about", "data"})


def check_start_url(url: object, *, has_service: bool) -> None:
    """Raises ValueError unless `url` is a non-empty string: a URL of an allowed scheme, or
    a path only beside a service."""
    if not isinstance(url, str) or not url or len(url) > 8192:
        raise ValueError(f"start_url must be a URL or a path of 1 to 8192 characters, got {type(url).__name__}")
    if url.startswith("/"):
        if not has_service:
            raise ValueError(f"start_url {url!r} is a path but the sandbox has no service")
        return
    scheme = urlsplit(url).scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise ValueError(f"start_url {url[:200]!r}: scheme {scheme or '(none)'!r} is not allowed; use a path "
                         f"beside a service or a URL of {', '.join(sorted(ALLOWED_SCHEMES))}")


def reset_options(options: dict[str, Any] | None, *, has_service: bool) -> tuple[str | None, bool]:
    """A reset's options: the start URL for this episode (None: the config's) and whether
    to reload the page even where it could restart in place. BadRequest for anything else."""
    options = dict(options or {})
    start_url = options.pop("start_url", None)
    reload = options.pop("reload", False)
    options.pop("plant", None)  # the app service's (plant_option)
    if options:
        raise BadRequest(f"unknown reset option(s): {', '.join(sorted(options))}; known: start_url, reload, plant")
    if not isinstance(reload, bool):
        raise BadRequest("options.reload: true or false", details={"field": "options.reload"})
    if start_url is not None:
        try:
            check_start_url(start_url, has_service=has_service)
        except ValueError as exc:
            raise BadRequest(f"options.start_url: {exc}", details={"field": "options.start_url"}) from exc
    return start_url, reload


def plant_option(options: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """A reset's prompt injections (`cua.attack.Attack` as JSON), which the first service
    plants into its own data in the same reset (tasks/apps/plant.py): None when there are none."""
    plant = (options or {}).get("plant")
    if plant is None or plant == []:
        return None
    if not isinstance(plant, list) or not all(isinstance(item, dict) for item in plant):
        raise BadRequest("options.plant: a list of attacks (JSON objects)", details={"field": "options.plant"})
    return plant


#: `container`: own Chromium in its own bubblewrap namespaces (network: loopback only).
#: `shared`: a context in one browser per process; services on host loopback (weaker).
Isolation = Literal["container", "shared"]


class BrowserConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    isolation: Isolation = "container"
    viewport: Size = Size(width=1280, height=720)
    #: Absolute URL, a path ("/lists/1") resolved against the first service, or `about:apps`:
    #: a page linking every service's origin (`cua.launcher`), for a task over several apps.
    start_url: str = Field("about:blank", min_length=1, max_length=8192)
    services: list[ServiceSpec] = Field(default_factory=list)
    #: The app a service runs, by service name, as the apps page (`about:apps`) names it;
    #: default: the service's name (a task's own app is the service `app`).
    launcher_names: dict[str, str] = Field(default_factory=dict, max_length=64)
    seed: int = 0
    #: Upper bound of the settle wait after each action.
    settle_timeout_ms: int = Field(3000, ge=0, le=60_000)
    #: Quiet window without DOM mutations that counts as settled.
    settle_quiet_ms: int = Field(40, ge=0, le=5000)
    #: Bound on every single browser call; exceeding it raises cua.errors.Timeout.
    call_timeout_s: float = Field(30.0, gt=0, le=600)
    #: Bound on navigations (goto/back/forward/reset/restore), reported as agent faults.
    navigation_timeout_ms: int = Field(15_000, ge=100, le=300_000)
    #: Draw classic scrollbars, which take their 15 px from the page's width, as a desktop
    #: Chrome does (and MiniWoB's own Selenium env: its tasks wrap text and place icons
    #: inside that narrower box). Off by default: a page is then as wide as the viewport
    #: whether or not it scrolls. Browser-wide, so shared isolation keeps one shared
    #: browser for each setting.
    scrollbars: bool = False
    #: Extra Chromium switches (container isolation only: they are browser-wide).
    extra_args: list[str] = Field(default_factory=list, max_length=64)
    #: Extra host paths bound read-only into the container (e.g. a user's app code).
    extra_ro_binds: list[str] = Field(default_factory=list, max_length=64)
    #: cgroup v1 limits for the container (best effort; see info().details["cgroup"]).
    memory_limit_mb: int | None = Field(2048, ge=64)
    pids_limit: int | None = Field(512, ge=16)
    #: Shared isolation: run services whose spec names an app host (`ServiceSpec.app_host`)
    #: inside that one process-wide host (each instance its own database, port and socket)
    #: instead of one process per sandbox. Services without one always run their own argv.
    shared_app_host: bool = True
    #: `own_origins`: where the sandbox has origins of its own (its services', the start
    #: URL's when http(s)), the agent's `goto` goes only to them (or about:blank) and the
    #: page's reads answer only there (origins.py), so no page the agent makes or reaches
    #: elsewhere can speak for the task. `open`: any allowed scheme, every page read.
    navigation: Literal["own_origins", "open"] = "own_origins"
    locale: str = Field("en-US", max_length=35)
    timezone: str = Field("UTC", max_length=64)
    #: The appearance variant (`cua.variant`) the services' apps show at every reset whose
    #: options name none; its viewport, when given, is the sandbox's screen (fixed at create).
    variant: Variant | None = None

    @field_validator("locale")
    @classmethod
    def _bcp47(cls, value: str) -> str:
        if not _LOCALE.fullmatch(value):
            raise ValueError(f"{value!r} is not a BCP 47 language tag such as 'en-US'")
        return value

    @field_validator("timezone")
    @classmethod
    def _iana_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            raise ValueError(f"{value!r} is not an IANA time zone such as 'Europe/Paris'") from None
        return value

    @field_validator("services")
    @classmethod
    def _executable(cls, value: list[ServiceSpec]) -> list[ServiceSpec]:
        for spec in value:
            program = spec.argv[0]
            found = shutil.which(program) if os.sep not in program else program
            if found is None or not os.path.isfile(found) or not os.access(found, os.X_OK):
                raise ValueError(f"service {spec.name!r}: {program!r} is not an executable file")
        return value

    @model_validator(mode="after")
    def _start_url_resolves(self) -> BrowserConfig:
        check_start_url(self.start_url, has_service=bool(self.services))
        return self

    @model_validator(mode="after")
    def _switches_need_own_browser(self) -> BrowserConfig:
        # Chromium switches are browser-wide, and shared isolation shares one browser:
        # another client's sandbox would run with this one's switches (or it with theirs).
        if self.isolation == "shared" and self.extra_args:
            raise ValueError("extra_args are browser-wide Chromium switches; shared isolation shares one browser "
                             "between clients, so they need isolation 'container'")
        return self

    @field_validator("services")
    @classmethod
    def _unique_names(cls, value: list[ServiceSpec]) -> list[ServiceSpec]:
        names = [s.name for s in value]
        if len(set(names)) != len(names):
            raise ValueError(f"service names must be unique, got {names}")
        return value

    def resolve_start_url(self, ports: dict[str, int]) -> str:
        """The start URL with a bare path resolved against the first service's port, and
        `about:apps` (`cua.launcher.LAUNCHER`) as the page linking every service's origin."""
        check_start_url(self.start_url, has_service=bool(self.services))
        if self.start_url.startswith("/"):
            return f"http://127.0.0.1:{ports[self.services[0].name]}{self.start_url}"
        if self.start_url == LAUNCHER:
            return launcher_page({self.launcher_names.get(s.name, s.name): f"http://127.0.0.1:{ports[s.name]}"
                                  for s in self.services})
        return self.start_url

    @property
    def screen(self) -> Size:
        """The page's viewport: the variant's, when the config names one."""
        return self.variant.viewport if self.variant is not None else self.viewport


def variant_option(options: dict[str, Any] | None) -> tuple[dict[str, Any] | None, Variant | None]:
    """A reset's options without `variant`, and that variant (None: the config's). BadRequest
    for one that is no variant; the services refuse a value their app does not support."""
    if not options or "variant" not in options:
        return options, None
    rest = {k: v for k, v in options.items() if k != "variant"}
    raw = options["variant"]
    return rest or None, None if raw is None else parse_variant(raw, field="options.variant")
