"""Admission of synthesised templates: judge QA's own entry points decide.

A candidate is admitted only if its task file loads (`cua.tasks.loader.load_text`:
format, completeness and the static checks), it is not a duplicate of one admitted
before (same judge-state signature on the same seeds), and `cua.qa.check.check_templates`
finds no failure on the seeds: the oracle passes, no-op, near miss and every probe class
fail, equivalents pass, verdicts are deterministic. Everything else is rejected with its
class (the failing stage) and reason.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from cua.synth.ui_only import ui_problems
from cua.tasks.format import FormatProblem, TaskFormatError

__all__ = ["CI_SEEDS", "Admission", "Candidate", "Outcome", "admit", "admission_key", "earlier_admissions", "screen",
           "provenance_path", "run_until_interrupted", "signature", "store_verdicts", "suite_text", "write_suite"]

#: The seeds and isolation CI's judge QA checks a template on (scripts/test.sh: `--seeds 1 --isolation shared`).
CI_SEEDS: tuple[int, ...] = (0,)
CI_ISOLATION = "shared"


@dataclass(frozen=True)
class Candidate:
    """A proposed template: who proposed it (a generator's chain or a model), its dict, and for a generated
    one its scope and phrasing (a model's: empty and -1)."""

    generator: str
    template: dict[str, Any]
    scope: str = ""
    phrasing: int = -1


@dataclass
class Outcome:
    candidate: Candidate
    admitted: bool
    #: load | duplicate | a judge QA stage (oracle, near_miss, noop, probe:..., determinism, ...)
    rejection: str = ""
    reason: str = ""
    #: the judge-state signature on the seeds (empty where the candidate did not load)
    signature: str = ""
    #: judge QA's clean report (`cua.qa.check.TemplateReport`) of an admitted candidate
    report: Any = None
    #: admitted by an earlier run into the same folder, and kept unchecked: the template, its app and
    #: the judge code have the digests that admission was keyed by (`earlier_admissions`)
    kept: bool = False


@dataclass
class Admission:
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    #: what judge QA checked the candidates on
    seeds: tuple[int, ...] = (0, 1, 2)
    isolation: str | None = "shared"
    #: stopped (Ctrl-C, SIGTERM) before every candidate was decided: `outcomes` holds the decided ones
    interrupted: bool = False

    @property
    def admitted(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.admitted]

    def summary_lines(self) -> list[str]:
        """The figures; `admitted_per_min` counts what this run admitted itself (not what it kept)."""
        minutes = max(self.seconds, 1e-9) / 60
        reused = sum(o.kept for o in self.outcomes)
        out = [f"candidates={len(self.outcomes)} admitted={len(self.admitted)} kept={reused} "
               f"seconds={self.seconds:.1f}",
               f"admitted_per_min={(len(self.admitted) - reused) / minutes:.2f}"]
        per_gen: dict[str, list[bool]] = {}
        for o in self.outcomes:
            per_gen.setdefault(o.candidate.generator, []).append(o.admitted)
        dups = Counter(o.candidate.generator for o in self.outcomes if o.rejection == "duplicate")
        for gen, flags in sorted(per_gen.items()):
            line = f"generator {gen}: admitted {sum(flags)}/{len(flags)} rate={sum(flags) / len(flags):.2f}"
            mine = [o for o in self.outcomes if o.candidate.generator == gen]
            variants = {(gen, o.candidate.scope, o.candidate.phrasing) for o in mine}
            kept = {o.signature for o in mine if o.admitted}
            line += (f" variants={len(variants)} signatures={len({o.signature for o in mine if o.signature})}"
                     f" admitted_signatures={len(kept)} duplicates={dups[gen]}")
            if len(flags) >= 4 and dups[gen] * 2 >= len(flags):  # half its output one judge again
                line += f" COLLAPSED: {dups[gen]} of its {len(flags)} judge what another already does"
            out.append(line)
        rejected = Counter(o.rejection for o in self.outcomes if not o.admitted)
        for cls, n in sorted(rejected.items()):
            out.append(f"rejected {cls}: {n} rate={n / len(self.outcomes):.2f}")
        out += self.diversity_lines()
        return out

    def diversity_lines(self) -> list[str]:
        """The diversity of what was admitted: distinct (operation chain, scope, phrasing) picks, distinct
        judge-state signatures, and the counts by app, skill, tier, oracle length, the number of operations
        chained and whether the task ends with an answer."""
        ok = self.admitted
        picks = {(o.candidate.generator, o.candidate.scope, o.candidate.phrasing) for o in ok}
        out = [f"diversity: admitted={len(ok)} distinct_chain_scope_phrasing={len(picks)} "
               f"distinct_signatures={len({o.signature for o in ok})} "
               f"distinct_chains={len({o.candidate.generator for o in ok})}"]
        by: dict[str, Counter[str]] = {"app": Counter(), "apps_spanned": Counter(), "skill": Counter(),
                                       "tier": Counter(), "split": Counter(), "oracle_len": Counter(),
                                       "chain_len": Counter(), "answers": Counter()}
        for o in ok:
            # operations composed (a+b, an edit then a question a>ask:b), and whether the judge reads an answer
            by["chain_len"][str(len(re.split(r"[+>]", o.candidate.generator)))] += 1
            checks = (o.candidate.template.get("judge") or {}).get("checks") or []
            by["answers"]["yes" if any((c.get("get") or {}).get("kind") == "answer" for c in checks
                                       if isinstance(c, dict)) else "no"] += 1
            tags = o.candidate.template.get("tags") or {}
            by["app"][str(tags.get("app", "?"))] += 1
            by["apps_spanned"][str(max(1, len(tags.get("apps") or [])))] += 1
            by["tier"][str(tags.get("tier", "?"))] += 1
            by["split"][str(tags.get("split", "?"))] += 1
            for skill in tags.get("skills") or []:
                by["skill"][str(skill)] += 1
            oracle = o.candidate.template.get("oracle")
            by["oracle_len"][str(len(oracle)) if isinstance(oracle, list) else "python"] += 1
        for name, counts in by.items():
            if counts:
                out.append(f"diversity by {name}: " + " ".join(f"{k}={n}" for k, n in sorted(counts.items(), key=_by_value)))
        return out


def _by_value(item: tuple[str, int]) -> tuple[bool, int, str]:
    """Counts in the order of their values: numbers as numbers (2 before 10), then words."""
    key = item[0]
    return (not key.isdigit(), int(key) if key.isdigit() else 0, key)


def suite_text(suite: str, templates: Sequence[dict[str, Any]], header: str = "") -> str:
    """An ordinary task file: the suite's name and its templates (byte-stable for equal input)."""
    body = yaml.safe_dump({"suite": suite, "templates": list(templates)}, sort_keys=False, allow_unicode=True,
                          width=120, default_flow_style=False)
    return header + str(body)


def signature(template: Any, seeds: Sequence[int]) -> str:
    """The judge-state signature: the judge's checks and allowed changes rendered on each seed
    (subgoals and the wording left out: they say how, not what is judged)."""
    from cua.tasks.render import render

    judge = {k: v for k, v in template.raw.get("judge", {}).items() if k != "subgoals"}
    rendered = [render(judge, template.params(seed)) for seed in seeds]
    return hashlib.sha256(json.dumps(rendered, sort_keys=True, default=str).encode()).hexdigest()


def _load(suite: str, candidate: Candidate) -> Any:
    from cua.tasks.loader import load_text

    loaded = load_text(suite_text(suite, [candidate.template]), f"<{candidate.generator}>", suite=suite)
    if len(loaded) != 1:
        raise TaskFormatError([FormatProblem(f"<{candidate.generator}>", "templates", "one template per candidate")])
    return loaded[0]


def screen(suite: str, candidates: Sequence[Candidate],
           seeds: Sequence[int] = (0, 1, 2)) -> tuple[list[Outcome | None], list[tuple[int, Any, str]]]:
    """The checks before judge QA: each candidate rejected (oracle_not_ui, load, instantiate, duplicate) or
    loaded for QA, as (outcome or None per candidate, [(index, loaded template, its signature)])."""
    outcomes: list[Outcome | None] = [None] * len(candidates)
    seen: dict[str, str] = {}
    to_check: list[tuple[int, Any, str]] = []
    for i, cand in enumerate(candidates):
        not_ui = ui_problems(cand.template)
        if not_ui:
            outcomes[i] = Outcome(cand, False, "oracle_not_ui", "; ".join(not_ui))
            continue
        try:
            template = _load(suite, cand)
        except TaskFormatError as exc:
            outcomes[i] = Outcome(cand, False, "load", "; ".join(str(p) for p in exc.problems))
            continue
        except Exception as exc:  # a proposal may fail in any way while it is parsed: it is rejected, not fatal
            outcomes[i] = Outcome(cand, False, "load", f"{type(exc).__name__}: {exc}")
            continue
        try:
            sig = signature(template, seeds)
        except Exception as exc:  # params that draw nothing at some seed, whatever raised it
            outcomes[i] = Outcome(cand, False, "instantiate", f"{type(exc).__name__}: {exc}")
            continue
        if sig in seen:
            outcomes[i] = Outcome(cand, False, "duplicate", f"same judge-state signature as {seen[sig]}", sig)
            continue
        seen[sig] = template.id
        to_check.append((i, template, sig))
    return outcomes, to_check


def admit(suite: str, candidates: Sequence[Candidate], *, seeds: Sequence[int] = (0, 1, 2), parallel: int = 1,
          isolation: str | None = "shared", earlier: Mapping[str, dict[str, Any]] | None = None,
          on_outcome: Callable[[Outcome, int, int], None] | None = None) -> Admission:
    """Screen, then judge-QA every candidate left; the outcomes keep the candidates' order.

    `earlier` (`earlier_admissions`): templates admitted before on these seeds and isolation whose
    admission still stands, by id; a candidate equal to one of them is kept without judge QA. It is
    still screened with the rest, so that a new candidate with its judge-state signature is a duplicate.
    Interrupted (Ctrl-C, SIGTERM), it returns what was decided, marked `interrupted`: written, that
    is kept by the next run, which checks only the rest.
    `on_outcome(outcome, decided, candidates)` is told of each judge QA decision as it is made (a long
    admission's progress).
    """
    from cua.qa.check import check_templates

    started = time.perf_counter()
    outcomes, screened = screen(suite, candidates, seeds)
    to_check: list[tuple[int, Any, str]] = []
    for i, template, sig in screened:
        if earlier and earlier.get(template.id) == _as_written(candidates[i].template):
            outcomes[i] = Outcome(candidates[i], True, signature=sig, kept=True)
        else:
            to_check.append((i, template, sig))
    by_id = {template.id: (i, sig) for i, template, sig in to_check}

    def decided(rep: Any) -> None:
        i, sig = by_id[rep.template_id]
        first = rep.failures[0] if rep.failures else None
        outcome = (Outcome(candidates[i], True, signature=sig, report=rep) if first is None
                   else Outcome(candidates[i], False, first.stage, first.reason, sig))
        outcomes[i] = outcome
        if on_outcome is not None:
            on_outcome(outcome, sum(o is not None for o in outcomes), len(candidates))

    interrupted = False
    if to_check:
        interrupted = not run_until_interrupted(check_templates([t for _, t, _ in to_check], seeds=seeds,
                                                                parallel=parallel, isolation=isolation,
                                                                on_template=decided))
    return Admission([o for o in outcomes if o is not None], time.perf_counter() - started, tuple(seeds), isolation,
                     interrupted)


def _interrupt_is_no_error(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if isinstance(context.get("exception"), KeyboardInterrupt):
        return  # the stop the caller reports: not a task's failure to print
    loop.default_exception_handler(context)


def run_until_interrupted(coro: Coroutine[Any, Any, Any]) -> bool:
    """Run `coro` to its end (True), or until Ctrl-C or SIGTERM stops it (False): the tasks in
    flight are cancelled and awaited, so their sandboxes close. A task the stop landed in while
    it ran plain code (a judge's diff) ends with the KeyboardInterrupt as its exception, which
    asyncio would print as a traceback ("Task exception was never retrieved") when the task is
    collected; the stop is reported by the caller instead."""
    try:
        with asyncio.Runner() as runner:
            runner.get_loop().set_exception_handler(_interrupt_is_no_error)
            runner.run(coro)
    except KeyboardInterrupt:
        return False
    return True


def provenance_path(out: Path, suite: str) -> Path:
    """OUT/<suite>.admitted.jsonl: each admitted template's provenance, beside its suite folder (so
    that it is no part of the folder judge QA's verdicts are keyed by)."""
    return out / f"{suite}.admitted.jsonl"


def _as_written(template: dict[str, Any]) -> Any:
    """The template as a suite file holds it (YAML has no tuples), to compare with one read back."""
    return yaml.safe_load(yaml.safe_dump(template, sort_keys=False, allow_unicode=True))


def admission_key(template: Any, seeds: Sequence[int], isolation: str | None, digests: Any = None) -> str | None:
    """The key judge QA would store the template's verdict under on the admission's seeds and
    isolation: it changes with the template, its suite's code, its app and the judge code, so an
    admission recorded under it stands exactly while a verdict would be reused."""
    from cua.qa.check import _cache_key
    from cua.qa.qa_cache import Digests

    return _cache_key(digests or Digests(), template, seeds, isolation)


def _admission_keys(path: Path, suite: str, seeds: Sequence[int], isolation: str | None) -> dict[str, str]:
    from cua.qa.qa_cache import Digests
    from cua.tasks.loader import load_file

    digests = Digests()
    keys = {t.id: admission_key(t, seeds, isolation, digests) for t in load_file(path, suite=suite)}
    return {tid: key for tid, key in keys.items() if key is not None}


def earlier_admissions(out: Path, suite: str, seeds: Sequence[int] = (0, 1, 2),
                       isolation: str | None = "shared") -> dict[str, dict[str, Any]]:
    """The templates of OUT/<suite> admitted before on these seeds and isolation, by id, whose
    admission still stands: its provenance row records the key it was admitted under and the
    template, as loaded from the suite file now, still has that key. A long admission is done in
    parts this way (`--count` growing from run to run: the generator draws its candidates in a
    seeded order, so a larger count begins with the smaller one's), and a part already admitted
    is not checked again. Nothing stands where the suite file, its provenance or a key is missing
    or unreadable: then everything is checked again."""
    path = out / suite / f"{suite}.yaml"
    try:
        rows = [json.loads(line) for line in provenance_path(out, suite).read_text().splitlines() if line.strip()]
        data = yaml.safe_load(path.read_text())
        keys = _admission_keys(path, suite, seeds, isolation)
    except (OSError, ValueError, yaml.YAMLError, TaskFormatError):
        return {}
    recorded = {}
    for row in rows:
        adm = row.get("admission") if isinstance(row, dict) else None
        if (isinstance(adm, dict) and adm.get("seeds") == list(seeds) and adm.get("isolation") == isolation
                and adm.get("key")):
            recorded[str(row.get("id"))] = adm["key"]
    templates = data.get("templates") if isinstance(data, dict) else None
    return {str(t["id"]): t for t in templates or [] if isinstance(t, dict) and "id" in t
            and recorded.get(str(t["id"])) is not None and recorded.get(str(t["id"])) == keys.get(str(t["id"]))}


def write_suite(out: Path, suite: str, admission: Admission, header: str = "") -> tuple[Path | None, Path]:
    """DIR/<suite>/<suite>.yaml with the admitted templates (none written where none was admitted:
    a suite holds at least one), DIR/<suite>.rejected.jsonl with each rejection's class and reason,
    and DIR/<suite>.admitted.jsonl with each admitted template's provenance: the operations it
    chains (or the proposing model), the scope its rows are drawn from, its phrasing, its
    judge-state signature, which `cua tasks diversity` reads back, and the key it was admitted
    under (`earlier_admissions`)."""
    folder = out / suite
    path: Path | None = None
    admitted = admission.admitted
    out.mkdir(parents=True, exist_ok=True)
    if admitted:
        folder.mkdir(exist_ok=True)
        path = folder / f"{suite}.yaml"
        _write(path, suite_text(suite, [o.candidate.template for o in admitted], header))
    keys = _admission_keys(path, suite, admission.seeds, admission.isolation) if path is not None else {}
    _write(provenance_path(out, suite), "".join(
        json.dumps({"id": o.candidate.template.get("id"), "chain": o.candidate.generator, "scope": o.candidate.scope,
                    "phrasing": o.candidate.phrasing, "signature": o.signature,
                    "admission": {"seeds": list(admission.seeds), "isolation": admission.isolation,
                                  "key": keys.get(str(o.candidate.template.get("id")))}}, sort_keys=True) + "\n"
        for o in admitted))
    rejected = out / f"{suite}.rejected.jsonl"
    _write(rejected, "".join(json.dumps({"id": o.candidate.template.get("id"), "generator": o.candidate.generator,
                                         "rejection": o.rejection, "reason": o.reason}, sort_keys=True) + "\n"
                             for o in admission.outcomes if not o.admitted))
    return path, rejected


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a run stopped while it writes leaves the file it had (an earlier
    admission's rows stand only with the suite file they were written with)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def store_verdicts(path: Path, suite: str, admission: Admission, *, cache: Any = None) -> int:
    """Store each admitted template's clean report as CI's judge QA verdict for it, so that CI
    reuses it instead of checking the template again; returns how many were stored.

    The key is the one `cua tasks check` computes for the template as loaded from the written
    suite file, on CI's seeds and isolation. Admission checked it in that isolation on seeds that begin
    with CI's: judge QA checks a template's seeds one after another in one sandbox, so
    CI's check of seed 0 is the first part of what admission ran, and passed. Like any verdict,
    it is reused only while the template, its suite folder, its app and the judge code keep the
    digests it was stored under (`cua.qa.qa_cache`).
    """
    # The check's own key and entry, so that CI finds the verdict by the very code it runs.
    from cua.qa.check import _cache_key, _stored
    from cua.qa.qa_cache import Digests, VerdictCache
    from cua.tasks.loader import load_file

    if admission.seeds[:len(CI_SEEDS)] != CI_SEEDS or admission.isolation != CI_ISOLATION:
        raise ValueError(f"admission on seeds {list(admission.seeds)} in isolation {admission.isolation!r} is not "
                         f"CI's check (seeds {list(CI_SEEDS)} first, isolation {CI_ISOLATION!r})")
    reports = {o.candidate.template.get("id"): o.report for o in admission.admitted if o.report is not None}
    verdicts = cache if cache is not None else VerdictCache()
    digests = Digests()
    stored = 0
    for template in load_file(path, suite=suite):
        report = reports.get(template.id)
        key = _cache_key(digests, template, CI_SEEDS, CI_ISOLATION) if report is not None else None
        if report is not None and key is not None:
            verdicts.put(key, _stored(report))
            stored += 1
    return stored
