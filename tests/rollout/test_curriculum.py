"""The rollout service's curriculum (issue 35, item 2): success per template and variant
as moving averages, kept across restarts; draws by uniform, target-band and
learning-progress rules; `GET /curriculum`; requests that ask for a `sample`.

The rules are shown moving the sampler with outcomes fed in directly; the service is
shown counting scored rollouts only (never a masked group), drawing a request's tasks
from its pool, and answering `GET /curriculum` the same after a restart, on the fake kind
with a real HTTP model server."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import httpx
import pytest
from test_rollout_records import STOP, Model, post  # tests/rollout's own helpers

from cua.policy.service import serving_app
from cua.rollout.curriculum import Curriculum, CurriculumError, CurriculumSettings
from cua.rollout.server import serve_rollouts

EASY, HARD, EDGE = "t.easy@1", "t.hard@1", "t.edge@1"
POOL = [EASY, HARD, EDGE]


def _feed(c: Curriculum, outcomes: dict[str, list[bool]]) -> None:
    for task_id, passes in outcomes.items():
        for i, passed in enumerate(passes):
            c.record(task_id, i % 3, passed)


def _draws(c: Curriculum, n: int = 3000) -> Counter[str]:
    return Counter(c.sample(POOL, n, random.Random(7)))


def test_the_band_rule_moves_draws_to_templates_inside_the_band() -> None:
    outcomes = {EASY: [True] * 12, HARD: [False] * 12, EDGE: [True, False] * 6}
    uniform = Curriculum(CurriculumSettings(rule="uniform"))
    band = Curriculum(CurriculumSettings(rule="band", band_low=0.2, band_high=0.8, explore=0.1))
    for c in (uniform, band):
        _feed(c, outcomes)
    assert max(_draws(uniform).values()) < 1.2 * min(_draws(uniform).values())  # about a third each
    drawn = _draws(band)
    assert drawn[EDGE] > 0.85 * 3000  # (1 - 0.1) + 0.1/3 of the draws
    assert drawn[EASY] > 0 and drawn[HARD] > 0  # the exploration share: nothing starves
    view = band.view(POOL)
    assert view.templates[EDGE].probability == pytest.approx(0.9 + 0.1 / 3)
    assert view.templates[EASY].success == pytest.approx(1.0) and view.templates[HARD].success == 0.0


def test_unknown_templates_are_drawn_until_known() -> None:
    c = Curriculum(CurriculumSettings(rule="band", min_episodes=3, explore=0.0))
    _feed(c, {EASY: [True] * 5, HARD: [False] * 5})
    chances = c.probabilities(POOL)
    assert chances[EDGE] == 1.0 and chances[EASY] == chances[HARD] == 0.0
    _feed(c, {EDGE: [True] * 3})  # known now, and out of the band: every weight is 0
    assert c.probabilities(POOL) == pytest.approx({t: 1 / 3 for t in POOL})  # all exploration then


def test_the_progress_rule_prefers_a_template_whose_success_moves() -> None:
    c = Curriculum(CurriculumSettings(rule="progress", explore=0.1))
    _feed(c, {EASY: [True] * 20, HARD: [False] * 20, EDGE: [False] * 14 + [True] * 6})  # EDGE is being learnt
    drawn = _draws(c)
    assert drawn[EDGE] > 0.8 * 3000
    assert c.view(POOL).templates[EDGE].progress > 0.3 > c.view(POOL).templates[EASY].progress


def test_the_state_is_kept_across_restarts_and_a_bad_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "curriculum.json"
    c = Curriculum(CurriculumSettings(rule="band"), path)
    c.record_many([(EDGE, 0, True), (EDGE, 1, False), (EASY, 0, True)])
    again = Curriculum(CurriculumSettings(rule="band"), path)
    assert again.view().model_dump() == c.view().model_dump()
    assert again.view().variants == 3
    path.write_text('{"format": "something else"}')
    with pytest.raises(CurriculumError, match="move it away"):
        Curriculum(CurriculumSettings(), path)
    with pytest.raises(ValueError, match="band_low"):
        CurriculumSettings(rule="band", band_low=0.9, band_high=0.1)


async def test_the_service_counts_scored_rollouts_draws_samples_and_keeps_its_curriculum(tmp_path: Path) -> None:
    pool = ["fake.set_counter@1", "fake.submit_form@1"]
    settings = CurriculumSettings(rule="band")
    async with serving_app(Model().app) as url:
        async with serve_rollouts(tmp_path, local=True, max_retries=0, curriculum=settings) as running:
            data = await post(running, {"policy": {"base_url": f"{url}/v1", "model": "m"}, "frames": "none",
                                        "sample": {"pool": pool, "count": 6, "seeds": 5, "rng_seed": 3},
                                        "group_size": 2})
            groups = data["groups"]
            assert len(groups) == 6 and {g["task_id"] for g in groups} <= set(pool)
            assert all(0 <= g["seed"] < 5 for g in groups)
            async with httpx.AsyncClient(headers=running.headers) as http:
                view = (await http.get(f"{running.url}/curriculum")).json()
                refused = await http.post(f"{running.url}/rollouts", json={
                    "policy": {"base_url": f"{url}/v1", "model": "m"}, "tasks": pool, "sample": {"pool": pool}})
            assert refused.status_code == 400  # tasks and a sample at once: which is meant?
            drawn = Counter(g["task_id"] for g in groups)
            for task_id, n in drawn.items():
                assert view["templates"][task_id]["episodes"] == 2 * n  # every rollout of every group
            assert view["settings"]["rule"] == "band"
        # a group masked by a lost rollout is no evidence: nothing is counted
        lost = Model(answer=lambda n: STOP if n == 0 else 503)
        async with serving_app(lost.app) as lost_url, \
                serve_rollouts(tmp_path, local=True, max_retries=0, curriculum=settings) as running:
            data = await post(running, {"policy": {"base_url": f"{lost_url}/v1", "model": "m"}, "frames": "none",
                                        "tasks": [pool[0]], "group_size": 2})
            assert data["groups"][0]["masked"]
            async with httpx.AsyncClient(headers=running.headers) as http:
                after = (await http.get(f"{running.url}/curriculum")).json()
    assert after["templates"] == view["templates"]  # kept across the restart, and the masked group not counted


@pytest.mark.parametrize("band", ["0.9,0.1", "0.2", "a,b", "0.2,1.5"])
def test_a_bad_band_is_a_usage_error(band: str, capsys: pytest.CaptureFixture[str]) -> None:
    from cua.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["rollout", "serve", "--local", "--curriculum", "band", "--band", band])
    assert exit_.value.code == 2
    assert "LOW,HIGH" in capsys.readouterr().err


def test_an_unreadable_curriculum_state_stops_the_service_before_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cua.cli import main

    state = tmp_path / "state.json"
    state.write_text("not json")
    assert main(["rollout", "serve", "--local", "--curriculum-state", str(state), "--runs", str(tmp_path)]) == 2
    assert "move it away" in capsys.readouterr().err
