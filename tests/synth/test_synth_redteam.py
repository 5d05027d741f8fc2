"""Synthesised judges attacked as an outside prober would (issue 38, "done when" 3): a seeded
sample of generated templates, 3 per generator app, each judged by its own judge on end states
built by hand on the real app served in process (`_redteam`): the right change on a wrong
record, the right change plus an edit of another table of the app, do-then-undo and
erase-after-delete in the app's activity log, equivalent values (which must pass), hedged
answers and partial chains. Every verdict must be the right one; the counts of wrong verdicts
per class and app are in the assertion messages (`-s` prints the table).

A workflow's templates judge two apps at once: each query is answered by its service's app,
and the other-table, erase and irreversible attacks reach every app of the template. A template
whose checks ask for an end state the prober cannot build from them (an SQL check over several
tables, a whole-table check, an infeasible task) is not drawn; `test_the_sample_covers_*` keeps
the sample at 3 per app all the same. The same attacks on as many of each app's hand-written
templates give issue 38's comparison, and a judge weakened on purpose shows they have teeth.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Iterable
from functools import cache
from typing import Any

import pytest
from _redteam import Attack, Plan, attacks_for, changing, load, plan, run_attack, services

from cua.synth.generators import GENERATORS
from cua.synth.schema import generate
from cua.tasks.loader import YamlTemplate
from cua.tasks.registry import list_templates

APPS = sorted(GENERATORS)
CLASSES = ("right", "wrong_record", "other_table", "history", "equivalent", "hedged", "partial")
PER_APP = 3
SEED = 0
#: how far down the seeded order the sample looks for a chain, a question and an edit
SCAN = 120

pytestmark = pytest.mark.slow  # ~2 min of in-process requests on a loaded machine: over the fast lane's budget

Result = tuple[str, str, Attack, bool, str]  # (template id, chain, attack, passed, generator app)


def _sample(app: str, candidates: Iterable[tuple[str, Any]]) -> tuple[Result, ...]:
    """Every attack on PER_APP of the (chain, template) candidates, taken in their order among those the
    prober can build an end state for, the first chain, question and edit first (where there are such),
    so that each class of attack meets each kind of template."""
    first: dict[str, tuple[str, Any, Plan]] = {}
    rest: list[tuple[str, Any, Plan]] = []
    for chain, template in candidates:
        planned = plan(template, SEED)
        if planned is None:
            continue
        p = changing(services(template), template.instantiate(SEED), planned)
        if p is None:
            continue
        if p.kind in first:
            rest.append((chain, template, p))
        else:
            first[p.kind] = (chain, template, p)
        if len(first) == 3:
            break
    out: list[Result] = []
    for chain, template, p in ([*first.values(), *rest])[:PER_APP]:
        instance = template.instantiate(SEED)
        names = services(template)
        out += [(template.id, chain, a, run_attack(names, instance, a), app)
                for a in attacks_for(names, p, instance.reset_seed)]
    return tuple(out)


@cache
def _results(app: str) -> tuple[Result, ...]:
    """The attacks on the generator's sample, drawn in a seeded order."""
    schema = GENERATORS[app]
    drawn = generate(schema, 10_000, SEED)
    random.Random(f"redteam:{app}").shuffle(drawn)
    return _sample(app, ((g.chain, load(g, schema.suite)) for g in drawn[:SCAN]))


@cache
def _hand_written(app: str) -> tuple[Result, ...]:
    """The same attacks on the app's hand-written suite (workflow's: `workflows`), drawn in a seeded order."""
    suite = "workflows" if app == "workflow" else app
    templates = [t for t in list_templates(suite) if isinstance(t, YamlTemplate)
                 and t.raw.get("sandbox", {}).get("kind") == "browser"]
    random.Random(f"redteam:{suite}").shuffle(templates)
    return _sample(app, ((t.id.split(".", 1)[1].split("@")[0], t) for t in templates))


def _table(results: list[Result]) -> str:
    """wrong/total per class and app, one line per app, and each wrong verdict named."""
    lines = []
    for app in APPS:
        mine = [r for r in results if r[4] == app]
        if not mine:
            continue
        cells = []
        for cls in CLASSES:
            of = [r for r in mine if r[2].cls == cls]
            cells.append(f"{cls}={sum(r[3] != r[2].must_pass for r in of)}/{len(of)}")
        lines.append(f"{app}: " + " ".join(cells))
    lines += [f"WRONG {tid} ({chain}): {a.cls}: {a.name} -> {'passed' if passed else 'failed'}"
              for tid, chain, a, passed, _ in results if passed != a.must_pass]
    return "\n".join(lines)


