"""The generator core (issue 38) and the apps described for it: todo keeps its bytes, every
app's operations load and draw their params, chains check every step, and the diversity
report counts what was admitted."""

from __future__ import annotations

import copy
import hashlib

import pytest

from cua.synth import todo_gen
from cua.synth.admit import Admission, Candidate, Outcome, admit, screen, suite_text
from cua.synth.generators import GENERATORS, schema_for
from cua.synth.schema import generate
from cua.synth.ui_only import ui_problems
from cua.tasks_cli import register  # noqa: F401  (the CLI's --app choices are checked below)

#: todo_gen.generate(200, seed=5) as the module wrote it before the core (GENERATOR_VERSION 3)
TODO_V3_DIGEST = "76db9758e59d99f65bee6fbf97d8c9d6cf45122cde4b3362d9c99e815c19a6da"


def test_todo_writes_the_bytes_it_wrote_before_the_core() -> None:
    text = suite_text("synth_todo", [g.template for g in todo_gen.generate(200, seed=5)])
    assert hashlib.sha256(text.encode()).hexdigest() == TODO_V3_DIGEST


@pytest.mark.parametrize("app", sorted(GENERATORS))
def test_each_generator_is_reproducible_distinct_and_split_by_chain(app: str) -> None:
    schema = schema_for(app)
    drawn = generate(schema, 10_000, seed=1)
    assert suite_text(schema.suite, [g.template for g in drawn]) == suite_text(
        schema.suite, [g.template for g in generate(schema, 10_000, seed=1)])
    assert [g.template["id"] for g in generate(schema, 30, seed=2)] != [g.template["id"] for g in drawn[:30]]
    ids = [g.template["id"] for g in drawn]
    assert len(ids) == len(set(ids))
    assert {g.chain for g in drawn} == set(schema.operations)  # every operation has a scope it means something in
    assert len({(g.chain, g.scope, g.phrasing) for g in drawn}) == len(drawn)
    for g in drawn:
        assert g.template["tags"]["split"] == ("test" if g.chain in schema.test_chains else "train")
        assert g.template["tags"]["app"] == app
        assert g.template["sandbox"]["app"] == (g.template["tags"]["apps"][0] if app == "workflow" else app)


def test_a_chain_checks_every_step_and_its_near_miss_stops_one_short() -> None:
    schema = schema_for("contacts")
    five = next(g.template for g in generate(schema, 10_000) if g.chain == "edit:email+phone+title+status+company")
    checks = five["judge"]["checks"]
    assert len(checks) == 5 and all(c["get"]["kind"] == "sql" for c in checks)
    # a checkpoint per step that shows one (the status radio shows none), after the record is open
    assert len(five["judge"]["subgoals"]) == 1 + 4
    assert five["judge"]["expected_changes"] == [
        "contacts[id={c.id}].email", "contacts[id={c.id}].phone", "contacts[id={c.id}].title",
        "contacts[id={c.id}].status", "contacts[id={c.id}].company_id", "contacts[id={c.id}].company"]
    oracle, near = five["oracle"], five["near_miss"]
    assert near == [*oracle[:-3], *oracle[-2:]]  # the company select left out, saved all the same
    assert oracle.count({"click": "#save-contact"}) == 1  # one save of the whole form
    # a select of every company takes the agent many actions: the oracle ran out of 25 (judge QA, version 1)
    assert five["max_steps"] == 100
    assert next(g.template for g in generate(schema, 10_000) if g.chain == "edit:email+phone")["max_steps"] == 25
    # a field that commits by itself (notes' Move) saves the fields before it first
    notes = next(g.template for g in generate(schema_for("notes"), 10_000) if g.chain == "edit:title+folder")
    assert notes["oracle"][3:] == [{"fill": {"selector": "input.title-input", "text": "{new_title.v}"}},
                                   {"click": "#save"}, {"wait_for": ".flash"},
                                   {"select": {"selector": "#move-to", "option": "{new_folder.id}"}},
                                   {"click": {"selector": "button", "text": "Move"}}]
    assert notes["near_miss"] == notes["oracle"][:-2]


def test_the_cli_offers_every_generator() -> None:
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["tasks", "synth", "--app", "kanban", "--out", "x"])
    assert args.app == "kanban"
    with pytest.raises(SystemExit):
        parser.parse_args(["tasks", "synth", "--app", "nope", "--out", "x"])
    assert set(GENERATORS) == {"todo", "contacts", "notes", "kanban", "workflow"}


@pytest.mark.slow  # seeds three app databases per template: minutes on a loaded machine
@pytest.mark.parametrize("app", ["contacts", "notes", "kanban", "workflow"])
def test_every_operation_loads_and_draws_its_params(app: str) -> None:
    """One template per operation, in the first scope it has: each loads (format, completeness and the
    static checks) and instantiates on judge QA's seeds, and none judges what another does."""
    schema = schema_for(app)
    first: dict[str, Candidate] = {}
    for g in generate(schema, 10_000):
        if g.chain not in first and g.scope == "any":
            first[g.chain] = Candidate(g.chain, g.template, g.scope, g.phrasing)
    outcomes, to_check = screen(schema.suite, list(first.values()))
    assert [(c.generator, o.rejection, o.reason) for c, o in zip(first.values(), outcomes) if o] == []
    assert len(to_check) == len(schema.operations)


