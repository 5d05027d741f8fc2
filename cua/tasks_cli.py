"""`cua tasks list [SUITE...]`, `cua tasks completeness [SUITE...]` and
`cua tasks check [SUITE...] [--seeds K] [--parallel N]`.

A SUITE is a suite name, or a folder of task files or one task file anywhere on disk
(`cua tasks check path/to/suite`). `list` prints one suite per line: its name, then its
template count (and how many task files failed to load); `list SUITE...` prints those
suites' template ids, one per line. `check` runs judge QA (see `cua.qa.check`) in real sandboxes
and ends with the line `templates=<n> variants=<m> failures=<k>`; exit code 1 when
any check failed.

A command over the tasks, beside `cua trajectory`'s: `list` and `show` read the task
registry, `check` calls judge QA (`cua.qa`), which nothing but this command and the CLI imports.
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cua.synth.admit import Outcome
    from cua.task import TaskTags


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from cua.argtypes import suite_name, whole_number
    from cua.console import add_variant_arguments
    from cua.desktop_override import add_desktop_arguments

    p = sub.add_parser("tasks", help="list task suites; check their judges (judge QA)", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="tasks_command", required=True, metavar="SUBCOMMAND")

    ls = tsub.add_parser("list", help="one suite per line: name, template count; or a suite's template ids")
    ls.add_argument("suites", nargs="*", metavar="SUITE",
                    help="list these suites' template ids (suite names, folders or task files)")
    ls.add_argument("--templates", action="store_true", help="also list every template id with its tags")
    ls.set_defaults(func=list_main)

    show = tsub.add_parser("show", help="print one instantiated task (instruction, params, sandbox, judge)")
    show.add_argument("template", help="a template id, e.g. todo.rename@1")
    show.add_argument("--seed", type=whole_number(0), default=0)
    show.set_defaults(func=show_main)

    dv = tsub.add_parser("diversity", help="the diversity report of synthesised suites as written: counts by app, "
                                           "skill, tier, split, oracle length, operations chained")
    dv.add_argument("suites", nargs="*", metavar="SUITE",
                    help="suite names, folders or task files (default: every synth_* suite)")
    dv.set_defaults(func=diversity_main)

    cp = tsub.add_parser("completeness", help="how every template's allowances are judged: read by a check, "
                                              "or declared unjudged with a reason")
    cp.add_argument("suites", nargs="*", metavar="SUITE", help="suite names, folders or task files (default: all)")
    cp.set_defaults(func=completeness_main)

    ck = tsub.add_parser("check", help="judge QA: initial state fails, oracle passes, near miss fails, "
                                       "verdicts deterministic")
    ck.add_argument("suites", nargs="*", metavar="SUITE",
                    help="suite names, suite folders, task files or template ids (default: all)")
    ck.add_argument("--seeds", type=whole_number(1), default=3, help="seeds 0..K-1 per template (default 3)")
    add_variant_arguments(ck, verb="check")
    ck.add_argument("--parallel", "-j", type=whole_number(1), default=1, help="templates checked at once (default 1)")
    ck.add_argument("--split", choices=["train", "test", "all"], default="all")
    ck.add_argument("--isolation", choices=["container", "shared"],
                    help="override the browser sandboxes' isolation (shared: faster, weaker)")
    ck.add_argument("--kind", choices=["desktop", "vm"],
                    help="check desktop and vm tasks on this sandbox kind (their configs share apps, files, screen)")
    add_desktop_arguments(ck, verb="check")
    ck.add_argument("--json", type=Path, help="also write the full report as JSON here")
    ck.add_argument("--no-cache", action="store_true",
                    help="check every template again, even one whose template, app and judge code are unchanged "
                         "since a clean check (the verdict cache, cua.qa.qa_cache; also CUA_QA_CACHE=off)")
    ck.set_defaults(func=check_main)

    sy = tsub.add_parser("synth", help="synthesise templates from an app's schema; admit only those judge QA passes")
    sy.add_argument("--app", choices=["todo", "contacts", "notes", "kanban", "workflow", "mail", "shop", "bank", "hr"],
                    default="todo",
                    help="the app whose schema the generator composes (cua.synth.generators)")
    sy.add_argument("--count", type=whole_number(1), default=20, help="candidates to generate (default 20)")
    sy.add_argument("--seed", type=whole_number(0), default=0, help="the generator's seed (same seed, same files)")
    sy.add_argument("--out", type=Path, required=True, help="writes OUT/SUITE/SUITE.yaml, OUT/SUITE.rejected.jsonl "
                                                           "and OUT/SUITE.admitted.jsonl")
    sy.add_argument("--suite", type=suite_name,
                    help="the suite's name, its templates' id prefix (default synth_<app>, the name of the kit's "
                         "own suite of that app: another name lets a suite of your own run beside it)")
    sy.add_argument("--parallel", "-j", type=whole_number(1), default=1, help="templates checked at once")
    sy.add_argument("--no-cache", action="store_true",
                    help="check every candidate again, even one an earlier run into OUT admitted whose template, "
                         "app and judge code are unchanged since (also CUA_QA_CACHE=off); without it, such a "
                         "one is kept, so that --count can grow run by run")
    sy.add_argument("--model", metavar="openai:NAME@URL",
                    help="ask this OpenAI-compatible model for templates (--count answers) instead of the generator")
    sy.set_defaults(func=synth_main)


def _load_problems(names: list[str] | None) -> list[str]:
    from cua.tasks.registry import is_suite_path, resolve_suite, suites

    wanted = None
    if names:
        wanted = {resolve_suite(n).name if is_suite_path(n) else n.split(".", 1)[0] for n in names}
    out = []
    for name, suite in sorted(suites().items()):
        if wanted is not None and name not in wanted:
            continue
        out += [str(p) for p in suite.problems]
    return out


def tag_words(tags: TaskTags) -> str:
    """Every tag of a template as `key=value` words, in the model's field order, then any
    extra tags a Python template carries: booleans lower-case, lists comma-joined, an unset
    value or an empty list `-`. The same keys as `cua tasks show`'s JSON `tags`."""
    words = []
    for key, value in tags.model_dump().items():
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, list):
            text = ",".join(map(str, value)) or "-"
        else:
            text = "-" if value is None else str(value)
        words.append(f"{key}={text}")
    return " ".join(words)


