"""Which sandbox config fields a kind takes, checked when a task loads; and running a
template on another kind (`cua eval --kind vm`, `cua tasks check --kind vm`).

The desktop and VM kinds read the same app list, files and screen, so a desktop task
runs on a VM unchanged; a field only one kind has (a container's `network`, a VM's
`memory_mb`) is refused when the file loads, by name, not when a sandbox is created.
"""

from __future__ import annotations

from typing import Any

from cua.task import TaskInstance, TaskTags
from cua.tasks.format import FormatProblem, TaskFormatError, TemplateSpec

__all__ = ["SWAPPABLE_KINDS", "KindOverride", "config_fields", "unsupported_fields", "with_kind"]

#: Kinds whose configs share a shape (apps, files, screen): a template of one runs on the other.
SWAPPABLE_KINDS = frozenset({"desktop", "vm"})
#: Accepted by the kinds' models under another name (see their `viewport` validators).
_ALIASES = {"viewport"}


def config_fields(kind: str) -> set[str] | None:
    """The config fields of a kind, from its config model; None when the kind is not
    one whose fields the loader checks (the browser kind, a kind not installed)."""
    if kind not in SWAPPABLE_KINDS:
        return None
    from cua.errors import CuaError
    from cua.sandbox import resolve_kind

    try:
        model = resolve_kind(kind).config_model
    except (CuaError, ImportError):
        return None
    return set(model.model_fields) | _ALIASES


def unsupported_fields(spec: TemplateSpec, kind: str | None = None) -> list[tuple[str, str]]:
    """(field path, reason) for every field of the template's sandbox setup that `kind`
    (default: the template's own) does not take."""
    kind = kind or spec.sandbox.kind
    fields = config_fields(kind)
    if fields is None:
        return []
    out: list[tuple[str, str]] = []
    for key in spec.sandbox.config:
        if key not in fields:
            reason = f"the {kind} kind has no config field {key!r}; it takes: {', '.join(sorted(fields))}"
            out.append((f"sandbox.config.{key}", reason))
    for name, present, target in (("sandbox.start_url", spec.sandbox.start_url, "start_url"),
                                  ("setup.start_url", spec.setup.start_url, "start_url"),
                                  ("sandbox.isolation", spec.sandbox.isolation, "isolation"),
                                  ("setup.files", spec.setup.files, "files")):
        if present and target not in fields:
            out.append((name, f"the {kind} kind does not support it (its config has no {target!r})"))
    return out


class KindOverride:
    """A template whose instances run on another sandbox kind (desktop <-> vm)."""

    def __init__(self, template: Any, kind: str) -> None:
        self.template = template
        self.kind = kind
        self.id: str = template.id
        self.tags: TaskTags = template.tags

    def __getattr__(self, name: str) -> Any:  # spec, file, suite, params: the template's own
        return getattr(self.template, name)

    def __repr__(self) -> str:
        return f"<{self.template!r} on kind {self.kind}>"

    def instantiate(self, seed: int) -> TaskInstance:
        instance: TaskInstance = self.template.instantiate(seed)
        return instance.model_copy(update={"sandbox_kind": self.kind})


def with_kind(template: Any, kind: str) -> Any:
    """`template` running on `kind`. Raises TaskFormatError naming the template and each
    field the kind does not take, or saying why the kinds cannot swap."""
    spec: TemplateSpec | None = getattr(template, "spec", None)
    own = spec.sandbox.kind if isinstance(spec, TemplateSpec) else None
    if own is None:
        probe = template.instantiate(0)
        own = probe.sandbox_kind
    if own == kind:
        return template
    file = str(getattr(template, "file", template.id))
    if {own, kind} - SWAPPABLE_KINDS:
        raise TaskFormatError([FormatProblem(file, f"{template.id}.sandbox.kind",
                                             f"a {own} task cannot run on the {kind} kind (only "
                                             f"{' and '.join(sorted(SWAPPABLE_KINDS))} swap)")])
    if isinstance(spec, TemplateSpec):
        problems = [FormatProblem(file, f"{template.id}.{field}", reason)
                    for field, reason in unsupported_fields(spec, kind)]
        if problems:
            raise TaskFormatError(problems)
    return KindOverride(template, kind)