def test_the_diversity_report_counts_variants_and_signatures() -> None:
    gs = generate(schema_for("notes"), 6)
    cands = [Candidate(g.chain, g.template, g.scope, g.phrasing) for g in gs]
    got = Admission([Outcome(cands[0], True, signature="a"), Outcome(cands[1], True, signature="a"),
                     Outcome(cands[2], True, signature="b"), Outcome(cands[3], False, "near_miss", "", "c"),
                     Outcome(cands[4], False, "duplicate", "", "b"), Outcome(cands[5], False, "load", "")])
    lines = got.summary_lines()
    diversity = next(line for line in lines if line.startswith("diversity: "))
    assert "admitted=3 " in diversity and "distinct_chain_scope_phrasing=3" in diversity
    assert "distinct_signatures=2" in diversity
    assert any(line.startswith("diversity by app: notes=3") for line in lines)
    assert any(line.startswith("rejected near_miss: 1") for line in lines)


def test_a_cross_app_chain_reads_each_app_and_allows_each_its_changes() -> None:
    drawn = generate(schema_for("workflow"), 10_000)
    t = next(g.template for g in drawn if g.chain == "contacts.edit:title>notes.pin")
    assert t["sandbox"] == {"kind": "browser", "app": "contacts", "apps": ["notes"]}
    assert t["oracle"][0] == {"goto": "app:contacts/contacts"} and {"goto": "app:notes/"} in t["oracle"]
    assert t["near_miss"][:t["oracle"].index({"goto": "app:notes/"}) + 1] == t["oracle"][:t["oracle"].index(
        {"goto": "app:notes/"}) + 1]  # the first app's operation done, the second's missed
    judge = t["judge"]
    assert judge["checkpoints"] is True
    assert judge["expected_changes"] == ["contacts[id={c.id}].title"]
    assert judge["apps"] == {"notes": {"expected_changes": ["notes[id={notes_note.id}].pinned"]}}
    pinned = judge["checks"][-1]
    assert pinned["get"] == {"kind": "app_state", "path": "notes[id={notes_note.id}].pinned", "service": "notes"}
    assert t["params"]["notes_note"]["app"] == "notes" and "app" not in t["params"]["c"]
    assert "{notes_note.title}" in t["instruction"] and "{c.name}" in t["instruction"]
    assert {g.template["tags"]["split"] for g in drawn if g.chain.startswith("kanban.")} == {"test"}


def test_an_oracle_may_reach_a_workflow_app_by_name_but_no_other_origin() -> None:
    base = {"oracle": [{"goto": "app:notes/folders/1"}, {"goto": "/contacts"}], "near_miss": []}
    assert ui_problems(base) == []
    for target in ("app:notes//evil.example/x", "javascript:fetch('/x')", "//evil.example/", "app:notes",
                   "https://evil.example/"):
        assert ui_problems({"oracle": [{"goto": target}]}), target


def test_a_move_to_another_column_judges_the_place_it_names() -> None:
    """Version 1 left the moved card's place unjudged: a card alone in its new column could sit at
    position 1 and pass (judge QA's collateral probe). The instruction names the top; the judge reads it."""
    t = next(g.template for g in generate(schema_for("kanban"), 10_000) if g.chain == "edit:column")
    assert "top" in t["instruction"]
    assert "unjudged" not in t["judge"]
    assert t["judge"]["checks"][0]["expect"] == {"op": "equals", "value": "{new_column.id}:0"}
    assert "position" in t["judge"]["checks"][0]["get"]["query"]


@pytest.mark.slow
@pytest.mark.parametrize(("app", "good", "other"), [("contacts", "edit:email+status", "edit:phone"),
                                                    ("notes", "edit:title+folder", "pin"),
                                                    ("kanban", "edit:title+due", "edit:due")])
def test_judge_qa_admits_a_generated_chain_and_refuses_a_near_miss_that_passes(app: str, good: str,
                                                                               other: str) -> None:
    schema = schema_for(app)
    drawn = generate(schema, 10_000)
    chain = next(g for g in drawn if g.chain == good and g.scope == "any")
    lax = copy.deepcopy(next(g for g in drawn if g.chain == other and g.scope == "any").template)
    lax["near_miss"] = lax["oracle"]  # a "near miss" that does the task: its judge cannot tell them apart
    got = admit(schema.suite, [Candidate(good, chain.template, chain.scope, chain.phrasing), Candidate(other, lax)])
    assert [(o.admitted, o.rejection) for o in got.outcomes] == [(True, ""), (False, "near_miss")], got.outcomes
