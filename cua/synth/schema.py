"""The generator core: templates composed from a small description of an app.

An app's generator is data: its *entities* (a table, the SQL that draws a record, the UI
steps that open it, save it and delete it), their *fields* (the values a field may take,
the UI steps that set one, the typed check that reads it back) and its *scopes* (filters
on the records a template draws, so two templates of one operation still judge different
rows). From that, this module builds the operations every app shares -- find a field,
edit one, edit several in one save (a chain with a checkpoint per field), delete a record
and an edit that ends with a question about the record (`ask_chains`) -- each with several
phrasings, exact `expected_changes`, an oracle through the UI and a near miss; an app adds its
own operations (count, move, bulk) as plain builders.

`generate(schema, count, seed)` is deterministic: the same schema version and seed give the
same templates in the same order (`todo_gen` keeps the bytes it produced before this core).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

__all__ = ["AppSchema", "Entity", "Field", "Generated", "Operation", "ask_after_op", "build", "chain_ops", "delete_op",
           "edit_op", "find_op", "generate", "select_subgoal", "values_sql"]

#: A builder: the template's body (phrasings, params, judge, oracle, near_miss, tags) for one scope's SQL,
#: or None where the scope means nothing to the operation (it would judge what the unscoped one does).
Operation = Callable[[str], dict[str, Any] | None]
Step = dict[str, Any]


@dataclass(frozen=True)
class Generated:
    """One generated template: the chain it composes (its generator), its scope and phrasing, and its dict."""

    chain: str
    template: dict[str, Any]
    scope: str = ""
    phrasing: int = 0


@dataclass(frozen=True)
class AppSchema:
    """What a generator needs of an app: its operations and the scopes they are drawn in."""

    app: str
    suite: str
    version: int
    #: (name, SQL fragment ANDed into the record's WHERE clause)
    scopes: tuple[tuple[str, str], ...]
    operations: Mapping[str, Operation]
    #: chains held out of training: the test split holds compositions never trained on
    test_chains: frozenset[str]
    start_url: str = "/"
    max_steps: int = 25
    phrasings: int = 3


def build(schema: AppSchema, chain: str, scope_name: str, scope: str, phrasing: int) -> dict[str, Any]:
    """One template of `chain` in one scope and phrasing (its id digests the three and the version)."""
    op = schema.operations[chain](scope)
    if op is None:
        raise ValueError(f"{chain} has no template in scope {scope_name}")
    phrasings: list[str] = op.pop("phrasings")
    key = json.dumps([schema.version, chain, scope_name, phrasing], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:8]
    tags = {**op.pop("tags"), "app": schema.app, "split": "test" if chain in schema.test_chains else "train"}
    name = re.sub(r"[^A-Za-z0-9_]", "_", chain)
    out: dict[str, Any] = {"id": f"{schema.suite}.{name}_{digest}@1",
                           "instruction": phrasings[phrasing % len(phrasings)],
                           "sandbox": {"kind": "browser", "app": schema.app, "start_url": schema.start_url},
                           "max_steps": schema.max_steps}
    out.update(op)
    out["tags"] = tags
    return out


def generate(schema: AppSchema, count: int, seed: int = 0) -> list[Generated]:
    """`count` distinct (chain, scope, phrasing) picks, drawn in a seeded order."""
    combos = [(chain, s_name, s_sql, p) for chain, op in schema.operations.items() for s_name, s_sql in schema.scopes
              if op(s_sql) is not None for p in range(schema.phrasings)]
    random.Random(f"{schema.version}:{seed}").shuffle(combos)
    return [Generated(c, build(schema, c, n, s, p), n, p) for c, n, s, p in combos[:count]]


# --- the description of an app's records ------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """A field of an entity: the values it may take, how the UI sets it, how the judge reads it.

    `values_sql` selects the candidate values (a column `v`, and `key` when it is not `v`)
    with `{not_in}` where the excluded keys go: the record's current value, and for the near
    miss the new value too. `set_steps(p)` sets the field to the row param `p`; `expect(p)`
    is the typed expectation of the stored value, `read` the SQL that reads it (one `?`: the
    record's id). `changes` are the paths a change of it makes (derived ones included).
    """

    name: str
    words: str
    current: str
    values_sql: str
    set_steps: Callable[[str], list[Step]]
    read: str
    expect: Callable[[str], dict[str, Any]]
    changes: tuple[str, ...]
    key: str = "v"
    #: a DOM checkpoint that the field holds the new value before it is saved (a subgoal), or None
    checkpoint: Callable[[str], dict[str, Any]] | None = None
    #: the record's column an answer about this field is read from (None: not asked)
    shown: str | None = None
    answer_op: str = "text"
    #: commits by itself (a Move button): needs no save of the record after it
    commits: bool = False
    #: params of `values_sql` before the excluded keys (a column of the record's own board)
    extra_params: tuple[str, ...] = ()
    #: a change of it moves other records (renumbers a column): the entity's guard checks they stay in order
    guarded: bool = False
    #: (expected change, why no check reads it)
    unjudged: tuple[tuple[str, str], ...] = ()
    #: an edit's own phrasings ({label}, {Label}, {value}), where "change the <words> to" says too little
    phrasings: tuple[str, ...] = ()
    #: the agent's actions its steps take beyond a click or a fill (a select of a long list scrolls and
    #: types): added to the template's max_steps
    extra_steps: int = 0


@dataclass(frozen=True)
class Entity:
    """A record kind: how a template draws one, names it, opens it, saves it and deletes it.

    `rows_sql` draws the record with `{where}` where the scope and the operation's filters go
    (its alias is the scope's); `param` is its param name, `label` how an instruction names
    it; `alias` is the table's alias in `rows_sql`. `open` opens the record's page or dialog; `path` is the regex of its URL path.
    """

    name: str
    param: str
    table: str
    alias: str
    rows_sql: str
    label: str
    open: tuple[Step, ...]
    save: tuple[Step, ...]
    #: steps from the open record to its edit form (none where it opens editable)
    edit: tuple[Step, ...] = ()
    path: str | None = None
    fields: tuple[Field, ...] = ()
    delete: tuple[Step, ...] = ()
    cancel_delete: tuple[Step, ...] = ()
    delete_changes: tuple[str, ...] = ()
    skills: tuple[str, ...] = ("search", "form")
    #: params and checks that every other record stays as it was, where a deletion or a guarded field's
    #: change renumbers them (a kanban column's positions)
    guard_params: tuple[tuple[str, dict[str, Any]], ...] = ()
    guard_checks: tuple[dict[str, Any], ...] = ()

    def rows(self, scope: str, extra: str = "", params: Sequence[str] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "rows", "sql": self.rows_sql.replace("{where}", f"{extra} {scope}".strip())}
        if params:
            out["params"] = list(params)
        return out

    def ref(self, column: str) -> str:
        return "{" + f"{self.param}.{column}" + "}"


def values_sql(values: Sequence[str]) -> str:
    """Candidate values for a field from a fixed list (column `v`), `{not_in}` left for the exclusions."""
    rows = ", ".join("(" + "'" + v.replace("'", "''") + "')" for v in values)
    return f"SELECT column1 AS v FROM (VALUES {rows}) WHERE column1 NOT IN ({{not_in}}) ORDER BY column1"


def select_subgoal(selector: str, value: str) -> dict[str, Any]:
    """A select's checkpoint: its value or its shown option is `value`."""
    return {"any": [
        {"check": f"{selector} is {value}", "get": {"kind": "dom", "selector": selector, "prop": "value"},
         "expect": {"op": "text", "value": value}},
        {"check": f"{selector} shows {value}", "get": {"kind": "dom", "selector": f"{selector} option:checked"},
         "expect": {"op": "text", "value": value}}]}


def _value_params(f: Field, entity: Entity, near: bool) -> dict[str, Any]:
    new, wrong = f"new_{f.name}", f"wrong_{f.name}"
    current = entity.ref(f.current)
    out: dict[str, Any] = {new: {"type": "rows", "sql": f.values_sql.replace("{not_in}", "?"),
                                 "params": [*f.extra_params, current]}}
    if near:
        out[wrong] = {"type": "rows", "sql": f.values_sql.replace("{not_in}", "?, ?"),
                      "params": [*f.extra_params, current, "{" + f"{new}.{f.key}" + "}"]}
    return out


def _check(f: Field, entity: Entity, p: str) -> dict[str, Any]:
    return {"check": f"the {f.words} is the new one",
            "get": {"kind": "sql", "query": f.read, "params": [entity.ref("id")], "scalar": True},
            "expect": f.expect(p)}


def _opened(entity: Entity) -> list[dict[str, Any]]:
    if entity.path is None:
        return []
    return [{"check": "the record is open", "get": {"kind": "url", "part": "path"},
             "expect": {"op": "regex", "pattern": entity.path}}]


def _set(fields: Sequence[Field], entity: Entity, names: Sequence[str]) -> list[Step]:
    """Steps that set each field to its param, saving the record after fields that do not commit themselves."""
    steps: list[Step] = []
    pending = False
    for f, p in zip(fields, names):
        if f.commits and pending:
            steps += entity.save
            pending = False
        steps += f.set_steps(p)
        pending = not f.commits
    if pending:
        steps += entity.save
    return steps


def _words(f: Field) -> str:
    return "{" + f"new_{f.name}.v" + "}"


_EDIT_SAYS = ('Change the {words} of {label} to "{value}".', 'Set the {words} of {label} to "{value}".',
              '{Label} needs a new {words}: make it "{value}".')


def edit_op(entity: Entity, f: Field, phrasings: Sequence[str] = ()) -> Operation:
    """Change one field of one record; the near miss sets it to another value."""
    says = list(phrasings) or list(_EDIT_SAYS)

    def op(scope: str) -> dict[str, Any]:
        p = f"new_{f.name}"
        subgoals = _opened(entity) + ([f.checkpoint(p)] if f.checkpoint else [])
        return {
            "phrasings": [_say(s, entity, f.words, _words(f)) for s in says],
            "params": {entity.param: entity.rows(scope), **_value_params(f, entity, near=True), **_guard(entity, [f])},
            "judge": _judge(entity, [f], subgoals, [_check(f, entity, p)]),
            "oracle": [*entity.open, *entity.edit, *_set([f], entity, [p])],
            "near_miss": [*entity.open, *entity.edit, *_set([f], entity, [f"wrong_{f.name}"])],
            "tags": {"skills": [*entity.skills], "tier": 3},
            **_budget([f]),
        }
    return op


def chain_op(entity: Entity, fields: Sequence[Field]) -> Operation:
    """A chain of 2 to 5 edits of one record, each checked, with a checkpoint per step; the near miss
    does every step but the last."""
    if not 2 <= len(fields) <= 5:
        raise ValueError("a chain holds 2 to 5 operations")

    def op(scope: str) -> dict[str, Any]:
        names = [f"new_{f.name}" for f in fields]
        parts = [f'its {f.words} to "{_words(f)}"' for f in fields]
        listed = ", ".join(parts[:-1]) + " and " + parts[-1]
        params: dict[str, Any] = {entity.param: entity.rows(scope)}
        for f in fields:
            params.update(_value_params(f, entity, near=False))
        params.update(_guard(entity, fields))
        subgoals = _opened(entity) + [f.checkpoint(p) for f, p in zip(fields, names) if f.checkpoint]
        return {
            "phrasings": [_say(f"Update {{label}}: set {listed}.", entity, "", ""),
                          _say(f"For {{label}}, change {listed}.", entity, "", ""),
                          _say(f"{{Label}} needs editing. Set {listed}, then save.", entity, "", "")],
            "params": params,
            "judge": _judge(entity, fields, subgoals, [_check(f, entity, p) for f, p in zip(fields, names)]),
            "oracle": [*entity.open, *entity.edit, *_set(fields, entity, names)],
            "near_miss": [*entity.open, *entity.edit, *_set(fields[:-1], entity, names[:-1])],
            "tags": {"skills": [*entity.skills, "multi_step"], "tier": min(4, 2 + len(fields))},
            **_budget(fields),
        }
    return op


def chain_ops(entity: Entity, fields: Sequence[Field], sizes: Sequence[int] = (2, 3)) -> dict[str, Operation]:
    """Every chain of the given sizes over `fields` (in their order), named edit:a+b."""
    return {"edit:" + "+".join(f.name for f in combo): chain_op(entity, combo)
            for n in sizes for combo in combinations(fields, n)}


def find_op(entity: Entity, f: Field) -> Operation:
    """A question: the field's value of one record; the near miss answers another record's."""
    if f.shown is None:
        raise ValueError(f"{f.name} is not shown")
    shown = f.shown

    def op(scope: str) -> dict[str, Any]:
        p = entity.param
        return {
            "phrasings": [_say("What is the {words} of {label}? Answer with just the value.", entity, f.words, ""),
                          _say("Look up {label} and tell me the {words}.", entity, f.words, ""),
                          _say("Find the {words} of {label}; reply with it and nothing else.", entity, f.words, "")],
            "params": {p: entity.rows(scope, f"AND {entity.alias}.{f.current} IS NOT NULL "
                                             f"AND {entity.alias}.{f.current} != ''"),
                       "other": {"type": "rows", "sql": "SELECT * FROM (" + entity.rows_sql.replace(
                           "{where}", f"AND {entity.alias}.id != ?") + f") WHERE {shown} != ?",
                                 "params": [entity.ref("id"), entity.ref(shown)]}},
            "judge": {"subgoals": _opened(entity),
                      "checks": [{"check": f"the answer is the {f.words}", "get": {"kind": "answer"},
                                  "expect": {"op": f.answer_op, "value": entity.ref(shown)}}]},
            "oracle": [*entity.open, {"done": {"answer": entity.ref(shown)}}],
            "near_miss": [*entity.open, {"done": {"answer": "{other." + shown + "}"}}],
            "tags": {"skills": [*entity.skills[:1], "read", "answer"], "tier": 2},
        }
    return op


def ask_after_op(entity: Entity, f: Field, ask: Field) -> Operation:
    """A chain that ends with a question read from state: change one field of a record, then answer
    another field of it (as it was: the edit leaves it alone). The near miss makes the edit and answers
    another record's value."""
    if ask.shown is None or ask.name == f.name:
        raise ValueError(f"{ask.name} cannot be asked after an edit of {f.name}")
    shown = ask.shown

    def op(scope: str) -> dict[str, Any]:
        p = f"new_{f.name}"
        ask_cond = f"AND {entity.alias}.{ask.current} IS NOT NULL AND {entity.alias}.{ask.current} != ''"
        then = (f" Then tell me its {ask.words}, with nothing else in the answer.",
                f" After that, reply with the {ask.words} of it alone.",
                f" Once saved, answer with its {ask.words} only.")
        says = f.phrasings or _EDIT_SAYS
        return {
            "phrasings": [_say(s, entity, f.words, _words(f)) + t for s, t in zip(says, then)],
            "params": {entity.param: entity.rows(scope, ask_cond), **_value_params(f, entity, near=False),
                       "other": {"type": "rows", "sql": "SELECT * FROM (" + entity.rows_sql.replace(
                           "{where}", f"AND {entity.alias}.id != ?") + f") WHERE {shown} != ?",
                                 "params": [entity.ref("id"), entity.ref(shown)]},
                       **_guard(entity, [f])},
            "judge": _judge(entity, [f], _opened(entity) + ([f.checkpoint(p)] if f.checkpoint else []),
                            [_check(f, entity, p),
                             {"check": f"the answer is the {ask.words}", "get": {"kind": "answer"},
                              "expect": {"op": ask.answer_op, "value": entity.ref(shown)}}]),
            "oracle": [*entity.open, *entity.edit, *_set([f], entity, [p]), {"done": {"answer": entity.ref(shown)}}],
            "near_miss": [*entity.open, *entity.edit, *_set([f], entity, [p]),
                          {"done": {"answer": "{other." + shown + "}"}}],
            "tags": {"skills": [*entity.skills, "read", "answer", "multi_step"], "tier": 3},
            **_budget([f]),
        }
    return op


def delete_op(entity: Entity) -> Operation:
    """Delete one record through its confirmation; the near miss backs out of it."""
    def op(scope: str) -> dict[str, Any]:
        return {
            "phrasings": [_say("Delete {label}. Do not delete or change anything else.", entity, "", ""),
                          _say("Remove {label} for good, and only that one.", entity, "", ""),
                          _say("{Label} is no longer needed: delete it.", entity, "", "")],
            "params": {entity.param: entity.rows(scope), **dict(entity.guard_params)},
            "judge": {"subgoals": _opened(entity),
                      "checks": [{"check": f"the {entity.name} is gone",
                                  "get": {"kind": "app_state", "path": f"{entity.table}[id={entity.ref('id')}]"},
                                  "expect": {"op": "absent"}}, *entity.guard_checks],
                      "expected_changes": [f"{entity.table}[id={entity.ref('id')}]", *entity.delete_changes]},
            "oracle": [*entity.open, *entity.delete],
            "near_miss": [*entity.open, *entity.cancel_delete],
            "tags": {"skills": [*entity.skills[:1], "modal", "safety"], "tier": 3},
        }
    return op


def _budget(fields: Sequence[Field], base: int = 25) -> dict[str, Any]:
    """A max_steps over the default where a field's steps take many actions (none otherwise: the schema's)."""
    extra = sum(f.extra_steps for f in fields)
    return {"max_steps": base + extra} if extra else {}


def _guard(entity: Entity, fields: Sequence[Field]) -> dict[str, Any]:
    return dict(entity.guard_params) if any(f.guarded for f in fields) else {}


def _judge(entity: Entity, fields: Sequence[Field], subgoals: list[dict[str, Any]],
           checks: list[dict[str, Any]]) -> dict[str, Any]:
    """An edit's judge: its checks (and the guard's, for a guarded field), its exact changes, what goes unjudged."""
    guarded = any(f.guarded for f in fields)
    out: dict[str, Any] = {"subgoals": subgoals, "checks": [*checks, *(entity.guard_checks if guarded else ())],
                           "expected_changes": _changes(entity, fields)}
    unjudged = {path.replace("{id}", entity.ref("id")): why for f in fields for path, why in f.unjudged}
    if unjudged:
        out["unjudged"] = unjudged
    return out


def _changes(entity: Entity, fields: Sequence[Field]) -> list[str]:
    out: list[str] = []
    for f in fields:
        out += [c for c in f.changes if c not in out]
    return [c.replace("{id}", entity.ref("id")) for c in out]


def _say(text: str, entity: Entity, words: str, value: str) -> str:
    label = entity.label
    return (text.replace("{Label}", label[:1].upper() + label[1:]).replace("{label}", label)
            .replace("{words}", words).replace("{value}", value))


@dataclass(frozen=True)
class Description:
    """An app's description, composed into a schema: entities, their fields, scopes and app operations."""

    app: str
    version: int
    scopes: tuple[tuple[str, str], ...]
    entities: tuple[Entity, ...]
    extra: Mapping[str, Operation] = field(default_factory=dict)
    test_chains: frozenset[str] = frozenset()
    start_url: str = "/"
    max_steps: int = 25
    chain_sizes: tuple[int, ...] = (2, 3)
    #: the fields chained (None: all), in their order
    chain_fields: tuple[str, ...] | None = None
    #: chains that end with a question: (the field edited, the field asked after it), named edit:F>ask:G
    ask_chains: tuple[tuple[str, str], ...] = ()

    def schema(self) -> AppSchema:
        ops: dict[str, Operation] = {}
        for e in self.entities:
            for f in e.fields:
                if f.shown is not None:
                    ops[f"find:{f.name}"] = find_op(e, f)
                ops[f"edit:{f.name}"] = edit_op(e, f, f.phrasings)
            chained = [f for f in e.fields if self.chain_fields is None or f.name in self.chain_fields]
            ops.update(chain_ops(e, chained, [n for n in self.chain_sizes if n <= len(chained)]))
            by_name = {f.name: f for f in e.fields}
            for edited, asked in self.ask_chains:
                if edited in by_name and asked in by_name:
                    ops[f"edit:{edited}>ask:{asked}"] = ask_after_op(e, by_name[edited], by_name[asked])
            if e.delete:
                ops["delete"] = delete_op(e)
        ops.update(self.extra)
        return AppSchema(self.app, f"synth_{self.app}", self.version, self.scopes, ops, self.test_chains,
                         self.start_url, self.max_steps)
