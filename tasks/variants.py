"""Task instances in appearance variants (`cua.variant`): `--variants K` and held-out splits.

A variant changes how the task's app looks and reads, never its data or judge: an
instance in a variant is the same instance with `sandbox_config["variant"]` set, which
the browser sandbox shows (its viewport at create, theme, layout and locale at every
reset) and which every trajectory, manifest and export records with the sandbox config.
The K variants of one instance are drawn from its template id and seed alone, so a run
and its rerun (and `cua tasks check` and `cua eval`) see the same ones.
"""

from __future__ import annotations

import hashlib
import random
from typing import Any

from cua.task import TaskInstance
from cua.tasks.apps import app_names, load_app
from cua.variant import HoldOut, Variant, VariantAxes, draws, parse_variant

__all__ = ["app_axes", "in_variant", "shared_config", "split_variants", "variant_of", "variant_tag", "variants_of"]


def _app_of(config: dict[str, Any]) -> str | None:
    """The bundled app the sandbox's first service runs, if it is one of this framework's."""
    for spec in (config.get("services") or [])[:1]:
        host = spec.get("app_host") or {}
        name = host.get("app") if host.get("host") == "bundled" else None
        if isinstance(name, str) and name in app_names():
            return name
    return None


def app_axes(instance: TaskInstance) -> VariantAxes | None:
    """The variants the instance's app supports: None for a task whose sandbox is no
    browser over a bundled app (a real product, a desktop), which has only its own look."""
    if instance.sandbox_kind != "browser":
        return None
    name = _app_of(instance.sandbox_config)
    if name is None:
        return None
    app = load_app(name)
    return None if not app.shared_host else app.variant_axes


def variant_of(instance: TaskInstance) -> Variant | None:
    """The variant an instance runs in (None: its app's default look)."""
    raw = instance.sandbox_config.get("variant")
    return None if raw is None else parse_variant(raw, field="sandbox_config.variant")


def variant_tag(variant: Variant) -> str:
    """A short name of a variant for file names: its key's digest (8 hex digits)."""
    return hashlib.sha256(variant.key().encode()).hexdigest()[:8]


def shared_config(config: dict[str, Any]) -> dict[str, Any]:
    """`config` as far as it decides the sandbox: a variant's theme, layout and locale are
    set by each reset (the episode passes them), so instances that differ only there share
    one sandbox; its viewport is the sandbox's screen, fixed at create."""
    raw = config.get("variant")
    if raw is None:
        return config
    return {**config, "variant": {"viewport": parse_variant(raw, field="sandbox_config.variant").viewport.model_dump()}}


def split_variants(instance: TaskInstance, k: int, hold_out: HoldOut | None, split: str) -> list[TaskInstance]:
    """The `k` seeded variants of `instance` that belong to `split` (train, test or all)
    when `hold_out` holds some out: a train template's held variants are test data, its
    others train data; a test template is test data in every variant."""
    if hold_out is None or split == "all":
        return variants_of(instance, k)
    test_template = instance.tags.split == "test"
    if split == "train":
        return [] if test_template else variants_of(instance, k, hold_out=hold_out)
    return variants_of(instance, k) if test_template else variants_of(instance, k, hold_out=hold_out, held=True)


def in_variant(instance: TaskInstance, variant: Variant) -> TaskInstance:
    """`instance` shown in `variant` (its app checks the values at reset)."""
    config = {**instance.sandbox_config, "variant": variant.model_dump(mode="json")}
    return instance.model_copy(update={"sandbox_config": config})


def variants_of(instance: TaskInstance, k: int, *, hold_out: HoldOut | None = None,
                held: bool = False) -> list[TaskInstance]:
    """`k` seeded variants of `instance`, drawn across every axis its app supports (the
    first its default look); with `hold_out`, only those it does not hold (`held=False`: a
    train split) or only those it holds (`held=True`: the test split). An instance whose
    app has no variants is returned as it is, once (none when the hold-out wants held ones)."""
    axes = app_axes(instance)
    if axes is None:
        return [] if hold_out is not None and held else [instance]
    rng = random.Random(f"variants:{instance.task_id}:{instance.seed}")
    return [in_variant(instance, v) for v in draws(rng, axes, k, hold_out=hold_out, keep=held)]
