"""The adversarial half of judge QA: what `cua tasks check` proves beyond "the oracle
passes and doing nothing fails".

- Along the oracle (`StepJudgingOracle`): after every action the judge is asked again.
  Every strict prefix whose judged state differs from the end must fail (an agent that
  stops half way is not done), and progress must never fall; a tier-3+ template must show
  at least 3 distinct progress values (its dense reward says something before the end).
- From the oracle's end state (`run_probes`): over-reach, wrong target, collateral,
  duplicate (each must fail) and an equivalent, differently written end state (must
  pass), built by `cua.qa.probes` from the database rows the oracle changed; and the
  answer instead of the method: every formula the oracle wrote replaced by the value it
  computes (must fail: the instruction asked for the formula).
- Method against answer (`method_probes`): a judge reads the end state, not how it was
  reached, so the oracle's end state with another path to it (one step, another `done`)
  must pass; and an answer typed where an action was asked must fail: the untouched
  state with the instruction parroted as the answer, and, for a task that asks for an
  action and an answer, the untouched state with the oracle's own correct answer.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from cua.actions import Done
from cua.episode import AgentTurn, EpisodeContext, OracleAgent, gather_state
from cua.judges.sidefx import allowed_by, diff
from cua.observation import Observation
from cua.qa import probes as P
from cua.qa.probe_equivalent import typed_probes
from cua.state import AppStateQuery, StateResult
from cua.task import JudgeInput, TaskInstance, Verdict, query_key

__all__ = ["METHOD_MUST_FAIL", "METHOD_MUST_PASS", "ProbeOutcome", "ProgressTrace", "StepJudgingOracle", "db_image",
           "method_probes", "run_probes", "trace_problems"]

#: Method-against-answer probes a correct judge fails / passes.
METHOD_MUST_FAIL = ("typed_answer",)
METHOD_MUST_PASS = ("other_path",)

#: Tier 3 and up: the oracle must show at least this many distinct progress values.
MIN_PROGRESS_VALUES = 3


def _fingerprint(states: dict[str, StateResult]) -> str:
    return json.dumps({k: v.model_dump(mode="json") for k, v in sorted(states.items())}, sort_keys=True, default=str)


@dataclass
class ProgressTrace:
    """The judge's verdict after each oracle action (index = actions done)."""

    verdicts: list[Verdict] = field(default_factory=list)
    fingerprints: list[str] = field(default_factory=list)


class StepJudgingOracle:
    """The oracle, judged again before each of its actions (so after every one)."""

    name = "oracle"

    def __init__(self) -> None:
        self._inner = OracleAgent("oracle")
        self.trace = ProgressTrace()
        self._instance: TaskInstance | None = None
        self._ctx: EpisodeContext | None = None
        self._initial: dict[str, StateResult] = {}

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._instance, self._ctx = instance, ctx
        self._initial = await gather_state(ctx.handle, instance.judge.queries())
        await self._inner.begin(instance, ctx)

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._instance is not None and self._ctx is not None
        final = await gather_state(self._ctx.handle, self._instance.judge.queries())
        steps = len(self.trace.verdicts)
        self.trace.verdicts.append(self._instance.judge.evaluate(
            JudgeInput(initial=self._initial, final=final, done=None, steps=steps)))
        self.trace.fingerprints.append(_fingerprint(final))
        return await self._inner.turn(observation)


def trace_problems(trace: ProgressTrace, final: Verdict, final_states: dict[str, StateResult],
                   tier: int) -> list[tuple[str, str, Verdict | None]]:
    """(stage, reason, verdict) for every prefix that passes and every fall of progress."""
    out: list[tuple[str, str, Verdict | None]] = []
    end = _fingerprint(final_states)
    # the last judged turn saw the end state (the oracle had nothing more, or only `done`)
    for k, (verdict, fp) in enumerate(zip(trace.verdicts, trace.fingerprints)):
        if k > 0 and verdict.passed and fp != end:
            out.append(("prefix", f"the oracle's first {k} action(s) already pass (the state differs from its end)",
                        verdict))
            break
    values = [v.progress for v in trace.verdicts] + [final.progress]
    for k in range(1, len(values)):
        if values[k] + 1e-9 < values[k - 1]:
            out.append(("progress", f"progress falls from {values[k - 1]:.3g} to {values[k]:.3g} after action {k}", None))
            break
    distinct = sorted({round(v, 6) for v in values})
    if tier >= 3 and len(distinct) < MIN_PROGRESS_VALUES:
        out.append(("progress", f"tier {tier}: progress along the oracle takes {len(distinct)} value(s) "
                                f"{distinct}, fewer than {MIN_PROGRESS_VALUES} (declare subgoals)", None))
    return out


