"""What `cua eval` shows a person: a progress bar while it runs, a table when it ends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from cua.episode.episode import EpisodeRecord
from cua.eval.reliability import Reliability
from cua.eval.runner import RunSummary

__all__ = ["print_summary", "progress"]


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _mark(passed: bool | None) -> str:
    return "-" if passed is None else ("pass" if passed else "fail")


def _print_streams(summary: RunSummary, console: Console) -> None:
    """Each stream: success by position without resets (and with, when that arm ran)."""
    for stream in summary.streams.values():
        table = Table(title=f"stream {stream.id} · {stream.length} tasks, one sandbox, no resets")
        for name in ("position", "task", "seed", "no reset", "own reset"):
            table.add_column(name)
        for place in stream.positions:
            table.add_row(str(place.position), place.task_id, str(place.seed), _mark(place.passed),
                          _mark(place.passed_reset))
        console.print(table)
        console.print(f"stream={stream.id} success={_figure(stream.success)} "
                      f"success_with_resets={_figure(stream.success_reset)}")


def _print_demo(summary: RunSummary, console: Console) -> None:
    """The two arms of a --demo run: success and steps, by task and over the run."""
    demo = summary.demo
    if demo is None:
        return
    table = Table(title="with a demo vs without")
    for name in ("task", "success (demo)", "success (none)", "steps (demo)", "steps (none)"):
        table.add_column(name, justify="left" if name == "task" else "right")
    rows = [*demo.by_task.items(), ("all", {"with_demo": demo.with_demo, "without_demo": demo.without_demo})]
    for task, arms in rows:
        with_demo, without = arms["with_demo"], arms["without_demo"]
        table.add_row(task, _figure(with_demo.success_rate), _figure(without.success_rate),
                      _figure(with_demo.mean_steps), _figure(without.mean_steps))
    console.print(table)
    console.print(f"demo success={_figure(demo.with_demo.success_rate)} "
                  f"without={_figure(demo.without_demo.success_rate)} gain={_figure(demo.success_gain)}"
                  + (f" no_demo_found={demo.with_demo.no_demo_found}" if demo.with_demo.no_demo_found else ""))


@contextmanager
def progress(total: int, *, enabled: bool = True) -> Iterator[Callable[[EpisodeRecord], None]]:
    """A progress bar counting episodes and passes; yields the callback to call per episode."""
    if not enabled:
        yield lambda _record: None
        return
    console = Console(file=sys.stderr)
    passed = 0
    with Progress(TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        task = bar.add_task("eval", total=total, status="")

        def advance(record: EpisodeRecord) -> None:
            nonlocal passed
            passed += bool(record.verdict and record.verdict.passed)
            bar.update(task, advance=1, status=f"passed {passed} · last {record.task_id}")

        yield advance


def print_summary(summary: RunSummary, out: Path | None = None, *, console: Console | None = None) -> None:
    """The table of success by task, the failure classes, and the one-line totals. Success is
    over scored episodes (those not lost to the infrastructure after their retries)."""
    console = console or Console(width=None if sys.stdout.isatty() else 140)
    table = Table(title=f"success by task · {summary.agent}", show_lines=False)
    table.add_column("task")
    table.add_column("episodes", justify="right")
    table.add_column("passed", justify="right")
    table.add_column("success", justify="right")
    table.add_column("mean score", justify="right")
    table.add_column("infra errors", justify="right")
    k = summary.repeats
    if k > 1:
        table.add_column(f"pass@{k}", justify="right")
        table.add_column(f"pass^{k}", justify="right")
        table.add_column("flaky", justify="right")

    def reliability(r: Reliability | None) -> list[str]:
        if k == 1:
            return []
        if r is None or r.pass_at_k is None or r.pass_all_k is None:
            return ["-", "-", "-"]
        return [f"{r.pass_at_k:.0%}", f"{r.pass_all_k:.0%}", f"{r.flaky}/{r.variants}"]

    for stats in summary.by_task.values():
        table.add_row(stats.task_id, str(stats.episodes), str(stats.passed), f"{stats.success_rate:.0%}",
                      f"{stats.score_sum / max(1, stats.scored):.2f}", str(stats.infra_errors),
                      *reliability(stats.reliability))
    table.add_section()
    table.add_row("all", str(summary.episodes), str(summary.passed), f"{summary.success_rate:.0%}",
                  f"{summary.mean_score:.2f}", str(summary.infra_errors), *reliability(summary.reliability))
    console.print(table)
    if summary.failures:
        console.print("failures: " + ", ".join(f"{name}={n}" for name, n in summary.failures.items()))
    step = summary.timings_p50_ms.get("step_act")
    console.print(f"episodes={summary.episodes} scored={summary.scored} passed={summary.passed} "
                  f"success_rate={summary.success_rate:.3f} infra_errors={summary.infra_errors} "
                  f"agent_errors={summary.agent_errors} retried_attempts={summary.attempts_retried} "
                  f"wall_s={summary.wall_s:.1f}" + (f" step_p50_ms={step:.1f}" if step is not None else "")
                  + (f" interrupted=true not_run={summary.not_run}" if summary.interrupted else ""))
    if k > 1 and summary.reliability is not None:
        r = summary.reliability
        console.print(f"repeats={k} pass_at_k={_figure(r.pass_at_k)} pass_all_k={_figure(r.pass_all_k)} "
                      f"flaky={r.flaky}/{r.variants} score_variance={_figure(r.score_variance)}"
                      + (f" short={r.short} (variants with fewer than {k} scored tries: left out)" if r.short else ""))
    if summary.utility_under_attack is not None:
        console.print(f"utility={_figure(summary.utility)} utility_under_attack={_figure(summary.utility_under_attack)} "
                      f"attack_success_rate={_figure(summary.attack_success_rate)} unsafe={summary.unsafe}")
    if summary.tokens is not None or summary.time_s:
        tokens = summary.tokens
        console.print("time_s " + " ".join(f"{name}={value:.1f}" for name, value in summary.time_s.items())
                      + (f" tokens prompt={tokens.prompt} completion={tokens.completion}"
                         + (f" image={tokens.image}" if tokens.image is not None else "") if tokens else "")
                      + (f" cost_usd={summary.cost_usd:.4f}" if summary.cost_usd is not None else ""))
    _print_streams(summary, console)
    _print_demo(summary, console)
    if out is not None:
        console.print(f"episodes: {out / 'episodes.jsonl'}  summary: {out / 'summary.json'}  "
                      f"manifest: {out / 'manifest.json'}")
