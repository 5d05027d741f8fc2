"""Bundled web apps. Each app is a subpackage `cua.tasks.apps.<name>` whose module
defines `APP`, a `WebApp` subclass; `app_names()` lists them and `load_app()` builds one.

`service(name)` is the sandbox service that runs one: its own process
(`python -m cua.tasks.apps.serve NAME`) in a container, an instance inside the `bundled`
app host (`multiserve`, registered in the `cua.app_hosts` entry-point group) where
sandboxes share processes."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import cache
from typing import Any

from cua.judges.values.web import QueryRule
from cua.tasks.apps.base import WebApp

__all__ = ["APP_HOST", "app_names", "host_command", "load_app", "own_server", "query_rules", "service", "WebApp"]

#: The name the bundled apps' multi-instance host is registered under (`cua.app_hosts`).
APP_HOST = "bundled"


@cache
def app_names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")))


def load_app(name: str) -> WebApp:
    if name not in app_names():
        raise KeyError(f"unknown app {name!r}; bundled apps: {', '.join(app_names())}")
    module = importlib.import_module(f"{__name__}.{name}")
    app_class: type[WebApp] = module.APP
    return app_class()


@cache
def query_rules(name: str) -> dict[str, QueryRule]:
    """App `name`'s declared query parameters (`WebApp.query_params`), without building the app."""
    if name not in app_names():
        raise KeyError(f"unknown app {name!r}; bundled apps: {', '.join(app_names())}")
    app_class: type[WebApp] = importlib.import_module(f"{__name__}.{name}").APP
    return dict(app_class.query_params)


def service(app: str, name: str = "app") -> dict[str, Any]:
    """The sandbox service (`cua.sandbox.ServiceSpec` as a dict) that runs bundled app `app`:
    in the shared app host where sandboxes share processes, unless the app runs its own
    server (a real product: `WebApp.shared_host` is false), which is always its own process."""
    spec: dict[str, Any] = {"name": name, "argv": [sys.executable, "-m", f"{__name__}.serve", app]}
    if not own_server(app):
        spec["app_host"] = {"host": APP_HOST, "app": app}
    else:
        spec["argv"] += _app_class(app).service_options()
        spec["ready_timeout"] = 120.0  # a product's first start may build its images (tens of seconds)
    return spec


def own_server(name: str) -> bool:
    """Whether app `name` is a real product (`cua.tasks.products`): its own server makes its
    pages, in a service process of its own, rather than this framework's routes."""
    return name in app_names() and not _app_class(name).shared_host


def _app_class(name: str) -> type[WebApp]:
    app_class: type[WebApp] = importlib.import_module(f"{__name__}.{name}").APP
    return app_class


def host_command() -> list[str]:
    """The bundled app host's command line (its `cua.app_hosts` entry point). `-P` keeps the
    working directory off sys.path, so a folder named like a module cannot shadow one."""
    return [sys.executable, "-P", "-m", f"{__name__}.multiserve"]