def _all() -> list[Result]:
    return [r for app in APPS for r in _results(app)]


@pytest.mark.parametrize("app", APPS)
def test_the_sample_covers_three_templates_of_each_app(app: str) -> None:
    results = _results(app)
    assert len({r[0] for r in results}) == PER_APP, _table(list(results))
    assert {r[2].cls for r in results} >= {"right", "other_table", "history"}, _table(list(results))


@pytest.mark.parametrize("cls", CLASSES)
def test_no_wrong_verdict_of_the_class(cls: str) -> None:
    results = [r for r in _all() if r[2].cls == cls]
    wrong = [r for r in results if r[3] != r[2].must_pass]
    templates = {r[0] for r in results}
    assert results, f"no {cls} attack in the sample"
    assert not wrong, f"{cls}: wrong={len(wrong)} of {len(results)} attacks over {len(templates)} templates\n" + _table(
        results)


def test_wrong_verdicts_in_all() -> None:
    results = _all()
    wrong = sum(r[3] != r[2].must_pass for r in results)
    by_cls = Counter(r[2].cls for r in results)
    summary = (f"wrong={wrong} of {len(results)} attacks over {len({r[0] for r in results})} templates "
               f"({', '.join(f'{c}={by_cls[c]}' for c in CLASSES)})")
    print("\n" + summary + "\n" + _table(results))
    assert wrong == 0, summary + "\n" + _table(results)


def test_synthesised_judges_are_no_weaker_than_hand_written_ones() -> None:
    """Issue 38's bar: the same attacks on a sample of each app's hand-written templates find at least as
    large a share of wrong verdicts as on the synthesised sample."""
    synth, hand = _all(), [r for app in APPS for r in _hand_written(app)]
    rate = {name: (sum(r[3] != r[2].must_pass for r in rs), len(rs)) for name, rs in (("synth", synth), ("hand", hand))}
    print(f"\nsynthesised: wrong={rate['synth'][0]} of {rate['synth'][1]}; hand-written: wrong={rate['hand'][0]} of "
          f"{rate['hand'][1]} attacks over {len({r[0] for r in hand})} templates\n" + _table(hand))
    assert rate["synth"][0] * rate["hand"][1] <= rate["hand"][0] * rate["synth"][1], (rate, _table(hand))


def _weakened(chain: str, weaken: Any) -> tuple[Any, Any, dict[str, str], Plan]:
    """A contacts template of `chain` and a copy with its judge weakened by `weaken(judge)`: (the weak
    template's instance, the right plan, services, the plan): the attacks are the right template's."""
    schema = GENERATORS["contacts"]
    g = next(g for g in generate(schema, 10_000, SEED) if g.chain == chain and g.scope == "any")
    right = load(g, schema.suite)
    weak_dict = copy.deepcopy(g.template)
    weaken(weak_dict["judge"])
    weak = load(type(g)(g.chain, weak_dict, g.scope, g.phrasing), schema.suite)
    names = services(right)
    planned = plan(right, SEED)
    assert planned is not None
    p = changing(names, right.instantiate(SEED), planned)
    assert p is not None
    return weak.instantiate(SEED), right, names, p


def _no_side_effects(judge: dict[str, Any]) -> None:
    judge["side_effects"] = False  # the checks alone: no diff of the rest of the state, no history


def _equals_email(judge: dict[str, Any]) -> None:
    judge["checks"][0]["expect"]["op"] = "equals"  # the address compared as a string: its case counts


def _contains_answer(judge: dict[str, Any]) -> None:
    judge["checks"][0]["expect"]["op"] = "contains"  # any answer holding the value


@pytest.mark.parametrize(("chain", "weaken", "caught"), [
    ("edit:email", _no_side_effects, {"wrong_record", "other_table", "history"}),
    ("edit:email", _equals_email, {"equivalent"}),
    ("find:title", _contains_answer, {"hedged"}),
])
def test_the_prober_catches_a_weakened_judge(chain: str, weaken: Any, caught: set[str]) -> None:
    """The attacks have teeth: the same template with its judge weakened the way issue 29's classes name
    gets wrong verdicts of those classes, and only of those."""
    weak, _, names, p = _weakened(chain, weaken)
    wrong = {a.cls for a in attacks_for(names, p, weak.reset_seed) if run_attack(names, weak, a) != a.must_pass}
    assert wrong == caught
