#!/usr/bin/env bash
# Set up (idempotent), then judge QA on every bundled suite (each template's oracle passes,
# doing nothing and its near miss fail, verdicts are deterministic; CUA_CHECK_SEEDS seeds
# per template, default 1), then the whole test suite with real Chromium, Xvfb and QEMU.
# Judge QA reuses a template's clean verdict while its template, suite, app and the judge code
# are unchanged, by digest (cua.qa.qa_cache); CUA_QA_CACHE=off checks every template again.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
.venv/bin/cua tasks check --seeds "${CUA_CHECK_SEEDS:-1}" --parallel 2 --isolation shared
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
