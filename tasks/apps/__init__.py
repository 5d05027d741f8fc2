"""Bundled web apps. Each app is a subpackage `cua.tasks.apps.<name>` whose module
defines `APP`, a `WebApp` subclass; `app_names()` lists them and `load_app()` builds one."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from cua.tasks.apps.base import WebApp

__all__ = ["app_names", "load_app", "WebApp"]


@cache
def app_names() -> tuple[str, ...]:
    return tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg and not m.name.startswith("_")))


def load_app(name: str) -> WebApp:
    if name not in app_names():
        raise KeyError(f"unknown app {name!r}; bundled apps: {', '.join(app_names())}")
    module = importlib.import_module(f"{__name__}.{name}")
    app_class: type[WebApp] = module.APP
    return app_class()
