"""Seeded parameter generation: the same (template, seed) always gives the same params.

`rows` params read the bundled app's database as seeded for the task, in process (the
app is built once per process and reset to the seed, which costs well under a
millisecond from its cached seed image), so every variant's parameters name data that
exists in the sandbox the agent will see.
"""

from __future__ import annotations

import datetime as dt
import importlib
import random
import re
import threading
from collections.abc import Callable
from typing import Any

from cua.tasks.format import ChoiceParam, DateParam, IntParam, ParamSpec, RowsParam, StringParam, TemplateSpec
from cua.tasks.render import render_str

__all__ = ["GenerationError", "generate_params", "import_function", "seeded_app", "template_rng"]


class GenerationError(RuntimeError):
    """A template could not produce parameters at this seed (e.g. its SQL found no rows)."""


_apps: dict[str, Any] = {}
_apps_lock = threading.RLock()  # re-entrant: a generator may read rows too


class seeded_app:
    """Context manager: the bundled app NAME reset to `seed`, held exclusively (one
    in-process instance per app name is shared, so access is serialised)."""

    def __init__(self, name: str, seed: int) -> None:
        self.name, self.seed = name, seed

    def __enter__(self) -> Any:
        from cua.tasks.apps import load_app  # lazy: importing an app pulls in Starlette

        _apps_lock.acquire()
        try:
            app = _apps.get(self.name)
            if app is None:
                app = _apps[self.name] = load_app(self.name)
            app.reset(self.seed)
        except BaseException:
            _apps_lock.release()
            raise
        return app

    def __exit__(self, *_: Any) -> None:
        _apps_lock.release()


def template_rng(template_id: str, seed: int) -> random.Random:
    """The params rng: independent per template, so adding a template changes no other."""
    return random.Random(f"{template_id}#{seed}")


def import_function(ref: str) -> Callable[..., Any]:
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GenerationError(f"cannot import {module_name!r} (from {ref!r}): {exc}") from exc
    fn = module.__dict__.get(attr)
    if not callable(fn):
        raise GenerationError(f"{ref!r}: module {module_name!r} has no function {attr!r}")
    function: Callable[..., Any] = fn
    return function


def _pick_count(pick: int | str, rng: random.Random) -> int:
    if isinstance(pick, int):
        return pick
    low, high = (int(x) for x in re.findall(r"\d+", pick))
    return rng.randint(low, high)


def _date(spec: DateParam, rng: random.Random) -> dict[str, str]:
    low, high = dt.date.fromisoformat(spec.min), dt.date.fromisoformat(spec.max)
    if high < low:
        raise GenerationError(f"date range {spec.min}..{spec.max} is empty")
    day = low + dt.timedelta(days=rng.randint(0, (high - low).days))
    out = {"value": _strftime(day, spec.format), "iso": day.isoformat()}
    out.update({name: _strftime(day, fmt) for name, fmt in spec.formats.items()})
    return out


def _strftime(day: dt.date, fmt: str) -> str:
    # %-d (no padding) is glibc-only; accept it everywhere by doing it ourselves.
    fmt = fmt.replace("%-d", str(day.day)).replace("%-m", str(day.month))
    return day.strftime(fmt)


def _rows(name: str, spec: RowsParam, rng: random.Random, app_name: str | None, app_seed: int,
          params: dict[str, Any]) -> Any:
    app = spec.app or app_name
    if app is None:
        raise GenerationError(f"param {name!r}: rows need an app (set `app:` on the param or `sandbox.app`)")
    bound = [render_str(p, params) if isinstance(p, str) else p for p in spec.params]
    with seeded_app(app, app_seed) as instance:
        rows = instance.db.all(str(render_str(spec.sql, params)), bound)
    count = _pick_count(spec.pick, rng)
    if len(rows) < count:
        raise GenerationError(f"param {name!r}: the query found {len(rows)} row(s) at app seed {app_seed}, "
                              f"{count} needed")
    chosen = rng.sample(rows, count)
    return chosen[0] if spec.pick == 1 else chosen


def generate_params(template: TemplateSpec, seed: int, app_seed: int) -> dict[str, Any]:
    """Declared params in file order (a later one may use earlier ones in its SQL and
    params), then the generator function, then derived strings."""
    rng = template_rng(template.id, seed)
    params: dict[str, Any] = {}
    for name, spec in template.params.items():
        params[name] = _one(name, spec, rng, template.sandbox.app, app_seed, params)
    if template.generator:
        fn = import_function(template.generator)
        try:
            if template.sandbox.app:
                with seeded_app(template.sandbox.app, app_seed) as app:
                    extra = fn(app, rng)
            else:
                extra = fn(None, rng)
        except GenerationError:
            raise
        except Exception as exc:  # the task author's code: report it with the template, typed
            raise GenerationError(f"generator {template.generator} raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(extra, dict):
            raise GenerationError(f"generator {template.generator} returned {type(extra).__name__}, not a dict")
        params.update(extra)
    for name, text in template.derived.items():
        params[name] = render_str(text, params)
    return params


def _one(name: str, spec: ParamSpec, rng: random.Random, app: str | None, app_seed: int,
         params: dict[str, Any]) -> Any:
    if isinstance(spec, IntParam):
        if spec.max < spec.min:
            raise GenerationError(f"param {name!r}: int range {spec.min}..{spec.max} is empty")
        return rng.randint(spec.min, spec.max)
    if isinstance(spec, (ChoiceParam, StringParam)):
        return rng.choice(spec.values)
    if isinstance(spec, DateParam):
        return _date(spec, rng)
    return _rows(name, spec, rng, app, app_seed, params)