# ---------------------------------------------------------------- probes

_apps: dict[str, tuple[Any, list[P.TableInfo]]] = {}


def _app(name: str) -> tuple[Any, list[P.TableInfo]]:
    """One in-process instance per bundled app (probes are evaluated without awaiting,
    so concurrent checks never interleave on it)."""
    if name not in _apps:
        from cua.tasks.apps import load_app

        app = load_app(name)
        _apps[name] = (app, P.table_infos(app.db.conn, type(app).assigned))
    return _apps[name]


async def db_image(handle: Any, app_name: str, service: str = "app") -> P.DbImage:
    """Every row of the live app's database (the sandbox's `service`), through its
    read-only SQL endpoint."""
    _, infos = _app(app_name)
    counts = []
    for result in await handle.query(P.count_queries(infos, service)):
        if not result.ok or not result.value:
            raise ValueError(f"the database could not be read: {result.error}: {result.message}")
        counts.append(int(result.value[0]["n"]))
    pages = P.dump_queries(infos, service, counts=counts)
    results = await handle.query([q for _, q in pages])
    return P.DbImage.from_results(infos, results, [i for i, _ in pages])


@dataclass
class ProbeOutcome:
    #: kind -> how many probes of it ran.
    ran: dict[str, int] = field(default_factory=dict)
    #: kind -> why none ran.
    skipped: dict[str, str] = field(default_factory=dict)
    #: (kind, reason, verdict) of every probe the judge got wrong.
    wrong: list[tuple[str, str, Verdict | None]] = field(default_factory=list)


def _mirrored_keys(instance: TaskInstance, service: str) -> list[str]:
    from cua.task import query_key

    return [query_key(q) for q in P.ProbeMirror.mirrored(instance.judge.queries(), service)]


def run_probes(instance: TaskInstance, app_name: str, initial_db: P.DbImage, final_db: P.DbImage,
               judge_input: JudgeInput, service: str = "app") -> ProbeOutcome:
    """Judge every probe end state of one oracle run on the app of the sandbox's `service`
    (in process: milliseconds each); the other services' reads keep the oracle's values,
    so a workflow's apps are attacked one at a time."""
    outcome = ProbeOutcome()
    app, infos = _app(app_name)
    mirror = P.ProbeMirror(app, infos, service)
    queries = instance.judge.queries()
    keys = _mirrored_keys(instance, service)
    if not keys:
        reason = f"the judge reads no state of service {service!r} (only the page or the answer)"
        outcome.skipped = {k: reason for k in (*P.MUST_FAIL, "equivalent", "schema_mutation")}
        return outcome
    oracle_final = judge_input.final
    mirror.load(final_db)
    seen = mirror.answer(queries, oracle_final)
    for key in keys:
        if _fingerprint({key: seen[key]}) != _fingerprint({key: oracle_final[key]}):
            outcome.wrong.append(("probe_mirror", f"the in-process copy of app {app_name!r} answers {key} "
                                                  "differently from the live app", None))
            return outcome
    diff_db = P.DbDiff.between(initial_db, final_db)
    spec = _allowances(instance, service)
    probes, why = P.generate_probes(infos, initial_db, final_db, diff_db, seed=instance.seed,
                                    free=list(getattr(spec, "free_fields", []) or []))
    state_key = next((query_key(q) for q in P.ProbeMirror.mirrored(queries, service)
                      if isinstance(q, AppStateQuery)), None)
    computed = P.computed_values(app.state())
    probes += P.answer_for_method(infos, diff_db, computed)
    if not any(p.kind == "answer_for_method" for p in probes):
        why["answer_for_method"] = "the oracle writes no formula (nothing computed that could be typed instead)"
    outcome.skipped.update(why)
    incidental = list(getattr(spec, "incidental_changes", []) or [])
    judged: list[P.Probe] = []
    for probe in probes:
        try:
            mirror.load(final_db, probe.writes)
        except Exception as exc:  # sqlite3.Error: the schema refuses the probe's rows
            outcome.skipped.setdefault(probe.kind, f"the schema refuses it ({type(exc).__name__}: {exc})")
            continue
        final = mirror.answer(queries, oracle_final)
        if all(_fingerprint({k: final[k]}) == _fingerprint({k: oracle_final[k]}) for k in keys):
            outcome.skipped.setdefault(probe.kind, f"invisible to the judge's queries ({probe.description})")
            continue
        if incidental and state_key and _only_incidental(oracle_final[state_key], final[state_key], incidental):
            outcome.skipped.setdefault(probe.kind, f"changes only incidental fields ({probe.description})")
            continue
        outcome.ran[probe.kind] = outcome.ran.get(probe.kind, 0) + 1
        judged.append(probe)
        verdict = instance.judge.evaluate(judge_input.model_copy(update={"final": final}))
        if probe.kind == "equivalent":
            if not verdict.passed:
                outcome.wrong.append((f"probe:{probe.kind}", f"a correct end state written differently fails: "
                                                             f"{probe.description}", verdict))
        elif verdict.passed:
            outcome.wrong.append((f"probe:{probe.kind}", f"passes: {probe.description}", verdict))
    _history(outcome, instance, spec, mirror, final_db, judged, judge_input)
    _schema(outcome, instance, spec, app, infos, mirror, final_db, diff_db, judge_input)
    for kind in outcome.ran:
        outcome.skipped.pop(kind, None)
    mirror.load(final_db)
    if service != "app":  # which app of a workflow the judge got wrong
        outcome.wrong = [(kind, f"[{service}: {app_name}] {reason}", v) for kind, reason, v in outcome.wrong]
    return outcome


