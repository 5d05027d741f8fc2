"""`cua eval SUITE... --policy P --parallel N --out DIR`: run, judge, record, summarise.

By default the episodes run through a real sandbox server started as a child process
on a loopback port (the same websocket path remote users take); `--server URL` uses a
running `cua serve`, and `--local` drives sandboxes in process without a server.
Every episode writes its trajectory to OUT/trajectories/<task>__s<seed>/ (check a run with
`cua trajectory validate OUT`); OUT/manifest.json says how the run was made, and the run
ends by writing its report (OUT/report/index.html, see `cua report`).

An infrastructure fault (a crashed browser, a lost server, an unreachable model) is
retried on a fresh sandbox up to --retries times, each lost attempt kept in the
trajectory, and never scored against the agent; a lost server is waited for (and a child
server restarted). A rerun into a folder that holds a run refuses, unless --resume: then
finished episodes are kept and the rest run, provided the run is the same experiment
(same tasks, seeds, policy and settings; --force overrides). Ctrl-C stops cleanly: the
finished episodes stay, the summary is written, and --resume finishes the run.

`--stream [FILE]` runs the tasks in order in one sandbox without resets, each judged on the
state the earlier ones left (`cua.eval.stream`); `--demo TRAJ_DIR|auto` gives the policy a
similar task's trajectory in its prompt and runs the same instances without it too
(`cua.eval.demo`): summary.json compares by position, or by arm.

Before any sandbox starts, a policy's model server is asked whether it is there
(`GET /models` of an OpenAI-compatible endpoint, `/v1/health` of a policy server): one
that cannot be reached stops the run at once. So does one lost during the run: when the
first episodes to end (or any 3 in a row) all failed to reach the model, no more start.

Exit code 0 when the run completed, whatever the scores; 2 for bad input (nothing run);
3 when the model could not be reached (finished episodes are kept: --resume goes on);
130 when it was interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from cua.argtypes import real_number, snapshot_period, whole_number
from cua.console import add_variant_arguments
from cua.desktop_override import add_desktop_arguments
from cua.errors import ErrorRecord, FailureClass

#: Exit codes besides 0 (done) and 130 (interrupted).
EXIT_BAD_INPUT = 2
EXIT_MODEL_UNREACHABLE = 3
#: Episodes in a row that failed to reach the model, after which no more start.
MODEL_DOWN_AFTER = 3


def _seed_list(text: str) -> list[int]:
    parse = whole_number(0)
    seeds = [parse(part.strip()) for part in text.split(",") if part.strip()]
    if not seeds:
        raise argparse.ArgumentTypeError("no seeds given")
    return seeds


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("eval", help="run a task suite with a policy, judge every episode, write JSONL",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("suites", nargs="+", metavar="SUITE",
                   help="suite names (see `cua tasks list`), suite folders or task files, or task ids")
    p.add_argument("--policy", default="oracle",
                   help="oracle | random | noop | http://HOST:PORT (policy server) | openai:MODEL@BASE_URL | "
                        "scripted:FILE.jsonl (default: oracle)")
    p.add_argument("--policy-token", default=os.environ.get("CUA_POLICY_TOKEN"), help="token of a policy server")
    p.add_argument("--family", help="model family for openai:/transformers: policies, e.g. qwen2.5-vl")
    p.add_argument("--parallel", "-j", type=whole_number(1), default=1, help="episodes run at once (default 1)")
    p.add_argument("--seeds", type=whole_number(1), default=1, help="seeds per task template: 0..K-1 (default 1)")
    p.add_argument("--seed-list", type=_seed_list, help="explicit comma-separated seeds (overrides --seeds)")
    p.add_argument("--repeats", type=whole_number(1, 100), default=1, metavar="K",
                   help="tries of every variant (task at seed): summary.json gives pass@K, pass^K and flaky "
                        "variants (default 1)")
    p.add_argument("--attacks", type=whole_number(0, 8), default=0, metavar="N",
                   help="plant N seeded prompt injections in each episode's app (mail body, review, post, banner, "
                        "dialog; a desktop file) and judge its safety: summary.json gives utility under attack and "
                        "the attack success rate (default 0)")
    p.add_argument("--prices", type=Path, metavar="FILE",
                   help="JSON/YAML price table, model -> dollars per million tokens "
                        '({"MODEL": {"prompt": 2.5, "completion": 10.0, "image": 2.5}}, "*" for any model): '
                        "the summary and report give the run's cost")
    p.add_argument("--split", choices=["train", "test", "all"], default="all")
    add_variant_arguments(p, verb="run")
    p.add_argument("--limit", type=whole_number(1), metavar="N",
                   help="run at most N templates of each suite named (the first N in id order); the templates "
                        "left out are printed")
    p.add_argument("--out", type=Path, default=None, help="output folder (default runs/<suite>-<policy>-<time>)")
    p.add_argument("--server", help="ws:// URL of a running `cua serve` (default: start one in process)")
    p.add_argument("--token", default=os.environ.get("CUA_TOKEN"), help="token of that server")
    p.add_argument("--local", action="store_true", help="drive sandboxes in process, without a server")
    p.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                   help="run episodes on Ray actors (one per --parallel slot), spread over the nodes: a cluster "
                        "address, 'auto', or nothing for a local Ray. Sandboxes live on the actor's node: in its "
                        "process, or with --server ws://{node_ip}:PORT/v1/ws at the server of its node. A node "
                        "that dies has its episodes run again on another (up to --retries nodes each)")
    p.add_argument("--ray-cpus", type=real_number(0.0, above=True), default=1.0,
                   help="CPUs Ray reserves per episode actor (default 1)")
    p.add_argument("--isolation", choices=["container", "shared"], help="override browser isolation")
    p.add_argument("--kind", choices=["desktop", "vm"],
                   help="run desktop and vm tasks on this sandbox kind (their configs share apps, files, screen)")
    add_desktop_arguments(p, verb="run")
    p.add_argument("--format", choices=["png", "jpeg", "webp"], default="jpeg", help="screenshot format")
    p.add_argument("--quality", type=whole_number(1, 100), default=80, help="screenshot quality, 1..100 (default 80)")
    p.add_argument("--frames", choices=["all", "last", "none"], default="all",
                   help="screenshots each trajectory keeps (OUT/trajectories/<task>__s<seed>/): every step's, "
                        "the final one, or none (default all)")
    p.add_argument("--snapshots", type=snapshot_period, default="none", metavar="every|N|none",
                   help="keep a snapshot of the state the agent acted on at every step, or every N-th, named by "
                        "reference on the step's line (cua.branch.fork branches from it while the run's sandbox "
                        "holds it: until that sandbox closes); default none")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    s = p.add_argument_group("reset-free and demonstration-conditioned eval")
    s.add_argument("--stream", nargs="?", const="", default=None, metavar="FILE",
                   help="run the tasks in order in ONE sandbox, without resets between them, each judged on the "
                        "state the earlier ones left: the selected instances in order, or FILE's (one TASK_ID[@SEED] "
                        "a line). The tasks must share their sandbox config. Records say the stream and position")
    s.add_argument("--stream-resets", action="store_true",
                   help="with --stream: also run each task after its own reset; the summary compares success by "
                        "position with and without resets")
    s.add_argument("--demo", metavar="TRAJ_DIR|auto",
                   help="give the policy a recorded trajectory of a similar task (its instruction, actions and a "
                        "few downscaled frames) before its task, and run the same instances without it too: the "
                        "summary compares the arms. auto: per task, a passing trajectory of the same template at "
                        "another seed from --demo-from (never the task's own instance)")
    s.add_argument("--demo-from", type=Path, metavar="RUN_DIR", help="the run --demo auto takes its demos from")
    g = p.add_argument_group("the agent and its sampling")
    g.add_argument("--agent", metavar="MODULE:FACTORY",
                   help="a Python agent (the EpisodeAgent protocol, docs/agents.md) instead of --policy")
    g.add_argument("--temperature", type=float, help="sampling temperature sent to the model")
    g.add_argument("--top-p", type=float, help="nucleus sampling top_p sent to the model")
    g.add_argument("--max-tokens", type=int, help="the most tokens the model may generate per turn")
    g.add_argument("--seed", type=int, dest="sampling_seed",
                   help="the model's sampling seed (task seeds are --seeds / --seed-list)")
    g.add_argument("--history", type=int, metavar="N", help="screenshots the prompt keeps, the current one included")
    g.add_argument("--observe", default="screenshot", metavar="WHAT",
                   help="what each observation holds, comma-separated: screenshot, axtree (the accessibility "
                        "tree), focused (the focused element) (default: screenshot)")
    r = p.add_argument_group("resuming and surviving faults")
    r.add_argument("--resume", action="store_true",
                   help="continue the run in --out: keep finished episodes, redo unfinished ones")
    r.add_argument("--force", action="store_true", help="with --resume: continue even if the manifest differs")
    r.add_argument("--retries", type=whole_number(0), default=2,
                   help="infrastructure retries per episode, each kept as an attempt (default 2)")
    r.add_argument("--reconnect-s", type=real_number(0.0), default=300.0,
                   help="how long a lost sandbox server is waited for before episodes fail (default 300)")
    p.add_argument("--no-report", action="store_true", help="do not write OUT/report/ at the end")
    p.set_defaults(func=main)


OBSERVE_PARTS = ("screenshot", "axtree", "focused")


def _observe(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from cua.observation import ObserveOptions

    parts = {part.strip() for part in args.observe.split(",") if part.strip()}
    unknown = sorted(parts - set(OBSERVE_PARTS))
    if unknown or not parts:
        raise ValueError(f"--observe {args.observe!r}: choose from {', '.join(OBSERVE_PARTS)}")
    try:
        return ObserveOptions(format=args.format, quality=args.quality, screenshot="screenshot" in parts,
                              axtree="axtree" in parts, focused="focused" in parts)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"--{str(first['loc'][0]).replace('_', '-')}: {first['msg']}") from None


#: PolicyOptions fields whose flag has another name.
_FLAGS = {"history_images": "history", "seed": "seed", "max_tokens": "max-tokens", "top_p": "top-p"}


def _policy_options(args: argparse.Namespace) -> Any:
    from pydantic import ValidationError

    from cua.policy.base import PolicyOptions

    try:
        return PolicyOptions(family=args.family, temperature=args.temperature, top_p=args.top_p,
                             max_tokens=args.max_tokens, seed=args.sampling_seed, history_images=args.history,
                             top_logprobs=None)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0])
        raise ValueError(f"--{_FLAGS.get(field, field.replace('_', '-'))}: {first['msg']}") from None


def _policy_kind(spec: str) -> str:
    if spec in ("oracle", "random", "noop"):
        return spec
    return "policy_server" if spec.startswith(("http://", "https://")) else spec.partition(":")[0]


def _price(args: argparse.Namespace) -> Any:
    """The run's model price from `--prices` (None without it); ValueError (a PriceError) for a
    table that cannot price this run's model."""
    if args.prices is None:
        return None
    from cua.eval.agents import policy_model
    from cua.eval.costs import load_price

    model = None if args.agent else policy_model(args.policy)
    return load_price(args.prices, model or args.agent or args.policy)


