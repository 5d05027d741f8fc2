"""An app's appearance variant: theme, layout, locale and viewport, drawn seeded.

An agent trained on one look learns the look. A `Variant` changes how a bundled app
looks and reads -- never what it holds: the same seed gives the same data in every
variant, so judges (which read state) are the same across variants, and oracles select
by role, label or `data-` attributes. Each app declares the axes it supports
(`VariantAxes`); `draw(rng, axes)` picks one value on every axis.

Plain data: the sandboxes (viewport, reset option), the apps (theme, layout, locale),
the task runners (`--variants K`, held-out splits) and the records all name it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cua.errors import BadRequest
from cua.observation import Size

__all__ = ["AXES", "DEFAULT", "DEFAULT_AXES", "HoldOut", "LAYOUTS", "LOCALES", "THEMES", "VIEWPORTS", "Variant",
           "VariantAxes", "draw", "draws", "parse_variant"]

#: Every theme `tasks/apps/static/themes.css` defines for every bundled app.
THEMES = ("light", "dark", "contrast", "sepia")
#: Layouts an app's `layout.css` may define: navigation on top (every app's own), in a
#: sidebar, or a dense layout with tighter rows.
LAYOUTS = ("top", "sidebar", "dense")
#: Locales with translated UI and localised dates, numbers and currencies (`cua.tasks.apps.i18n`).
LOCALES = ("en-US", "de-DE")
#: Desktop and laptop screens (CSS px) a variant may draw.
VIEWPORTS = (Size(width=1280, height=720), Size(width=1366, height=768), Size(width=1440, height=900),
             Size(width=1024, height=768))
AXES = ("theme", "layout", "locale", "viewport")


class Variant(BaseModel):
    """One look of an app. The default is every app's look before variants."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    theme: str = Field("light", max_length=32)
    layout: str = Field("top", max_length=32)
    locale: str = Field("en-US", max_length=35)
    viewport: Size = VIEWPORTS[0]

    def value(self, axis: str) -> str:
        """The axis's value as text (a viewport as `WIDTHxHEIGHT`), as hold-outs name it."""
        if axis == "viewport":
            return f"{self.viewport.width}x{self.viewport.height}"
        if axis == "theme":
            return self.theme
        if axis == "layout":
            return self.layout
        if axis == "locale":
            return self.locale
        raise BadRequest(f"no variant axis {axis!r}; axes: {', '.join(AXES)}", details={"field": "variant"})

    def key(self) -> str:
        """`theme=dark,layout=sidebar,locale=de-DE,viewport=1280x720`: names the variant in
        task ids, reports and file names."""
        return ",".join(f"{axis}={self.value(axis)}" for axis in AXES)


DEFAULT = Variant()


class VariantAxes(BaseModel):
    """The values an app supports on each axis (the first of each is its default look)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    themes: tuple[str, ...] = THEMES
    layouts: tuple[str, ...] = ("top",)
    locales: tuple[str, ...] = ("en-US",)
    viewports: tuple[Size, ...] = VIEWPORTS

    def values(self, axis: str) -> tuple[str, ...]:
        if axis == "viewport":
            return tuple(f"{v.width}x{v.height}" for v in self.viewports)
        return {"theme": self.themes, "layout": self.layouts, "locale": self.locales}[axis]

    def check(self, variant: Variant, app: str) -> Variant:
        """`variant` if the app supports every one of its values; BadRequest naming the axis otherwise."""
        for axis in AXES:
            value, known = variant.value(axis), self.values(axis)
            if axis == "viewport" and variant.viewport.width >= 320 and variant.viewport.height >= 320:
                continue  # any screen the sandbox can show; the drawn ones are the listed ones
            if value not in known:
                raise BadRequest(f"app {app!r} has no {axis} {value!r}; it has: {', '.join(known)}",
                                 details={"field": f"variant.{axis}", "app": app})
        return variant


#: What an app that declares nothing supports: every theme (themes.css recolours every
#: bundled app through its design tokens), its own layout and English.
DEFAULT_AXES = VariantAxes()


def parse_variant(value: Any, *, field: str = "variant") -> Variant:
    """A variant from JSON (a reset option, a config, a request): BadRequest for anything
    that is not one (an unknown axis, a value of the wrong type)."""
    if isinstance(value, Variant):
        return value
    if not isinstance(value, Mapping):
        raise BadRequest(f"{field}: an object with theme, layout, locale, viewport", details={"field": field})
    try:
        return Variant.model_validate(dict(value))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BadRequest(f"{field}.{where}: {first['msg']}", details={"field": f"{field}.{where}"}) from None


def draw(rng: random.Random, axes: VariantAxes = DEFAULT_AXES) -> Variant:
    """One value on every axis the app supports, from `rng` alone."""
    return Variant(theme=rng.choice(axes.themes), layout=rng.choice(axes.layouts),
                   locale=rng.choice(axes.locales), viewport=rng.choice(axes.viewports))


def draws(rng: random.Random, axes: VariantAxes, k: int, *, hold_out: HoldOut | None = None,
          keep: bool = False) -> list[Variant]:
    """`k` distinct variants (fewer if the axes hold fewer), every axis drawn: the first the
    app's default look. With `hold_out`, only variants it does not hold (`keep=False`, a train
    split) or only those it holds (`keep=True`, the test split)."""
    total = len(axes.themes) * len(axes.layouts) * len(axes.locales) * len(axes.viewports)
    out: list[Variant] = []
    first = Variant(theme=axes.themes[0], layout=axes.layouts[0], locale=axes.locales[0], viewport=axes.viewports[0])
    candidates = [first] if hold_out is None or hold_out.holds(first) == keep else []
    tries = 0
    while len(out) < k and tries < 50 * max(k, total):
        v = candidates.pop() if candidates else draw(rng, axes)
        tries += 1
        if v in out or (hold_out is not None and hold_out.holds(v) != keep):
            continue
        out.append(v)
    return out


class HoldOut(BaseModel):
    """Variants held out of training: a variant is held when any of its values is named
    (`theme=contrast,locale=de-DE` holds every high-contrast variant and every German one),
    so an unseen theme or locale can be the test split."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    values: dict[str, tuple[str, ...]] = Field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | Iterable[str]) -> HoldOut:
        """`axis=value[,axis=value...]`; BadRequest naming the bad part."""
        parts = [p.strip() for p in (text.split(",") if isinstance(text, str) else text) if p.strip()]
        values: dict[str, list[str]] = {}
        for part in parts:
            axis, eq, value = part.partition("=")
            axis, value = axis.strip(), value.strip()
            if not eq or axis not in AXES or not value:
                raise BadRequest(f"hold-out {part!r}: write axis=value with an axis of {', '.join(AXES)}",
                                 details={"field": "hold_out"})
            known = {"theme": THEMES, "layout": LAYOUTS, "locale": LOCALES,
                     "viewport": tuple(f"{v.width}x{v.height}" for v in VIEWPORTS)}[axis]
            if value not in known:
                raise BadRequest(f"hold-out {part!r}: no {axis} {value!r}; known: {', '.join(known)}",
                                 details={"field": "hold_out"})
            values.setdefault(axis, []).append(value)
        if not values:
            raise BadRequest("hold-out: name at least one axis=value", details={"field": "hold_out"})
        return cls(values={k: tuple(v) for k, v in values.items()})

    def holds(self, variant: Variant) -> bool:
        return any(variant.value(axis) in vals for axis, vals in self.values.items())

    def text(self) -> str:
        return ",".join(f"{axis}={v}" for axis, vals in self.values.items() for v in vals)
