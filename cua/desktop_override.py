"""Running desktop templates in another desktop session or look, run-wide
(`cua tasks check --desktop-session xfce --desktop-look dark`, the same on `cua eval`).

A wrapper template, like `cua.tasks.kinds.KindOverride`: its instances on the desktop kind
get `session` / `look` in their sandbox config; instances of other kinds (a browser task,
a desktop task moved to the vm kind) are left alone. Its `raw` (the definition judge QA's
verdict cache digests) carries the override too, so a verdict checked in one session is
never reused for another. (Seeded `--variants` drawing lives in tasks/variants.py and does
not draw sessions or looks yet.)
"""

from __future__ import annotations

import argparse
from typing import Any

from cua.task import TaskInstance, TaskTags

__all__ = ["LOOKS", "SESSIONS", "DesktopOverride", "add_desktop_arguments", "with_desktop"]

SESSIONS = ("openbox", "xfce")
LOOKS = ("light", "dark", "contrast")


class DesktopOverride:
    """A template whose desktop-kind instances run with `session` and/or `look` set."""

    def __init__(self, template: Any, session: str | None, look: str | None) -> None:
        self.template = template
        self.fields: dict[str, str] = {k: v for k, v in (("session", session), ("look", look)) if v is not None}
        self.id: str = template.id
        self.tags: TaskTags = template.tags

    def __getattr__(self, name: str) -> Any:  # spec, file, suite, params: the template's own
        return getattr(self.template, name)

    def __repr__(self) -> str:
        return f"<{self.template!r} in desktop {self.fields}>"

    @property
    def raw(self) -> dict[str, Any] | None:
        """The template's definition with the override in its sandbox config (where the
        definition gives a config object), else beside it: what the verdict cache keys on."""
        raw: dict[str, Any] | None = self.template.raw
        if raw is None:
            return None
        sandbox = raw.get("sandbox")
        if isinstance(sandbox, dict) and isinstance(sandbox.get("config", {}), dict):
            config = {**sandbox.get("config", {}), **self.fields}
            return {**raw, "sandbox": {**sandbox, "config": config}}
        return {**raw, "desktop_override": dict(self.fields)}

    def instantiate(self, seed: int) -> TaskInstance:
        instance: TaskInstance = self.template.instantiate(seed)
        if instance.sandbox_kind != "desktop":
            return instance
        config = {**instance.sandbox_config, **self.fields}
        if config.get("session") == "xfce":  # xfce runs xfwm4: a template's window manager gives way
            config.pop("window_manager", None)
        return instance.model_copy(update={"sandbox_config": config})


def with_desktop(templates: list[Any], session: str | None, look: str | None) -> list[Any]:
    """`templates`, each wrapped to run in `session` / `look` when either is given."""
    if session is None and look is None:
        return templates
    return [DesktopOverride(t, session, look) for t in templates]


def add_desktop_arguments(parser: argparse.ArgumentParser, *, verb: str) -> None:
    """The run-wide desktop switches of `cua tasks check` and `cua eval`."""
    parser.add_argument("--desktop-session", choices=SESSIONS,
                        help=f"{verb} desktop-kind tasks in this desktop session (xfce: xfwm4, panel, desktop; "
                             "default: each template's own, openbox unless it says)")
    parser.add_argument("--desktop-look", choices=LOOKS,
                        help=f"{verb} desktop-kind tasks with these GTK and icon themes "
                             "(light: Adwaita, dark: Adwaita-dark, contrast: HighContrast)")
