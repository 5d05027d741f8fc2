"""`cua eval --repeats K --prices FILE` (issue 35, item 3): every variant tried K times,
summary.json gives pass@K, pass^K, flaky variants and score variance per task and overall,
the run's tokens and their cost from the user's price table, and where the time went; a
resumed run keeps each try once; the export carries the same columns. On the fake suite
with an agent that fails every other try of one task (tests/_flaky_agent.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _eval_common import report_cards
from _flaky_agent import TRIES

from cua.cli import main
from cua.eval.reliability import Tries, pass_all_k, pass_at_k, reliability
from cua.eval.runner import read_records

SEEDS = 2
K = 3


def test_pass_at_k_and_pass_all_k_are_the_unbiased_estimators() -> None:
    assert pass_at_k(3, 1, 3) == 1.0 and pass_all_k(3, 1, 3) == 0.0
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10) and pass_all_k(5, 2, 2) == pytest.approx(1 / 10)
    assert pass_at_k(4, 0, 1) == 0.0 and pass_all_k(4, 4, 4) == 1.0
    with pytest.raises(ValueError, match="1 <= k <= n"):
        pass_at_k(2, 1, 3)  # fewer tries than k: no estimate, never a guess


def test_a_variant_short_of_k_scored_tries_is_left_out_not_failed() -> None:
    full = Tries(passed=[True, False, True], scores=[1.0, 0.0, 1.0])
    short = Tries(passed=[False], scores=[0.0])  # two tries lost to the infrastructure
    r = reliability([full, short], 3)
    assert (r.variants, r.short, r.flaky) == (1, 1, 1)
    assert r.pass_at_k == 1.0 and r.pass_all_k == 0.0
    assert r.score_variance == pytest.approx(2 / 9)


def test_eval_repeats_gives_pass_at_k_pass_all_k_flakiness_and_cost(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    TRIES.clear()
    out = tmp_path / "run"
    prices = tmp_path / "prices.yaml"
    prices.write_text('"*": {prompt: 2.0, completion: 10.0, image: 1.0}\n')
    args = ["eval", "fake", "--seeds", str(SEEDS), "--repeats", str(K), "--local", "--agent", "_flaky_agent:make",
            "--prices", str(prices), "--out", str(out), "--no-progress", "--no-report"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    got = list(read_records(out / "episodes.jsonl"))
    assert len(got) == 2 * SEEDS * K
    assert sorted({(r.task_id, r.seed, r.repeat) for r in got}) == sorted(
        (r.task_id, r.seed, k) for r in got for k in range(K) if r.repeat == 0)
    assert len({r.trajectory for r in got}) == len(got)  # every try has its own trajectory

    summary = json.loads((out / "summary.json").read_text())
    assert summary["repeats"] == K
    # set_counter passes on tries 0 and 2 of each variant, fails on try 1; submit_form always passes
    flaky = summary["by_task"]["fake.set_counter@1"]["reliability"]
    steady = summary["by_task"]["fake.submit_form@1"]["reliability"]
    assert (flaky["pass_at_k"], flaky["pass_all_k"], flaky["flaky"], flaky["variants"]) == (1.0, 0.0, SEEDS, SEEDS)
    assert (steady["pass_at_k"], steady["pass_all_k"], steady["flaky"]) == (1.0, 1.0, 0)
    assert summary["pass_at_k"] == 1.0 and summary["pass_all_k"] == 0.5
    assert summary["reliability"]["flaky_rate"] == 0.5
    assert f"pass_at_k=1.000 pass_all_k=0.500 flaky={SEEDS}/{2 * SEEDS}" in printed

    # tokens: every turn that acted reported 100 prompt (64 image) and 10 completion tokens
    turns = summary["steps_total"]
    assert turns > 0
    assert summary["tokens"] == {"prompt": 100 * turns, "completion": 10 * turns, "image": 64 * turns}
    expected = (36 * turns * 2.0 + 64 * turns * 1.0 + 10 * turns * 10.0) / 1e6
    assert summary["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert set(summary["time_s"]) == {"policy", "environment", "judge"} and summary["time_s"]["environment"] > 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["runner"]["repeats"] == K and manifest["runner"]["prices"]["prompt"] == 2.0

    # a resume keeps every try once (a try is task, seed and repeat)
    lines = (out / "episodes.jsonl").read_text().splitlines(keepends=True)
    (out / "episodes.jsonl").write_text("".join(lines[:5]))
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    again = list(read_records(out / "episodes.jsonl"))
    assert sorted((r.task_id, r.seed, r.repeat) for r in again) == sorted((r.task_id, r.seed, r.repeat) for r in got)

    # the export carries the try and the usage columns
    export = tmp_path / "export"
    assert main(["export", str(out), "--out", str(export), "--format", "jsonl", "--rows", "episode",
                 "--images", "path"]) == 0
    rows = [json.loads(line) for f in sorted((export / "data").glob("*.jsonl")) for line in f.read_text().splitlines()]
    assert sorted({row["repeat"] for row in rows}) == list(range(K))
    acted = [row for row in rows if row["num_steps"]]
    assert acted and all(row["episode_prompt_tokens"] == 100 * row["num_steps"]
                         and row["episode_image_tokens"] == 64 * row["num_steps"] for row in acted)
    assert all(row["episode_judge_ms"] is not None for row in rows)


@pytest.mark.parametrize(("table", "message"), [
    ('{"other-model": {"prompt": 1, "completion": 1}}', "has no price for the model"),
    ('{"*": {"prompt": -1, "completion": 1}}', "prompt"),
    ("[1, 2]", "must map model names to prices"),
])
def test_a_price_table_that_cannot_price_the_run_is_refused_before_it_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, message: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(table)
    out = tmp_path / "run"
    assert main(["eval", "fake", "--local", "--prices", str(prices), "--out", str(out), "--no-progress"]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()  # nothing was run or written


@pytest.mark.slow
def test_the_report_shows_pass_at_k_pass_all_k_and_cost(tmp_path: Path) -> None:
    """What a person sees: the report's cards, in a real Chromium."""
    TRIES.clear()
    out = tmp_path / "run"
    prices = tmp_path / "prices.json"
    prices.write_text('{"*": {"prompt": 2.0, "completion": 10.0}}')
    assert main(["eval", "fake", "--seeds", str(SEEDS), "--repeats", str(K), "--local", "--agent", "_flaky_agent:make",
                 "--prices", str(prices), "--out", str(out), "--no-progress", "--no-report"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    cards = {f"pass@{K}": "100.0%", f"pass^{K}": "50.0%", "flaky variants": f"{SEEDS}/{2 * SEEDS}",
             "cost $": f"{summary['cost_usd']:.4f}"}
    assert report_cards(out, cards) == cards
