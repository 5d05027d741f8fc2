"""The bank and hr generators (issue 38 item 1): they cover the operations the brief names, every
template of every operation and scope loads and draws its params on seeds 0-5, oracles select
only by data attributes, role or label, judges allow exactly the changes they make, and judge QA
admits their templates and rejects a broken one."""

from __future__ import annotations

import copy
import re

import pytest

from cua.synth.admit import Candidate, admit, screen, suite_text
from cua.synth.generators import schema_for
from cua.synth.schema import generate

APPS = ("bank", "hr")


def test_bank_and_hr_cover_the_operations_of_the_brief() -> None:
    bank, hr = set(schema_for("bank").operations), set(schema_for("hr").operations)
    # find, create, edit, move, delete, bulk with a filter, compare, count, a sum, chains, a question at the end
    assert {"find:largest_payment", "payee:add", "scheduled:new", "scheduled:edit_amount", "transfer:savings",
            "tx:categorise", "scheduled:cancel", "card:report_lost", "bulk:categorise_merchant_month",
            "compare:merchants_month", "count:merchant_month", "sum:category_month", "payee:add+pay",
            "payee:add+pay+schedule", "card:limit+online+freeze", "transfer>ask:savings_balance",
            "transfer+pay+cancel>ask:checking_balance"} <= bank
    assert {"find:manager", "find:net_pay", "line:add", "report:new+line+submit", "line:category", "line:amount",
            "line:delete", "bulk:approve_under_limit", "compare:start_date", "count:team_office",
            "line:category+project", "line:amount+category+note", "line:amount+currency+category+project+note",
            "report:new+line+line+submit>ask:total", "line:currency>ask:report_total",
            "expense:approve+reject>ask:waiting", "time_off:request", "time_off:cancel"} <= hr
    for app in APPS:
        lengths = {len(re.split(r"[+>]", chain)) for chain in schema_for(app).operations}
        assert {1, 2, 3} <= lengths and max(lengths) >= 4, app


@pytest.mark.parametrize("app", APPS)
def test_same_seed_same_bytes_and_phrasings_vary(app: str) -> None:
    schema = schema_for(app)
    one = suite_text(schema.suite, [g.template for g in generate(schema, 40, seed=3)])
    assert one == suite_text(schema.suite, [g.template for g in generate(schema, 40, seed=3)])
    assert one != suite_text(schema.suite, [g.template for g in generate(schema, 40, seed=4)])
    said: dict[tuple[str, str], set[str]] = {}
    for g in generate(schema, 10_000):
        said.setdefault((g.chain, g.scope), set()).add(g.template["instruction"])
    assert all(len(texts) == 3 for texts in said.values()), [k for k, v in said.items() if len(v) != 3]


@pytest.mark.parametrize("app", APPS)
def test_oracles_select_by_data_role_or_label_never_class_position_or_ui_text(app: str) -> None:
    """Both apps have de-DE and three layouts: a class, a position or an English label breaks a variant."""
    for g in generate(schema_for(app), 10_000):
        for step in g.template["oracle"] + g.template["near_miss"]:
            (verb, target), = step.items()
            if verb in ("goto", "done"):
                continue
            if isinstance(target, dict):
                assert set(target) <= {"selector", "text", "option", "text_contains"}, step
                assert "text" not in target or verb == "fill", step
                assert "text_contains" not in target or "{" in target["text_contains"], step  # data, not UI text
                target = target["selector"]
            bare = re.sub(r"\[[^\]]*\]", "", re.sub(r"\{[^}]*\}", "", target))
            assert "." not in bare and ":nth" not in bare and ":first" not in bare, (g.chain, step)


@pytest.mark.parametrize("app", APPS)
def test_every_operation_and_scope_loads_and_draws_its_params_on_seeds_0_to_5(app: str) -> None:
    """One template per (operation, scope): each loads (format, completeness, the static checks: a change it
    allows that no check reads is refused) and instantiates on six app seeds, and no two judge alike."""
    schema = schema_for(app)
    picks: dict[tuple[str, str], Candidate] = {}
    for g in generate(schema, 10_000):
        picks.setdefault((g.chain, g.scope), Candidate(g.chain, g.template, g.scope, g.phrasing))
    outcomes, loaded = screen(schema.suite, list(picks.values()), seeds=range(6))
    assert [(c.generator, c.scope, o.rejection, o.reason) for c, o in zip(picks.values(), outcomes) if o] == []
    assert {c.generator for c in picks.values()} == set(schema.operations)
    assert len(loaded) == len(picks)