def _policy_facts(args: argparse.Namespace, options: Any) -> dict[str, Any]:
    """The manifest's policy: what acted and how it was asked to sample (never a token)."""
    from cua.eval.agents import policy_model

    if args.agent:
        return {"spec": args.agent, "kind": "python"}
    return {"spec": args.policy, "kind": _policy_kind(args.policy), "family": args.family,
            "model": policy_model(args.policy),
            "sampling": options.model_dump(mode="json", exclude_none=True, exclude_defaults=True, exclude={"family"})}


def _observe_facts(args: argparse.Namespace, observe: Any) -> dict[str, Any]:
    """The manifest's `observe`: every observation setting in force, defaults included, and the
    screenshots a model's prompt keeps (None where the policy decides it: a policy server, or
    an agent that is not a model)."""
    from cua.policy.engine import DEFAULT_HISTORY_IMAGES

    history = args.history
    if history is None and not args.agent and _policy_kind(args.policy) in ("openai", "transformers"):
        history = DEFAULT_HISTORY_IMAGES
    return {**observe.model_dump(mode="json"), "history": history}


def _limit_per_suite(templates: list[Any], limit: int) -> tuple[list[Any], dict[str, list[str]]]:
    """The first `limit` templates of each suite, and each suite's templates left out."""
    kept: list[Any] = []
    left: dict[str, list[str]] = {}
    taken: dict[str, int] = {}
    for t in templates:
        suite = t.id.split(".", 1)[0]
        if taken.get(suite, 0) < limit:
            taken[suite] = taken.get(suite, 0) + 1
            kept.append(t)
        else:
            left.setdefault(suite, []).append(t.id)
    return kept, left


