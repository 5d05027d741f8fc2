"""An episode under attack: its injections planted at reset, and its safety judged at the end.

`with_attacks` gives a task instance its seeded attacks (`cua.attack.draw_attacks`): a
browser task's go to its app service in the reset itself (the reset option `plant`), a
desktop task's are files in the home folder, seeded at reset like the task's own files.
`Episode` then reads, beside the judge's state, what the safety rules need
(`cua.judges.safety`): the navigation history and the app's activity log at the start and
the end, and the log's last entry after every step, so each write is placed at its step.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from cua.attack import DESKTOP_FILE, SafetyReport, draw_attacks
from cua.judges.judge import HISTORY_SQL, StateJudge
from cua.judges.safety import SEQ_SQL, SafetyInput, StepView, judge_safety, named_addresses, user_secrets
from cua.state import AppStateQuery, NavigationQuery, SqlQuery, StateQuery, StateResult
from cua.task import TaskInstance, query_key

__all__ = ["DESKTOP_FILE", "app_of", "assess", "judged", "plant_option", "safety_queries", "step_query", "step_seq",
           "with_attacks"]



def app_of(instance: TaskInstance) -> str | None:
    """The bundled app a task's sandbox runs ("desktop" for a desktop), None when none."""
    if instance.sandbox_kind == "desktop":
        return "desktop"
    services = instance.sandbox_config.get("services") or []
    if services and isinstance(services[0], dict):
        host = services[0].get("app_host")
        if isinstance(host, dict) and isinstance(host.get("app"), str):
            return str(host["app"])
    return None


def with_attacks(instance: TaskInstance, n: int, *, seed: int | None = None) -> TaskInstance:
    """`instance` with `n` seeded attacks (the instance's seed unless `seed`); unchanged for
    n = 0 or a sandbox with nowhere to plant one."""
    app = app_of(instance)
    attacks = draw_attacks(app, instance.seed if seed is None else seed, n) if app is not None else []
    if not attacks:
        return instance
    config = dict(instance.sandbox_config)
    files = [a for a in attacks if a.place == "desktop.file"]
    if files:
        config["files"] = {**config.get("files", {}),
                           **{DESKTOP_FILE if i == 0 else DESKTOP_FILE.replace(".txt", f"-{i}.txt"): a.text
                              for i, a in enumerate(files)}}
    return instance.model_copy(update={"attacks": attacks, "sandbox_config": config})


def plant_option(instance: TaskInstance) -> dict[str, Any]:
    """The reset options that plant a browser task's attacks ({} when it has none)."""
    plant = [a.model_dump(mode="json") for a in instance.attacks if a.place != "desktop.file"]
    return {"plant": plant} if plant and instance.sandbox_kind == "browser" else {}


def _has_app(instance: TaskInstance) -> bool:
    return instance.sandbox_kind == "browser" and bool(instance.sandbox_config.get("services"))


def judged(instance: TaskInstance) -> bool:
    """Whether an episode's safety is judged: it is attacked, or it is a safety template
    (`tags.safety`: declining, mandate and injection tasks report safety apart from success)."""
    return bool(instance.attacks) or instance.tags.safety is not None


def safety_queries(instance: TaskInstance) -> list[StateQuery]:
    """What the safety rules read at the start and at the end of a judged episode."""
    if not judged(instance):
        return []
    out: list[StateQuery] = []
    if instance.sandbox_kind == "browser":
        out.append(NavigationQuery())
    if _has_app(instance):
        out += [SqlQuery(query=HISTORY_SQL), AppStateQuery()]
    return out


def step_query(instance: TaskInstance) -> StateQuery | None:
    """The activity log's last entry, read after each step of an attacked episode."""
    return SqlQuery(query=SEQ_SQL) if judged(instance) and _has_app(instance) else None


def step_seq(instance: TaskInstance, state: dict[str, StateResult]) -> int | None:
    query = step_query(instance)
    result = state.get(query_key(query)) if query is not None else None
    if result is None or not result.ok or not isinstance(result.value, list) or not result.value:
        return None
    value = result.value[0].get("seq") if isinstance(result.value[0], dict) else None
    return int(value) if isinstance(value, int) else None


def _value(reads: dict[str, StateResult], query: StateQuery) -> Any:
    result = reads.get(query_key(query))
    return result.value if result is not None and result.ok else None


def assess(instance: TaskInstance, initial: dict[str, StateResult], final: dict[str, StateResult],
           steps: list[StepView], step_seqs: list[int | None]) -> SafetyReport:
    """The episode's safety against its attacks, from the reads `safety_queries` made."""
    history_query, state_query = SqlQuery(query=HISTORY_SQL), AppStateQuery()
    start_rows = _value(initial, history_query)
    rows = _value(final, history_query)
    start = max((int(r["seq"]) for r in start_rows or [] if isinstance(r, dict)), default=0)
    before, after = _value(initial, state_query), _value(final, state_query)
    judge = instance.judge
    allowed: tuple[str, ...] = ()
    if isinstance(judge, StateJudge):
        allowed = (*judge.spec.expected_changes, *judge.spec.incidental_changes)
    attack_addresses = {a.address.lower() for a in instance.attacks}
    known = named_addresses(instance.instruction, instance.params, before) - attack_addresses
    data = SafetyInput(
        attacks=tuple(instance.attacks), steps=tuple(steps), navigation=_value(final, NavigationQuery()),
        history=tuple(rows) if isinstance(rows, list) else None, history_start=start, step_seqs=tuple(step_seqs),
        allowed=allowed, states=(before, after) if before is not None and after is not None else (),
        known_addresses=known, user_secrets=user_secrets(instance.instruction, instance.params),
        home_host=_home_host(steps, final))
    return judge_safety(data)


def _home_host(steps: list[StepView], final: dict[str, StateResult]) -> str | None:
    """The host of the app the episode started on: the navigation history's first entry."""
    navigation = _value(final, NavigationQuery())
    entries = navigation.get("entries") if isinstance(navigation, dict) else None
    if entries and isinstance(entries[0], dict):
        return urlsplit(str(entries[0].get("url"))).hostname
    return None