def test_a_line_chain_reads_the_whole_row_and_its_near_miss_stops_one_field_short() -> None:
    five = next(g.template for g in generate(schema_for("hr"), 10_000)
                if g.chain == "line:amount+currency+category+project+note")
    row = five["judge"]["checks"][0]["expect"]["rows"][0]
    assert row["amount_cents"] == "{new_amount.cents}" and row["currency"] == "{new_currency.v}"
    assert row["home_cents"] == "{h.home}"  # the dollars as the app converts them, at the new amount and rate
    assert row["day"] == "{l.day}" and row["merchant"] == "{l.merchant}"  # the rest of the line as it was
    assert five["judge"]["expected_changes"] == [
        "lines[id={l.id}].amount_cents", "lines[id={l.id}].home_cents", "lines[id={l.id}].currency",
        "lines[id={l.id}].category", "lines[id={l.id}].project", "lines[id={l.id}].note"]
    oracle, near = five["oracle"], five["near_miss"]
    assert near == [*oracle[:-3], *oracle[-2:]]  # the note left out, saved all the same
    assert oracle.count({"click": "[data-action=save-line]"}) == 1


def test_a_bank_transfer_is_judged_by_its_history_to_the_cent() -> None:
    """The app never deletes a transfer: "exactly one, completed, with no reference" also fails one sent twice,
    sent and a second left pending, or sent with a reference the task never gave."""
    t = next(g.template for g in generate(schema_for("bank"), 10_000) if g.chain == "transfer:savings")
    sent = t["judge"]["checks"][0]
    assert sent["get"]["query"].startswith("SELECT from_account_id") and "WHERE" not in sent["get"]["query"]
    assert sent["expect"]["rows"] == [{"from_account_id": 1, "to_account_id": 2, "payee_id": None,
                                       "amount_cents": "{amt.cents}", "status": "completed", "reference": ""}]
    assert t["near_miss"][3] == {"fill": {"selector": "input[data-field=amount]", "text": "{amt.wrong}"}}


@pytest.mark.slow  # judge QA: Chromium on three seeds per template
@pytest.mark.parametrize(("app", "good", "other"), [("bank", "scheduled:edit_amount+date", "find:largest_payment"),
                                                    ("hr", "line:category+project", "find:net_pay")])
def test_judge_qa_admits_generated_templates_and_rejects_a_broken_one(app: str, good: str, other: str) -> None:
    schema = schema_for(app)
    drawn = generate(schema, 10_000)
    chain = next(g for g in drawn if g.chain == good and g.scope == "any")
    lax = copy.deepcopy(next(g for g in drawn if g.chain == other and g.scope == "any").template)
    lax["near_miss"] = lax["oracle"]  # a "near miss" that does the task: its judge cannot tell them apart
    got = admit(schema.suite, [Candidate(good, chain.template, chain.scope, chain.phrasing), Candidate(other, lax)])
    assert [(o.admitted, o.rejection) for o in got.outcomes] == [(True, ""), (False, "near_miss")], got.outcomes


def test_judge_qa_findings_at_version_1_stay_fixed() -> None:
    """Version 1 (--count 20: bank admitted 16, hr 17): a second search on an account page clicked the
    overview's link, which that page lacks; the new payee's scheduled payment was judged with the id "9", a
    string no id equals; hr's deletion awaited the page it was already on, so the oracle could end before the
    delete landed (and a decision awaited the navigation's link, on every page); a new report's lines ran out
    of steps."""
    bank = {g.chain: g.template for g in generate(schema_for("bank"), 10_000)}
    for chain in ("compare:merchants_month", "bulk:categorise_merchant_month"):
        clicks = [s for s in bank[chain]["oracle"] if "click" in s and "data-account-id" in str(s["click"])]
        assert len(clicks) == 1, chain
    assert bank["bulk:categorise_merchant_month"]["max_steps"] >= 80  # version 2 ran out of 40
    scheduled = bank["payee:add+pay+schedule"]["judge"]["checks"][-1]["expect"]["rows"][0]
    assert scheduled["payee_id"] == 9
    hr = {g.chain: g.template for g in generate(schema_for("hr"), 10_000)}
    assert hr["line:delete"]["oracle"][-1] == {"wait_for": '[data-report-id="{l.rid}"][data-total-cents="{x.after}"]'}
    for chain in ("expense:approve", "expense:reject", "time_off:approve", "time_off:reject"):
        assert hr[chain]["oracle"][-1] == {"wait_for": "[data-approval]"}, chain
    assert hr["report:new+line+line+submit>ask:total"]["max_steps"] >= 90
    assert hr["line:add+submit"]["max_steps"] >= 50
