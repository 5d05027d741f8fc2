"""Judge QA: prove every task template's judge right, in real sandboxes.

For every template and K seeds:
1. the initial state fails (an agent that does nothing must not pass);
2. the oracle reaches score 1 with no side-effect violation;
3. the near miss (a plausible wrong solution) fails;
   (a template tagged `oracle: false` has no scripted solution: only 1 and 4 run for it)
4. the same final state judged twice gives the same verdict;
5. along the oracle, every strict prefix of its actions fails and progress never falls
   (tier 3+: at least 3 distinct progress values);
6. adversarial end states built from the oracle's database changes (`cua.qa.probes`):
   over-reach, wrong target, collateral, partial, duplicate and every formula typed as
   its value must fail; an equivalent end state written differently must pass;
7. method against answer: the oracle's end state reached another way (one step, the
   step limit, no `done`) must pass; nothing done with the instruction (or, for a task
   that asks for an action and an answer, the oracle's answer) typed as the answer must
   fail. The report says which probes ran for each template and, for a probe that had
   nothing to change, why;
8. forged signals (`cua.qa.probe_forged`): what the judge reads from a page (page reads,
   an end flag the page reports) forged through the sandbox's actions every way an agent
   could (javascript:, data:, blob:, file:, a foreign origin, a popup) must fail;
9. schema mutations (`cua.qa.probe_schema`): one edit anywhere in the app's schema
   (every table, each kind of column, the targets' parent records) must fail; page
   probes (`cua.qa.probe_page`): state probes written into the live app and the page
   reloaded, for judges whose checks read the page, must fail (the oracle's own end
   replayed so must pass);
10. files (`cua.qa.probe_files`): for a file task, another file of the user's created,
   removed, moved or edited beside the oracle's end state must fail.

A broken task (bad file, no rows at a seed, an oracle that raises, a sandbox that will
not start) is reported as a failure with its reason, never crashes the check. One
sandbox is created per template (per distinct sandbox config) and reset between runs.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cua.episode import EpisodeRecord, NoopAgent, OracleAgent, gather_state, run_episode
from cua.episode.local import LocalSandbox, open_local
from cua.qa.judge_qa import ProbeOutcome, StepJudgingOracle, db_image, method_probes, run_probes, trace_problems
from cua.qa.probe_files import files_probes
from cua.qa.probe_forged import forged_signal_probes
from cua.qa.probe_page import page_probes
from cua.qa.probes import bundled_apps_of, bundled_services_of
from cua.qa.qa_cache import Digests, VerdictCache
from cua.task import TaskInstance, Verdict
from cua.tasks.variants import shared_config, split_variants, variant_of
from cua.variant import HoldOut

__all__ = ["CheckReport", "TemplateReport", "VariantFailure", "check_templates"]

#: Upper bound on one episode (a slow, loaded 2-core machine with real Chromium), by
#: sandbox kind: a VM's guest runs on an emulated CPU where KVM is absent (TCG), and an
#: office episode there (restore, files, LibreOffice's start, the oracle's keys) takes
#: minutes. The bound catches a hang; it is not a speed goal.
EPISODE_TIMEOUT_S: dict[str, float] = {"vm": 1200.0}
DEFAULT_EPISODE_TIMEOUT_S = 240.0


def episode_timeout_s(kind: str) -> float:
    return EPISODE_TIMEOUT_S.get(kind, DEFAULT_EPISODE_TIMEOUT_S)


@dataclass
class VariantFailure:
    template_id: str
    seed: int | None
    #: load | instantiate | sandbox | initial | oracle | near_miss | determinism | prefix | progress
    #: | probe:over_reach | probe:wrong_target | probe:collateral | probe:duplicate | probe:equivalent | probe_mirror
    #: | probe:answer_for_method | probe:typed_answer | probe:other_path | probe:forged_signal
    #: | probe:schema_mutation | probe:page | probe:files
    stage: str
    reason: str
    evidence: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        head = f"FAIL {self.template_id}" + (f" seed={self.seed}" if self.seed is not None else "")
        out = [f"{head} [{self.stage}] {self.reason}"]
        for e in self.evidence:
            mark = "ok " if e.get("passed") else "NO "
            detail = f" ({e['detail']})" if e.get("detail") else ""
            out.append(f"    {mark}{e.get('check')}: {e.get('getter')} observed={_short(e.get('observed'))} "
                       f"expected={_short(e.get('expected'))}{detail}")
        return out


@dataclass
class TemplateReport:
    template_id: str
    variants: int = 0
    failures: list[VariantFailure] = field(default_factory=list)
    seconds: float = 0.0
    #: probe kind -> how many ran over all variants.
    probes_ran: dict[str, int] = field(default_factory=dict)
    #: probe kind -> why it did not run (for kinds that never ran).
    probes_skipped: dict[str, str] = field(default_factory=dict)
    #: Taken from the verdict cache: nothing it rests on changed since a clean check (`cua.qa.qa_cache`).
    reused: bool = False

    @property
    def failed_variants(self) -> int:
        return len({f.seed for f in self.failures})

    def probe_lines(self) -> list[str]:
        ran = ", ".join(f"{k}={n}" for k, n in sorted(self.probes_ran.items())) or "none"
        out = [f"    probes ran: {ran}"]
        out += [f"    no {k}: {why}" for k, why in sorted(self.probes_skipped.items()) if k not in self.probes_ran]
        return out


@dataclass
class CheckReport:
    templates: list[TemplateReport] = field(default_factory=list)
    #: Problems of task files that did not load (their templates are not in `templates`).
    load_failures: list[VariantFailure] = field(default_factory=list)

    @property
    def variants(self) -> int:
        return sum(t.variants for t in self.templates)

    @property
    def failures(self) -> int:
        return sum(t.failed_variants for t in self.templates) + len(self.load_failures)

    def summary(self) -> str:
        return f"templates={len(self.templates)} variants={self.variants} failures={self.failures}"

    def to_json(self) -> dict[str, Any]:
        return {
            "templates": [{"id": t.template_id, "variants": t.variants, "seconds": round(t.seconds, 2),
                           "reused": t.reused,
                           "probes_ran": t.probes_ran,
                           "probes_skipped": {k: v for k, v in t.probes_skipped.items() if k not in t.probes_ran},
                           "failures": [f.__dict__ for f in t.failures]} for t in self.templates],
            "load_failures": [f.__dict__ for f in self.load_failures],
            "summary": self.summary(),
        }


def _short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _evidence(verdict: Verdict | None) -> list[dict[str, Any]]:
    return [e.model_dump(mode="json") for e in verdict.evidence] if verdict else []


def _episode_problem(record: EpisodeRecord) -> str | None:
    if record.status != "completed":
        err = record.error
        where = f" after {record.steps} step(s)" if record.steps else ""
        return f"{record.status}{where}: {(err.message or err.code) if err is not None else None}"
    return None


async def _timed(coro: Any, what: str, instance: TaskInstance) -> EpisodeRecord:
    limit = episode_timeout_s(instance.sandbox_kind)
    try:
        return await asyncio.wait_for(coro, limit)
    except asyncio.TimeoutError:
        raise TimeoutError(f"{what} took more than {limit:g} s") from None


async def _check_variant(handle: Any, instance: TaskInstance, report: TemplateReport) -> list[VariantFailure]:
    tid, seed = instance.task_id, instance.seed
    out: list[VariantFailure] = []
    #: The bundled apps the sandbox runs, by service: a workflow's judge reads each one, and
    #: the state probes attack each in turn.
    services = bundled_services_of(instance.sandbox_config)

    initial = await _timed(run_episode(handle, instance, NoopAgent()), "the initial-state episode", instance)
    problem = _episode_problem(initial)
    if problem:
        return [VariantFailure(tid, seed, "initial", problem)]
    if initial.verdict is not None and initial.verdict.passed:
        out.append(VariantFailure(tid, seed, "initial", "the initial state already passes",
                                  _evidence(initial.verdict)))
    if instance.oracle is None:  # tags.oracle: false (the loader makes the two agree)
        return out + await _check_without_oracle(handle, instance, report, initial)
    initial_dbs, db_problem = await _db_images(handle, services)

    stepper = StepJudgingOracle()
    oracle = await _timed(run_episode(handle, instance, stepper), "the oracle episode", instance)
    problem = _episode_problem(oracle)
    verdict = oracle.verdict
    if problem:
        out.append(VariantFailure(tid, seed, "oracle", problem))
    elif verdict is None or not verdict.passed or verdict.score < 1.0 or verdict.violations:
        if verdict is not None and verdict.violations:
            reason = "the oracle has side effects"
        elif verdict is None or not verdict.passed:
            reason = "the oracle does not pass"
        else:
            reason = f"the oracle scores {verdict.score:g}"
        if oracle.truncated:
            reason += f" (ran out of max_steps={instance.max_steps})"
        out.append(VariantFailure(tid, seed, "oracle", reason, _evidence(verdict)))
    if verdict is not None and oracle.judge_input is not None:
        # The sandbox still shows the final state: read it again and judge it again.
        _count(report, "determinism", 1)
        reread = await gather_state(handle, instance.judge.queries())
        again = instance.judge.evaluate(oracle.judge_input.model_copy(update={"final": reread}))
        if _verdict_key(again) != _verdict_key(verdict):
            out.append(VariantFailure(tid, seed, "determinism", "the same final state judged twice differs",
                                      _evidence(again)))
        oracle_ok = not problem and verdict.passed and not verdict.violations
        if oracle_ok:
            for stage, reason, v in trace_problems(stepper.trace, verdict, oracle.judge_input.final,
                                                   instance.tags.tier):
                out.append(VariantFailure(tid, seed, stage, reason, _evidence(v)))
            _count(report, "prefix", max(0, len(stepper.trace.verdicts) - 1), "the oracle takes one action")
            if initial.judge_input is not None:
                _add_outcome(report, out, tid, seed, method_probes(instance, initial.judge_input, oracle.judge_input))
        final_dbs: dict[str, Any] = {}
        if oracle_ok and services and not db_problem:
            final_dbs, db_problem = await _db_images(handle, services)
        if db_problem:
            report.probes_skipped.setdefault("state probes", f"the app's database could not be read: {db_problem}")
        elif oracle_ok and services:
            for service, app in services:
                _add_outcome(report, out, tid, seed, run_probes(instance, app, initial_dbs[service], final_dbs[service],
                                                                oracle.judge_input, service))
            # the state probes again in the live sandbox, the page reloaded on each (checks of the
            # page): the page shows the first app
            service, app = services[0]
            _add_outcome(report, out, tid, seed, await page_probes(handle, instance, app, initial_dbs[service],
                                                                   final_dbs[service], oracle.judge_input, service))
        elif oracle_ok:
            report.probes_skipped.setdefault("state probes", "the sandbox runs no bundled app")
        if oracle_ok:  # the user's other files created, removed, moved, edited (`cua.qa.probe_files`)
            _add_outcome(report, out, tid, seed, await files_probes(handle, instance, oracle.judge_input))

    # the page the oracle finished on, forged every way an agent could (each must fail)
    _add_outcome(report, out, tid, seed, await forged_signal_probes(handle, instance))
    if instance.near_miss is None:
        out.append(VariantFailure(tid, seed, "near_miss", "the template has no near miss"))
    else:
        near = await _timed(run_episode(handle, instance, OracleAgent("near_miss")), "the near-miss episode", instance)
        problem = _episode_problem(near)
        if problem:
            out.append(VariantFailure(tid, seed, "near_miss", problem))
        elif near.verdict is not None and near.verdict.passed:
            reason = "the near miss passes" + (f" (it ran out of max_steps={instance.max_steps})"
                                               if near.truncated else "")
            out.append(VariantFailure(tid, seed, "near_miss", reason, _evidence(near.verdict)))
    return out


async def _db_images(handle: Any, services: list[tuple[str, str]]) -> tuple[dict[str, Any], str]:
    """Every service's database image, or why one could not be read (then none: no state
    probes; the app refused a read, e.g. its query time limit)."""
    images: dict[str, Any] = {}
    for service, app in services:
        try:
            images[service] = await db_image(handle, app, service)
        except ValueError as exc:
            return {}, f"{service}: {exc}" if service != "app" else str(exc)
    return images, ""


async def _check_without_oracle(handle: Any, instance: TaskInstance, report: TemplateReport,
                                initial: EpisodeRecord) -> list[VariantFailure]:
    """A template without a scripted solution (e.g. most MiniWoB++ drag and draw tasks):
    only what needs none is proved: doing nothing fails (checked by the caller) and the
    judge gives the same verdict on the same end state twice."""
    report.probes_skipped.setdefault("oracle", "the template has no oracle (tags.oracle: false)")
    if initial.verdict is None or initial.judge_input is None:
        return []
    _count(report, "determinism", 1)
    reread = await gather_state(handle, instance.judge.queries())
    again = instance.judge.evaluate(initial.judge_input.model_copy(update={"final": reread}))
    out: list[VariantFailure] = []
    if _verdict_key(again) != _verdict_key(initial.verdict):
        out.append(VariantFailure(instance.task_id, instance.seed, "determinism",
                                  "the same final state judged twice differs", _evidence(again)))
    _add_outcome(report, out, instance.task_id, instance.seed, await forged_signal_probes(handle, instance))
    return out


def _add_outcome(report: TemplateReport, out: list[VariantFailure], tid: str, seed: int,
                 outcome: ProbeOutcome) -> None:
    for kind, n in outcome.ran.items():
        _count(report, kind, n)
    for kind, why in outcome.skipped.items():
        report.probes_skipped.setdefault(kind, why)
    for stage, reason, v in outcome.wrong:
        out.append(VariantFailure(tid, seed, stage, reason, _evidence(v)))


def _count(report: TemplateReport, kind: str, n: int, why_none: str = "") -> None:
    if n:
        report.probes_ran[kind] = report.probes_ran.get(kind, 0) + n
    elif why_none:
        report.probes_skipped.setdefault(kind, why_none)


def _verdict_key(verdict: Verdict) -> str:
    return json.dumps(verdict.model_dump(mode="json", exclude={"judge_ms"}), sort_keys=True, default=str)


def _override(instance: TaskInstance, isolation: str | None) -> TaskInstance:
    if isolation is None or instance.sandbox_kind != "browser":
        return instance
    return instance.model_copy(update={"sandbox_config": {**instance.sandbox_config, "isolation": isolation}})


def _sandbox_key(instance: TaskInstance) -> str:
    """Instances that one sandbox serves: the same config but for the variant's theme, layout
    and locale, which each reset sets (its viewport is the sandbox's, fixed at create)."""
    return json.dumps([instance.sandbox_kind, shared_config(instance.sandbox_config)], sort_keys=True, default=str)


async def _check_template(template: Any, seeds: Sequence[int], isolation: str | None = None,
                          variants: int = 0, hold_out: HoldOut | None = None, split: str = "all") -> TemplateReport:
    report = TemplateReport(template.id)
    started = time.perf_counter()
    groups: dict[str, list[TaskInstance]] = {}
    for seed in seeds:
        try:
            instance = _override(template.instantiate(seed), isolation)
        except Exception as exc:  # a broken template is reported, whatever it raised
            report.variants += 1
            report.failures.append(VariantFailure(template.id, seed, "instantiate", f"{type(exc).__name__}: {exc}"))
            continue
        looks = split_variants(instance, variants or 1, hold_out, split) if variants or hold_out else [instance]
        for shown in looks:
            report.variants += 1
            groups.setdefault(_sandbox_key(shown), []).append(shown)
    for instances in groups.values():
        first = instances[0]
        try:
            async with open_local(first.sandbox_kind, first.sandbox_config) as handle:
                for instance in instances:
                    try:
                        found = await _check_variant(handle, instance, report)
                        look = variant_of(instance)
                        report.failures += [f if look is None else
                                            VariantFailure(f.template_id, f.seed, f.stage,
                                                           f"[{look.key()}] {f.reason}", f.evidence) for f in found]
                    except Exception as exc:
                        report.failures.append(VariantFailure(template.id, instance.seed, "episode",
                                                              f"{type(exc).__name__}: {exc}"))
                        if not _alive(handle):
                            break
        except Exception as exc:
            done = {f.seed for f in report.failures}
            for instance in instances:
                if instance.seed not in done:
                    report.failures.append(VariantFailure(template.id, instance.seed, "sandbox",
                                                          f"{type(exc).__name__}: {exc}"))
    report.seconds = time.perf_counter() - started
    return report


def _alive(handle: LocalSandbox) -> bool:
    return handle.sandbox.alive


def _cache_key(digests: Digests, template: Any, seeds: Sequence[int], isolation: str | None,
               variants: int = 0) -> str | None:
    try:
        first = template.instantiate(seeds[0]) if seeds else None
    except Exception:  # a broken template is never reused: it runs and reports its failure
        return None
    if first is None:
        return None
    key = digests.template_key(template, bundled_apps_of(first.sandbox_config), seeds=seeds, isolation=isolation,
                               kind=first.sandbox_kind)
    return None if key is None else key + (f":variants={variants}" if variants else "")


def _stored(report: TemplateReport) -> dict[str, Any]:
    return {"template_id": report.template_id, "variants": report.variants, "seconds": report.seconds,
            "probes_ran": report.probes_ran, "probes_skipped": report.probes_skipped}


def _reused(entry: dict[str, Any] | None) -> TemplateReport | None:
    if entry is None:
        return None
    try:
        return TemplateReport(str(entry["template_id"]), int(entry["variants"]), [], float(entry["seconds"]),
                              dict(entry["probes_ran"]), dict(entry["probes_skipped"]), reused=True)
    except (KeyError, TypeError, ValueError):  # an entry of another shape: check again
        return None


async def check_templates(templates: Sequence[Any], *, seeds: Sequence[int] = (0, 1, 2), parallel: int = 1,
                          isolation: str | None = None, variants: int = 0, hold_out: HoldOut | None = None,
                          split: str = "all", on_template: Callable[[TemplateReport], None] | None = None,
                          cache: VerdictCache | None = None) -> CheckReport:
    """Check templates, `parallel` at a time (each with its own sandbox); `isolation`
    overrides the browser sandboxes' isolation mode (`shared` is faster, e.g. for CI).
    With a `cache`, a template whose clean report is stored under its digest is not run
    again (see `cua.qa.qa_cache`); without one, everything runs. `variants` K > 0: each
    instance in K seeded appearance variants (`cua.tasks.variants`), its app's default
    look among them; with `hold_out`, only the variants of `split` (`split_variants`)."""
    report = CheckReport()
    gate = asyncio.Semaphore(max(1, parallel))
    verdicts = cache if cache is not None else VerdictCache(enabled=False)
    digests = Digests()

    async def one(template: Any) -> TemplateReport:
        key = _cache_key(digests, template, seeds, isolation, variants) if verdicts.enabled and hold_out is None else None
        result = _reused(verdicts.get(key))
        if result is None:
            async with gate:
                result = await _check_template(template, seeds, isolation, variants, hold_out, split)
            if not result.failures:
                verdicts.put(key, _stored(result))
        if on_template is not None:
            on_template(result)
        return result

    report.templates = list(await asyncio.gather(*(one(t) for t in templates)))
    return report
