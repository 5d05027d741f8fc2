"""The generators, by app: each app's schema for the generator core (`cua.synth.schema`)."""

from __future__ import annotations

from cua.synth import bank_gen, contacts_gen, hr_gen, kanban_gen, mail_gen, notes_gen, shop_gen, todo_gen, workflow_gen
from cua.synth.schema import AppSchema

__all__ = ["GENERATORS", "schema_for"]

#: app -> its generator's schema
GENERATORS: dict[str, AppSchema] = {"todo": todo_gen.SCHEMA, "contacts": contacts_gen.SCHEMA,
                                    "notes": notes_gen.SCHEMA, "kanban": kanban_gen.SCHEMA,
                                    "workflow": workflow_gen.SCHEMA, "mail": mail_gen.SCHEMA,
                                    "shop": shop_gen.SCHEMA, "bank": bank_gen.SCHEMA,
                                    "hr": hr_gen.SCHEMA}


def schema_for(app: str) -> AppSchema:
    """The generator schema of `app` (one of GENERATORS)."""
    if app not in GENERATORS:
        raise ValueError(f"no generator for app {app!r}; one of {', '.join(GENERATORS)}")
    return GENERATORS[app]