#: What a judge lets an app change that its `apps` do not name: nothing.
_NOTHING_ALLOWED = SimpleNamespace(expected_changes=[], incidental_changes=[], free_fields=[])


def _allowances(instance: TaskInstance, service: str) -> Any:
    """What the judge lets the app of `service` change: the judge's own spec for the service
    it diffs, its `apps` entry for another app of a workflow (none: that app may change
    nothing). None for a judge that is no spec."""
    spec = getattr(instance.judge, "spec", None)
    if spec is None or service == getattr(spec, "service", "app"):
        return spec
    return (getattr(spec, "apps", None) or {}).get(service) or _NOTHING_ALLOWED


def _history(outcome: ProbeOutcome, instance: TaskInstance, spec: Any, mirror: P.ProbeMirror, final_db: P.DbImage,
             judged: list[P.Probe], judge_input: JudgeInput) -> None:
    """The `history` probes (`cua.qa.probe_history`): the oracle's end state reached by a
    path the task does not allow (must fail), or with a slip corrected (must pass)."""
    from cua.qa.probe_history import history_probes, judge_history_probe

    made, why = history_probes(judged)
    outcome.skipped.update(why)
    allowed = [*getattr(spec, "expected_changes", []), *getattr(spec, "incidental_changes", [])]
    initial_state = next((r.value for q in instance.judge.queries()
                          if isinstance(q, AppStateQuery) and q.service == mirror.service
                          and (r := judge_input.initial.get(query_key(q))) is not None and r.ok), None)
    for probe in made:
        judged_right = judge_history_probe(
            mirror, final_db, probe, allowed, initial_state, instance.judge.queries(), judge_input.final,
            lambda final: instance.judge.evaluate(judge_input.model_copy(update={"final": final})))
        if isinstance(judged_right, str):
            outcome.skipped.setdefault("history", judged_right)
            continue
        right, must_pass, verdict = judged_right
        outcome.ran["history"] = outcome.ran.get("history", 0) + 1
        if not right:
            wrong = "fails, though the detour changes only what the task allows" if must_pass else "passes"
            outcome.wrong.append(("probe:history", f"{wrong}: {probe.description}", verdict))