def _print_templates(suite: object, tags: bool, indent: str) -> None:
    for tid, t in sorted(suite.templates.items()):  # type: ignore[attr-defined]
        print(f"{indent}{tid} {tag_words(t.tags)}" if tags else f"{indent}{tid}")


def completeness_main(args: argparse.Namespace) -> int:
    """One line per suite, then `templates= allowances= read= unjudged=` over them all. A
    template with an allowance that no check reads does not load (`cua.judges.completeness`):
    it shows among the load problems, and the exit code is 1."""
    from cua.tasks.loader import YamlTemplate, judge_tally
    from cua.tasks.registry import is_suite_path, resolve_suite, suites

    wanted = {resolve_suite(n).name if is_suite_path(n) else n for n in args.suites} if args.suites else None
    totals = [0, 0, 0, 0]
    for name, suite in sorted(suites().items()):
        if wanted is not None and name not in wanted:
            continue
        counts = [0, 0, 0, 0]
        for template in suite.templates.values():
            if isinstance(template, YamlTemplate):
                t = judge_tally(template.spec)
                for i, n in enumerate((1, t.allowances, t.read, t.unjudged)):
                    counts[i] += n
        print(f"{name} templates={counts[0]} allowances={counts[1]} read={counts[2]} unjudged={counts[3]}")
        totals = [a + b for a, b in zip(totals, counts)]
    problems = _load_problems(sorted(wanted) if wanted else None)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    print(f"templates={totals[0]} allowances={totals[1]} read={totals[2]} unjudged={totals[3]}")
    return 1 if problems else 0


