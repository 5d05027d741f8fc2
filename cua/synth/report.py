"""The diversity report of synthesised suites as written: what `cua tasks diversity` prints.

Admission prints the diversity of one run; the suites under `tasks/suites/synth_<app>/` are
what users train and test on. This reads them back: each template's provenance (the chain
and scope it was composed from, in `<suite>.admitted.jsonl` beside the suite's folder), its
tags and oracle, and its judge-state signature on the admission seeds, and reports the counts
by app, apps spanned, skill, tier, split, oracle length, operations chained and answers, and
how many distinct signatures.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cua.synth.admit import Admission, Candidate, Outcome, admission_key, provenance_path, signature

__all__ = ["SYNTH_PREFIX", "diversity_report", "synth_suites"]

#: The suites `cua tasks synth` writes: `synth_<app>`.
SYNTH_PREFIX = "synth_"


def synth_suites(names: Sequence[str] = ()) -> list[Any]:
    """The chosen suites (names, folders or task files), else every registered `synth_*` suite. A
    folder or file is read, not registered: a report may read a suite of the same name as a
    registered one (`cua tasks synth --out DIR` writes synth_<app>, as the kit's own is named)."""
    from cua.tasks.registry import is_suite_path, load_suite_path, resolve_suite, suites

    if names:
        return [load_suite_path(name) if is_suite_path(name) else resolve_suite(name) for name in names]
    return [suite for name, suite in sorted(suites().items()) if name.startswith(SYNTH_PREFIX)]


def _provenance(suite: Any) -> dict[str, dict[str, Any]]:
    """id -> provenance, from the file admission wrote beside the suite's folder (empty if none)."""
    folder = Path(suite.source)
    path = provenance_path(folder.parent, suite.name) if folder.is_dir() else None
    if path is None or not path.is_file():
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {str(row.get("id")): row for row in rows if isinstance(row, dict)}


def _signature(template: Any, provenance: dict[str, Any], seeds: Sequence[int], digests: Any) -> str:
    """The signature admission recorded, while the admission stands (its seeds are these and
    the template's key is the one it was admitted under: the template, its app's data and the
    judge code are unchanged, so the signature is too); else computed again, which resets the
    app on every seed for each of the template's parameters."""
    recorded, admission = provenance.get("signature"), provenance.get("admission")
    if (isinstance(recorded, str) and isinstance(admission, dict) and admission.get("seeds") == list(seeds)
            and admission.get("key")
            and admission["key"] == admission_key(template, seeds, admission.get("isolation"), digests)):
        return recorded
    return signature(template, seeds)


def _outcome(template: Any, provenance: dict[str, Any], seeds: Sequence[int], digests: Any) -> Outcome:
    # a chain is its app's: todo's delete and notes' delete are two chains
    app = (template.raw.get("tags") or {}).get("app", "?")
    candidate = Candidate(f"{app}/{provenance.get('chain') or '?'}", template.raw,
                          str(provenance.get("scope") or ""), int(provenance.get("phrasing", -1)))
    return Outcome(candidate, True, signature=_signature(template, provenance, seeds, digests))


def diversity_report(chosen: Iterable[Any], seeds: Sequence[int] = (0, 1, 2)) -> list[str]:
    """One line per suite (its templates, chains, apps), then the diversity over them all."""
    from cua.qa.qa_cache import Digests

    digests = Digests()
    lines: list[str] = []
    outcomes: list[Outcome] = []
    for suite in chosen:
        known = _provenance(suite)
        mine = [_outcome(t, known.get(t.id, {}), seeds, digests) for t in suite.templates.values()]
        outcomes += mine
        chains = {o.candidate.generator for o in mine}
        apps = {str((o.candidate.template.get("tags") or {}).get("app", "?")) for o in mine}
        lines.append(f"suite {suite.name}: templates={len(mine)} chains={len(chains)} apps={','.join(sorted(apps))}")
    report = Admission(outcomes)
    return lines + report.diversity_lines()
