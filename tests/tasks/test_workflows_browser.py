"""A workflow across two apps in real Chromium (suite workflows): one browser sandbox runs
mail and calendar, each on its own origin, and starts on the apps page linking both; the
template's params come from both apps' databases, its oracle acts in both (reaching each by
name), and its judge reads both. The ordered checkpoints give the near miss, which stops
before the reply, partial credit; the pass still needs every check, and damage in the other
app (an extra calendar event deleted) fails the task."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from cua.actions import Action
from cua.episode import OracleAgent, open_local, run_episode
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.launcher import origins
from cua.observation import Observation
from cua.state import AppStateQuery, DomQuery, NavigationQuery, SqlQuery
from cua.task import TaskInstance
from cua.tasks.oracle import run_steps
from cua.tasks.registry import get_template

pytestmark = pytest.mark.slow

TEMPLATE = "workflows.flight_clears_calendar@1"


class StepsAgent:
    """Plays steps in the task-file vocabulary (as an oracle does), filled from the task's params."""

    name = "steps"

    def __init__(self, steps: list[Any]) -> None:
        self.steps = steps
        self._actions: AsyncIterator[Action] | None = None

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._actions = run_steps(ctx, self.steps, instance.params)

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._actions is not None
        try:
            return AgentTurn(actions=[await anext(self._actions)])
        except StopAsyncIteration:
            return AgentTurn()


def test_params_come_from_both_apps_and_the_judge_reads_both() -> None:
    instance = get_template(TEMPLATE).instantiate(1)
    services = [s["name"] for s in instance.sandbox_config["services"]]
    assert services == ["app", "calendar"] and instance.sandbox_config["start_url"] == "about:apps"
    assert instance.params["f"]["code"] in instance.params["f"]["subject"]  # mail's row
    assert instance.params["e"]["title"] in instance.instruction  # calendar's row
    read = {q.service for q in instance.judge.queries() if isinstance(q, (AppStateQuery, SqlQuery))}
    assert read == {"app", "calendar"}


def test_the_workflow_runs_in_both_apps_and_scores_its_checkpoints() -> None:
    instance = get_template(TEMPLATE).instantiate(1)
    e = instance.params["e"]
    # the oracle's whole run, then one more calendar event deleted: damage in the other app
    damage = [*get_template(TEMPLATE).raw["oracle"], {"goto": "app:calendar/month/2026-03"}]

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with open_local(instance.sandbox_kind, {**instance.sandbox_config, "isolation": "shared"}) as handle:
            obs = await handle.reset(seed=instance.seed)
            page = obs.url or ""
            out["links"] = origins(page)
            out["link_texts"] = (await handle.query([DomQuery(selector="nav a", prop="text", all=True)]))[0].value
            out["oracle"] = await run_episode(handle, instance, OracleAgent())
            out["history"] = (await handle.query([NavigationQuery()]))[0].value
            out["near_miss"] = (await run_episode(handle, instance, OracleAgent("near_miss"))).verdict
            other = next(iter(await _other_event(handle, e["id"])), None)
            assert other is not None
            extra = [*damage, {"click": f'.day[data-date="{other["date"]}"] a.dnum'},
                     {"click": f'tr[data-id="{other["id"]}"] a'},
                     {"click": {"selector": ".event button.danger", "text_contains": "Delete"}},
                     {"wait_for": "#delete-confirm"}, {"click": "#delete-confirm"}]
            out["damage"] = (await run_episode(handle, instance, StepsAgent(extra), max_steps=100)).verdict
        return out

    out = asyncio.run(run())
    assert set(out["links"]) == {"mail", "calendar"} and out["links"]["mail"] != out["links"]["calendar"]
    assert out["link_texts"] == ["Mail", "Calendar"]
    visited = {u["url"].split("/")[2] for u in out["history"]["entries"] if u["url"].startswith("http")}
    assert {o.split("/")[2] for o in out["links"].values()} <= visited  # the oracle acted in both apps
    oracle = out["oracle"]
    assert oracle.verdict.passed and oracle.verdict.credit == 1.0, oracle.verdict
    assert oracle.steps >= 20
    near = out["near_miss"]
    assert not near.passed and near.credit == pytest.approx(3 / 5), near  # starred, deleted, added; no reply
    damage_verdict = out["damage"]
    assert not damage_verdict.passed and any(v.startswith("calendar: ") for v in damage_verdict.violations)
    assert damage_verdict.credit == pytest.approx(4 / 5)  # every checkpoint met, but the pass is refused


async def _other_event(handle: Any, not_id: int) -> list[dict[str, Any]]:
    [result] = await handle.query([SqlQuery(service="calendar", query=(
        "SELECT id, date FROM events WHERE organizer_id IS NULL AND recur = 'none' AND all_day = 0 "
        "AND date BETWEEN '2026-03-03' AND '2026-03-28' AND id != ? ORDER BY id LIMIT 1"), params=[not_id])])
    assert result.ok, result
    return list(result.value)