def _schema(outcome: ProbeOutcome, instance: TaskInstance, spec: Any, app: Any, infos: list[P.TableInfo],
            mirror: P.ProbeMirror, final_db: P.DbImage, diff_db: P.DbDiff, judge_input: JudgeInput) -> None:
    """The `schema_mutation` probes (`cua.qa.probe_schema`): one edit anywhere in the app."""
    from cua.qa.probe_schema import foreign_keys, judge_schema_mutations, schema_mutations

    probes, why = schema_mutations(infos, final_db, diff_db, foreign_keys(app.db.conn, infos), seed=instance.seed,
                                   free=list(getattr(spec, "free_fields", []) or []))
    ran, why_none, wrong = judge_schema_mutations(
        probes, mirror, final_db, instance.judge.queries(), judge_input.final,
        list(getattr(spec, "expected_changes", []) or []), list(getattr(spec, "incidental_changes", []) or []),
        lambda final: instance.judge.evaluate(judge_input.model_copy(update={"final": final})))
    if ran:
        outcome.ran["schema_mutation"] = outcome.ran.get("schema_mutation", 0) + ran
    else:
        outcome.skipped.setdefault("schema_mutation", why or why_none)
    outcome.wrong += wrong


def _reads(node: Any, kinds: set[str], other: bool) -> bool:
    """Whether a judge spec's node (dumped) reads a getter of `kinds` (`other`: of
    another kind)."""
    if isinstance(node, dict):
        get = node.get("get")
        if isinstance(get, dict) and "kind" in get and (get["kind"] in kinds) != other:
            return True
        return any(_reads(v, kinds, other) for v in node.values())
    if isinstance(node, list):
        return any(_reads(v, kinds, other) for v in node)
    return False


def method_probes(instance: TaskInstance, untouched: JudgeInput, oracle: JudgeInput) -> ProbeOutcome:
    """Method against answer, judged on states already read (no sandbox needed):
    `untouched` is the no-op episode's input (nothing done), `oracle` the oracle's."""
    outcome = ProbeOutcome()
    judge = instance.judge
    done = oracle.done
    answer = done.answer if done is not None else None
    probes: list[tuple[str, str, JudgeInput]] = [
        ("other_path", "the oracle's end state reached in one step",
         oracle.model_copy(update={"steps": 1})),
        ("other_path", f"the oracle's end state reached in {instance.max_steps} steps",
         oracle.model_copy(update={"steps": instance.max_steps})),
        ("typed_answer", "nothing done, the instruction typed as the answer",
         untouched.model_copy(update={"done": Done(answer=instance.instruction)})),
    ]
    spec = getattr(judge, "spec", None)
    checks = spec.model_dump(mode="json")["checks"] if spec is not None else []
    plain_end = done is None or (done.status == "success" and not answer)
    if plain_end and not _reads(checks, {"done_status"}, False):
        probes.append(("other_path", "the oracle's end state, ended by the step limit (no done)",
                       oracle.model_copy(update={"done": None})))
    spec = getattr(judge, "spec", None)
    checks = spec.model_dump(mode="json")["checks"] if spec is not None else []
    if answer and _reads(checks, {"answer"}, False) and _reads(checks, {"answer", "done_status"}, True):
        probes.append(("typed_answer", f"nothing done, the oracle's answer {answer[:60]!r} typed where an action "
                                       "was asked too", untouched.model_copy(update={"done": done})))
    elif answer and not _reads(checks, {"answer"}, False):
        outcome.skipped["typed_answer (oracle's answer)"] = "the judge never reads the answer"
    for kind, description, data in probes:
        outcome.ran[kind] = outcome.ran.get(kind, 0) + 1
        verdict = judge.evaluate(data)
        if kind in METHOD_MUST_PASS and not verdict.passed:
            outcome.wrong.append((f"probe:{kind}", f"the judge reads how, not what: {description} fails", verdict))
        elif kind in METHOD_MUST_FAIL and verdict.passed:
            outcome.wrong.append((f"probe:{kind}", f"passes: {description}", verdict))
    ran, skipped, wrong = typed_probes(instance, oracle)  # both sides of each typed check's equivalence class
    for kind, n in ran.items():
        outcome.ran[kind] = outcome.ran.get(kind, 0) + n
    outcome.skipped.update(skipped)
    outcome.wrong += wrong
    return outcome


def _only_incidental(before: StateResult, after: StateResult, patterns: Sequence[str]) -> bool:
    if not before.ok or not after.ok:
        return False
    changes = list(diff(before.value, after.value))
    return bool(changes) and all(allowed_by(c, list(patterns)) for c in changes)