def list_main(args: argparse.Namespace) -> int:
    from cua.tasks.loader import TaskFormatError
    from cua.tasks.registry import resolve_suite, suites

    if args.suites:
        try:
            chosen = [resolve_suite(name) for name in args.suites]
        except (KeyError, TaskFormatError) as exc:
            print(f"cua tasks list: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
            return 2
        for suite in chosen:
            _print_templates(suite, args.templates, "")
        found = [problem for suite in chosen for problem in suite.problems]
        for found_problem in found:
            print(f"problem: {found_problem}", file=sys.stderr)
        return 1 if found else 0
    for name, suite in sorted(suites().items()):
        bad = f" ({len(suite.problems)} problem(s) in its files)" if suite.problems else ""
        print(f"{name} {len(suite)}{bad}")
        if args.templates:
            _print_templates(suite, True, "  ")
    problems = _load_problems(None)
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    return 1 if problems else 0


def diversity_main(args: argparse.Namespace) -> int:
    from cua.synth.report import diversity_report, synth_suites
    from cua.tasks.loader import TaskFormatError

    try:
        chosen = synth_suites(args.suites)
    except (KeyError, TaskFormatError) as exc:
        print(f"cua tasks diversity: {exc.args[0] if isinstance(exc, KeyError) else exc}", file=sys.stderr)
        return 2
    if not chosen:
        print("cua tasks diversity: no synthesised suite (cua tasks synth writes synth_<app>)", file=sys.stderr)
        return 2
    for line in diversity_report(chosen):
        print(line)
    return 0


def show_main(args: argparse.Namespace) -> int:
    import json

    from cua.tasks.loader import TaskFormatError
    from cua.tasks.registry import get_template

    try:
        instance = get_template(args.template).instantiate(args.seed)
    except (KeyError, TaskFormatError) as exc:
        print(f"cua tasks show: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({
        "task_id": instance.task_id, "seed": instance.seed, "instruction": instance.instruction,
        "params": instance.params, "sandbox_kind": instance.sandbox_kind, "sandbox_config": instance.sandbox_config,
        "max_steps": instance.max_steps, "tags": instance.tags.model_dump(),
        "queries": [q.model_dump(mode="json") for q in instance.judge.queries()],
    }, indent=2, default=str))
    return 0


def check_main(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from cua.desktop_override import with_desktop
    from cua.errors import BadRequest
    from cua.qa.check import CheckReport, TemplateReport, VariantFailure, check_templates
    from cua.qa.qa_cache import VerdictCache
    from cua.tasks.selection import SelectionError, selected_templates
    from cua.variant import HoldOut

    try:
        hold_out = HoldOut.parse(args.hold_out) if args.hold_out else None
        # a hold-out splits by variant: every template is chosen, and its variants by split
        templates = selected_templates(args.suites, split="all" if hold_out else args.split, kind=args.kind)
        templates = with_desktop(templates, args.desktop_session, args.desktop_look)
    except (SelectionError, BadRequest) as exc:
        print(f"cua tasks check: {exc}", file=sys.stderr)
        return 2

    def progress(t: TemplateReport) -> None:
        if t.failures:
            for failure in t.failures:
                print("\n".join(failure.lines()), flush=True)
        else:
            how = "reused: template, app and judge code unchanged since a clean check" if t.reused \
                else f"{t.seconds:.1f} s"
            print(f"ok   {t.template_id} ({t.variants} variant(s), {how})", flush=True)
        print("\n".join(t.probe_lines()), flush=True)

    # A supervisor's SIGTERM (a CI step's timeout, `kill`) stops the check as Ctrl-C does: the
    # checks are cancelled and their sandboxes and services closed, not orphaned.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        report: CheckReport = asyncio.run(check_templates(templates, seeds=list(range(args.seeds)),
                                                          parallel=args.parallel, isolation=args.isolation,
                                                          variants=args.variants or 0, hold_out=hold_out,
                                                          split=args.split,
                                                          on_template=progress,
                                                          cache=VerdictCache(enabled=False if args.no_cache else None)))
    except KeyboardInterrupt:  # asyncio.run cancelled the checks first: their sandboxes are closed
        print("cua tasks check: interrupted; the templates that finished clean keep their stored verdicts, "
              "and the same command goes on from there", file=sys.stderr)
        return 130
    for problem in _load_problems(args.suites or None):
        failure = VariantFailure(problem.split(":", 1)[0], None, "load", problem)
        report.load_failures.append(failure)
        print("\n".join(failure.lines()))
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=1, default=str))
    print(report.summary())
    return 1 if report.failures else 0