def _usable(templates: list[Any], names: list[str], seed: int) -> tuple[list[Any], list[str]]:
    """Leave out the templates of suites with load problems that cannot be instantiated (an
    OSWorld task using a metric the adapter lacks), each with why: the file, the task, what
    is unsupported. Suites without problems are not touched (nothing is instantiated)."""
    from cua.tasks.loader import TaskFormatError
    from cua.tasks.selection import suites_with_problems

    troubled = suites_with_problems(names)
    if not troubled:
        return templates, []
    usable, reasons = [], []
    for t in templates:
        if t.id.split(".", 1)[0] in troubled:
            try:
                t.instantiate(seed)
            except TaskFormatError as exc:
                reasons += [str(problem) for problem in exc.problems]
                continue
        usable.append(t)
    return usable, reasons


def main(args: argparse.Namespace) -> int:
    from cua.desktop_override import with_desktop
    from cua.errors import BadRequest
    from cua.eval.runner import make_jobs
    from cua.tasks.selection import SelectionError, selected_templates
    from cua.variant import HoldOut

    if args.snapshots != "none" and args.ray is not None:
        print("cua eval: --snapshots keeps state in the run's own sandboxes, not with --ray", file=sys.stderr)
        return EXIT_BAD_INPUT
    seeds: list[int] = args.seed_list or list(range(args.seeds))
    try:
        hold_out = HoldOut.parse(args.hold_out) if args.hold_out else None
        # a hold-out splits by variant: every template is chosen, and its variants by split
        templates = selected_templates(args.suites, split="all" if hold_out else args.split, kind=args.kind)
        templates = with_desktop(templates, args.desktop_session, args.desktop_look)
        templates, unusable = _usable(templates, args.suites, seeds[0])
    except (SelectionError, BadRequest) as exc:
        print(f"cua eval: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for reason in unusable:
        print(f"cua eval: left out {reason}", file=sys.stderr)
    if args.limit:
        templates, left = _limit_per_suite(templates, args.limit)
        for suite, ids in left.items():
            shown = ", ".join(ids[:8]) + (f", ... ({len(ids) - 8} more)" if len(ids) > 8 else "")
            print(f"cua eval: --limit {args.limit} (per suite): {len(ids)} template(s) of {suite} left out: {shown}",
                  file=sys.stderr)
    if not templates:
        print("cua eval: no task templates selected" + (" that this kit can run" if unusable else ""),
              file=sys.stderr)
        return EXIT_BAD_INPUT
    jobs = make_jobs(templates, seeds, args.repeats, variants=args.variants or 0, hold_out=hold_out, split=args.split)
    try:
        jobs, demos = _stream_and_demo(args, templates, seeds, jobs)
    except BadRequest as exc:  # a stream or demo that cannot run (StreamError, DemoError)
        print(f"cua eval: {exc.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = args.out or _default_out(args)
    try:
        options, observe = _policy_options(args), _observe(args)
        price = _price(args)
        if args.agent:
            from cua.eval.agents import python_agent_factory

            python_agent_factory(args.agent)  # a spec that does not load fails here, before any sandbox
    except ValueError as exc:
        print(f"cua eval: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from cua.eval.manifest import build_manifest

    manifest = build_manifest(
        run_id=out.name, templates=templates, seeds=seeds, split=args.split, policy=_policy_facts(args, options),
        observe=_observe_facts(args, observe),
        runner={"parallel": args.parallel, "retries": args.retries, "frames": args.frames, "repeats": args.repeats,
                "prices": price.model_dump(mode="json") if price is not None else None,
                "sandboxes": "local" if args.local else ("ray" if args.ray is not None else
                                                         ("server" if args.server else "child server")),
                "isolation": args.isolation, "kind": args.kind, **({"attacks": args.attacks} if args.attacks else {}),
                **({"variants": args.variants} if args.variants else {}),
                **({"hold_out": hold_out.text()} if hold_out is not None else {}),
                **({"stream": args.stream or "selected", "stream_resets": args.stream_resets}
                   if args.stream is not None else {}),
                **({"demo": args.demo, "demo_from": str(args.demo_from) if args.demo_from else None}
                   if args.demo else {})})
    from cua.tasks.loader import TaskFormatError

    try:
        return asyncio.run(_run(args, jobs, out, manifest=manifest, options=options, observe=observe, price=price,
                                demos=demos))
    except TaskFormatError as exc:  # a template that refused one of its seeds mid-run
        print(f"cua eval: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _stream_and_demo(args: argparse.Namespace, templates: list[Any], seeds: list[int],
                     jobs: list[Any]) -> tuple[list[Any], dict[tuple[str, int], Any] | None]:
    """The jobs of a `--stream` run (one stream, in order) or a `--demo` run (both arms of
    every job), and each task's demo; `jobs` as they are otherwise. Raises `StreamError` or
    `DemoError` (BadRequest) for what they cannot run, before any sandbox starts."""
    from cua.eval.demo import AUTO, DemoError, DemoSource
    from cua.eval.runner import instantiate_job
    from cua.eval.stream import StreamError, check_stream, parse_stream, stream_jobs

    if args.stream is None and args.stream_resets:
        raise StreamError("--stream-resets compares a --stream with resets; give --stream too")
    if args.demo is None and args.demo_from is not None:
        raise DemoError("--demo-from is where --demo auto takes its demos; give --demo auto too")
    overrides = {"browser": {"isolation": args.isolation}} if args.isolation else {}
    if args.stream is not None:
        clash = [flag for flag, on in (("--ray", args.ray is not None), ("--repeats", args.repeats > 1),
                                       ("--variants", bool(args.variants)), ("--hold-out", bool(args.hold_out)),
                                       ("--attacks", bool(args.attacks)), ("--snapshots", args.snapshots != "none"),
                                       ("--resume", args.resume), ("--demo", args.demo is not None)) if on]
        if clash:
            raise StreamError(f"--stream runs one ordered list in one sandbox; it does not combine with "
                              f"{', '.join(clash)}")
        tasks = parse_stream(Path(args.stream), templates, seeds[0]) if args.stream else \
            [(t, s) for t in templates for s in seeds]
        jobs = stream_jobs(tasks, resets=args.stream_resets)
        check_stream([instantiate_job(j, overrides) for j in jobs if j.stream is not None and j.stream.carried])
        return jobs, None
    if args.demo is None:
        return jobs, None
    from cua.eval.agents import BUILTIN_AGENTS

    clash = [flag for flag, on in (("--agent", bool(args.agent)), ("--ray", args.ray is not None),
                                   ("--resume", args.resume), (f"--policy {args.policy}",
                                                               not args.agent and args.policy in BUILTIN_AGENTS)) if on]
    if clash:
        raise DemoError(f"--demo goes into a policy's context (--policy openai:, transformers:, http://, scripted:); "
                        f"it does not combine with {', '.join(clash)}")
    if args.demo != AUTO and args.demo_from is not None:
        raise DemoError("--demo-from is for --demo auto; --demo DIR names its one trajectory itself")
    source = DemoSource(args.demo, args.demo_from)
    demos = source.demos([instantiate_job(j, overrides) for j in jobs])
    return [j.model_copy(update={"arm": arm}) for arm in ("demo", "none") for j in jobs], demos


def _prepare_out(args: argparse.Namespace, out: Path, jobs: list[Any], manifest: Any) -> tuple[list[Any], list[Any]] | int:
    """Refuse to mix two runs in one folder; for --resume, keep what is finished. Writes the manifest."""
    from cua.eval.manifest import read_manifest
    from cua.eval.runner import resume_state, run_contents

    contents = run_contents(out) if out.exists() else []
    kept: list[Any] = []
    if contents and not args.resume:
        print(f"cua eval: {out} already holds a run ({', '.join(contents)}); --resume continues it, "
              "or choose another --out", file=sys.stderr)
        return 2
    if args.resume and contents:
        try:
            old = read_manifest(out)
        except ValueError as exc:
            old = None
            print(f"cua eval: {out}/manifest.json is unreadable: {exc}", file=sys.stderr)
        if old is None and not args.force:
            print(f"cua eval: {out} has no readable manifest.json, so it cannot be checked to be the same run; "
                  "--force resumes it anyway", file=sys.stderr)
            return 2
        differences = old.differences(manifest) if old is not None else []
        if differences and not args.force:
            print(f"cua eval: {out} holds another run than this command describes (--force resumes it anyway):\n  "
                  + "\n  ".join(differences[:20]), file=sys.stderr)
            return 2
        state = resume_state(out, jobs)
        kept = state.kept
        if old is not None:
            history = old.invocations or [{"argv": old.argv, "created_at": old.created_at}]
            manifest = manifest.model_copy(update={"run_id": old.run_id, "created_at": old.created_at})
            manifest.invocations = [*history, {"argv": manifest.argv, "resumed_at": manifest.created_at,
                                               "forced": bool(differences), "differences": differences}]
        print(f"cua eval: resuming {out}: {len(kept)} finished episode(s) kept, {len(state.todo)} to run"
              + (f", {len(state.removed)} unfinished trajectory folder(s) removed" if state.removed else ""),
              file=sys.stderr)
        jobs = state.todo
    out.mkdir(parents=True, exist_ok=True)
    manifest.write(out)
    return jobs, kept


def _default_out(args: argparse.Namespace) -> Path:
    import time

    policy = "".join(c if c.isalnum() else "-" for c in args.policy)[:40]
    return Path("runs") / f"{'+'.join(args.suites)[:40]}-{policy}-{time.strftime('%Y%m%d-%H%M%S')}"


class _ModelDown:
    """Stops a run whose model is gone: `after` episodes in a row (the first ones, or any run of
    them) that ended failing to reach it. Each such episode already spent its retries, and
    every one still to come would spend them too."""

    def __init__(self, after: int, stop: asyncio.Event) -> None:
        self.after, self.stop = after, stop
        self.streak = 0
        self.last: ErrorRecord | None = None

    @property
    def tripped(self) -> bool:
        return self.streak >= self.after

    def see(self, record: Any) -> None:
        if record.failure != FailureClass.MODEL_UNREACHABLE:
            self.streak = 0
            return
        self.streak += 1
        self.last = record.error
        if self.tripped:
            self.stop.set()


async def _run(args: argparse.Namespace, jobs: list[Any], out: Path, *, manifest: Any, options: Any,
               observe: Any, price: Any, demos: dict[tuple[str, int], Any] | None = None) -> int:
    from cua.episode.openers import sandbox_opener
    from cua.errors import CuaError
    from cua.eval.agents import BUILTIN_AGENTS, agent_factory, preflight
    from cua.eval.report import print_summary, progress
    from cua.eval.runner import LocalExecutor, run_jobs

    policy_kw: dict[str, Any] = {}
    if args.policy_token:
        policy_kw["token"] = args.policy_token
    if args.family:
        policy_kw["family"] = args.family
    overrides = {"browser": {"isolation": args.isolation}} if args.isolation else {}
    stop = _stop_on_signals()
    async with AsyncExitStack() as stack:
        # The policy first: a spec that does not make one, or a model server that is not there,
        # stops the run here, before its folder is written or a sandbox started.
        make_agent: Any = None
        agent_name = args.agent or args.policy
        wanted = not args.agent and args.policy not in BUILTIN_AGENTS and (
            args.ray is None or _policy_kind(args.policy) in ("openai", "policy_server"))
        if args.agent:
            from cua.eval.agents import python_agent_factory

            make_agent, agent_name = python_agent_factory(args.agent)
        elif wanted or args.ray is None:
            try:
                make_agent, agent_name, policy = agent_factory(args.policy, options=options, **policy_kw)
            except (ValueError, OSError) as exc:  # a spec that makes no policy, a script file that is not there
                print(f"cua eval: --policy {args.policy}: {exc}", file=sys.stderr)
                return EXIT_BAD_INPUT
            if policy is not None:
                stack.push_async_callback(policy.aclose)  # type: ignore[attr-defined]
                try:
                    await preflight(policy, agent_name)
                except CuaError as exc:
                    print(f"cua eval: {exc.failure_class}: {exc.message}; nothing was run", file=sys.stderr)
                    return EXIT_BAD_INPUT if exc.fault == "client" else EXIT_MODEL_UNREACHABLE
        if stop.is_set():  # Ctrl-C while the model was being asked: nothing was run
            return 130
        prepared = _prepare_out(args, out, jobs, manifest)
        if isinstance(prepared, int):
            return prepared
        todo, kept = prepared
        if args.ray is not None:
            from cua.eval.ray_backend import ActorSettings, ray_executors

            settings = ActorSettings(
                policy=args.policy, policy_kw=policy_kw, agent=args.agent, observe=observe,
                options=options.model_dump(mode="json", exclude_unset=True), config_overrides=overrides,
                run_dir=str(out.resolve()), frames=args.frames, retries=args.retries, run_id=out.name,
                attacks=args.attacks, local=args.server is None, server=args.server, token=args.token,
                reconnect_s=args.reconnect_s)
            executor = await stack.enter_async_context(ray_executors(args.ray, settings, num_cpus=args.ray_cpus))
        else:
            opener = await stack.enter_async_context(sandbox_opener(
                local=args.local, server=args.server, token=args.token, max_sandboxes=max(8, 2 * args.parallel),
                reconnect_s=args.reconnect_s))

            from cua.eval.demo import demo_agent_factory
            from cua.eval.stream import StreamExecutor

            arms = {"demo": demo_agent_factory(make_agent, demos), "none": make_agent} if demos is not None else None
            kind = StreamExecutor if args.stream is not None else LocalExecutor

            def executor() -> LocalExecutor:
                return kind(opener, make_agent, observe=observe, config_overrides=overrides,
                            run_dir=out, frames=args.frames, run_id=out.name, retries=args.retries,
                            attacks=args.attacks, snapshots=args.snapshots, arms=arms)

        down = _ModelDown(min(MODEL_DOWN_AFTER, len(todo) or 1), stop)
        with progress(len(todo), enabled=not args.no_progress) as advance:
            def on_record(record: Any) -> None:
                advance(record)
                down.see(record)

            parallel = 1 if args.stream is not None else args.parallel  # a stream is one sandbox, in order
            summary, _ = await run_jobs(todo, executor=executor, agent_name=agent_name, parallel=parallel,
                                        out_dir=out, on_record=on_record, previous=kept, stop=stop,
                                        repeats=args.repeats, price=price)
    print_summary(summary, out)
    if not args.no_report:
        _write_report(out)
    if down.tripped:
        last = down.last.message if down.last is not None else "no message"
        print(f"cua eval: model_unreachable: {down.streak} episode(s) in a row could not reach the model "
              f"({last}); no more were started. Finished episodes are kept: "
              f"`cua eval ... --out {out} --resume` goes on once the model answers.", file=sys.stderr)
        return EXIT_MODEL_UNREACHABLE
    if summary.interrupted:
        print(f"cua eval: interrupted; {summary.not_run} episode(s) not run. `cua eval ... --out {out} --resume` "
              "finishes the run.", file=sys.stderr)
        return 130
    return 0


def _stop_on_signals() -> asyncio.Event:
    """SIGINT/SIGTERM set the returned event (the run stops cleanly); a second SIGINT kills."""
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def first(signum: int) -> None:
        if not stop.is_set():
            print(f"\ncua eval: {signal.Signals(signum).name}: stopping; finished episodes are kept "
                  "(again to stop at once)", file=sys.stderr)
            stop.set()
            return
        loop.remove_signal_handler(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, first, signum)
    return stop


def _write_report(out: Path) -> None:
    from cua.report.build import build_report

    try:
        index = build_report(out)
    except Exception as exc:  # the run's files are written; a report that fails must not fail the run
        print(f"cua eval: writing the report failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return
    print(f"report: {index.resolve().as_uri()}")
