"""`cua eval <product suite> --policy oracle` (issue 31's "done when"): on every real
product, the command a user runs evaluates the first templates of the suite through a `cua
serve` child process, in real Chromium with the product's own server, and the oracle passes
every episode. On the CI's clean clone this is the fresh machine after the README's set-up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cua.cli import main

pytestmark = pytest.mark.slow

#: Every real product's suite.
SUITES = ("wiki_mediawiki", "tracker_trac", "webmail_roundcube", "shop_oscar", "cms_wagtail", "events_pretix")


@pytest.mark.parametrize("suite", SUITES)
def test_the_oracle_passes_a_product_suite_through_cua_eval(suite: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    rc = main(["eval", suite, "--policy", "oracle", "--limit", "2", "--seeds", "1", "--isolation", "shared",
               "--out", str(out), "--no-progress", "--no-report"])
    printed = capsys.readouterr()
    assert rc == 0, printed.err[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["episodes"] == 2 and summary["infra_errors"] == 0, summary["failures"]
    assert summary["passed"] == 2, (summary["failures"], printed.out[-2000:])
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert [r["tags"]["fidelity"] for r in records] == ["real", "real"]