def main(argv: list[str] | None = None) -> int:
    """`python -m cua.tasks_cli list|show|check ...`: the same commands without the
    rest of the `cua` CLI."""
    parser = argparse.ArgumentParser(prog="cua")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["tasks", *(sys.argv[1:] if argv is None else argv)])
    return int(args.func(args) or 0)



def _progress(outcome: Outcome, decided: int, total: int) -> None:
    verdict = "admitted" if outcome.admitted else f"rejected {outcome.rejection}"
    print(f"[{decided}/{total}] {outcome.candidate.template.get('id')}: {verdict}", file=sys.stderr, flush=True)


def synth_main(args: argparse.Namespace) -> int:
    from cua.qa.qa_cache import VerdictCache
    from cua.synth.admit import Candidate, admit, earlier_admissions, store_verdicts, write_suite
    from cua.synth.generators import schema_for
    from cua.synth.schema import generate

    gen = schema_for(args.app)
    if args.suite:
        gen = dataclasses.replace(gen, suite=args.suite)

    if args.model:
        from cua.errors import CuaError
        from cua.synth.propose import propose
        from cua.synth.screenshot import app_screenshot
        from cua.tasks.apps import load_app

        drawn = generate(gen, len(gen.operations) * len(gen.scopes) * gen.phrasings, args.seed)
        examples = [next(g.template for g in drawn if g.chain == chain) for chain in list(gen.operations)[:2]]
        try:
            candidates = propose(args.model, app=args.app, schema=str(load_app(args.app).schema), examples=examples,
                                 suite=gen.suite, rounds=args.count, seed=args.seed,
                                 image=app_screenshot(gen.suite, examples[0]))
        except ValueError as exc:
            print(f"cua tasks synth: {exc}", file=sys.stderr)
            return 2
        except CuaError as exc:  # unreachable, refused the key, overloaded, answered nonsense: no proposals
            print(f"cua tasks synth: the model could not be asked: {exc}", file=sys.stderr)
            return 3
    else:
        candidates = [Candidate(g.chain, g.template, g.scope, g.phrasing) for g in generate(gen, args.count, args.seed)]
    # A supervisor's SIGTERM stops the admission as Ctrl-C does: the checks in flight are cancelled
    # and their sandboxes closed; what was decided is written, and the same command goes on from it.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    # What an earlier run into OUT admitted is kept while its digests stand, as a verdict is reused
    # (CUA_QA_CACHE=off checks every candidate again): a long admission grows its --count run by run.
    earlier = earlier_admissions(args.out, gen.suite) if VerdictCache().enabled and not args.no_cache else {}
    admission = admit(gen.suite, candidates, parallel=args.parallel, earlier=earlier, on_outcome=_progress)
    summary = admission.summary_lines()
    decided = f"{len(admission.outcomes)} of the {len(candidates)} candidates decided"
    stopped = f" (interrupted: {decided})" if admission.interrupted else ""
    # The admission's figures head the suite file, so that the suite carries its own diversity report.
    header = (f"# Synthesised by cua tasks synth --app {args.app} --count {args.count} --seed {args.seed} "
              f"(generator version {gen.version}); admitted by judge QA on seeds "
              f"{', '.join(map(str, admission.seeds))}{stopped}.\n" + "".join(f"# {line}\n" for line in summary[2:]))
    path, rejected = write_suite(args.out, gen.suite, admission, header)
    for line in summary:
        print(line)
    if path is None:
        print(f"admitted none: no suite written; the rejections are in {rejected}")
    else:
        stored = store_verdicts(path, gen.suite, admission, cache=(cache := VerdictCache()))
        print(f"wrote {path} and {rejected}")
        if cache.enabled:
            print(f"stored {stored} verdicts in {cache.folder} (cua tasks check reuses them on seed 0)")
    if admission.interrupted:
        print(f"cua tasks synth: interrupted, {decided}: what was decided is written, and the same command "
              "goes on from it", file=sys.stderr)
        return 130
    return 0 if path is not None else 1


if __name__ == "__main__":
    sys.exit(main())
