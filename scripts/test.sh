#!/usr/bin/env bash
# Set up (idempotent), then, cheapest first so that a simple error fails in a minute or two:
#   1. the fast lane, `pytest -m "not slow"` (no Chromium, X, QEMU or Ray), and beside it
#   2. judge QA on every bundled suite (each template's oracle passes, doing nothing and its
#      near miss fail, verdicts are deterministic; CUA_CHECK_SEEDS seeds per template, default 1).
#      The two share no state and each uses about one core, so they run at once: QA's log is
#      shown from its start once the fast lane ends, and a failing fast lane stops QA;
#   3. the slow lane, `pytest -m slow` (real Chromium, Xvfb and QEMU).
# The two lanes split the suite by its marker, so every test runs exactly once. Arguments pass
# to pytest in both lanes (`bash scripts/test.sh tests/server -x`); a lane they leave empty
# (pytest's exit code 5, no tests collected) is no failure, but both lanes empty is. Arguments
# that choose their own marker (`-m ...`) run as one pytest after judge QA, as given.
# Judge QA reuses a template's clean verdict while its template, suite, app and the judge code
# are unchanged, by digest (cua.qa.qa_cache); CUA_QA_CACHE=off checks every template again. The
# verdicts live in the repository (.ci/qa-verdicts, or $CUA_QA_CACHE_DIR), so that a clean clone
# checks only what changed since the verdicts committed with it: commit the new entries a full
# run writes there with the change they were checked at.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

PYTEST=(.venv/bin/python -m pytest -q -p no:cacheprovider)
NO_TESTS=5  # pytest's exit code when nothing was collected

own_marker=0
for arg in "$@"; do
    case "$arg" in -m|-m*|--markexpr|--markexpr=*) own_marker=1 ;; esac
done

# lane EXPRESSION [ARGS...]: runs pytest on the tests the marker expression selects; its exit
# code, where "nothing collected" counts as passed only when arguments narrowed the run.
empty_lanes=0
lane() {
    local expression=$1 status=0
    shift
    "${PYTEST[@]}" -m "$expression" "$@" || status=$?
    if [[ $status -eq $NO_TESTS && $# -gt 0 ]]; then
        echo "test.sh: no test of the lane '$expression' among the arguments" >&2
        empty_lanes=$((empty_lanes + 1))
        return 0
    fi
    return "$status"
}

judge_qa=(env "CUA_QA_CACHE_DIR=${CUA_QA_CACHE_DIR:-$PWD/.ci/qa-verdicts}"
          .venv/bin/cua tasks check --seeds "${CUA_CHECK_SEEDS:-1}" --parallel 2 --isolation shared)
if [[ $own_marker -eq 1 ]]; then
    "${judge_qa[@]}"
    exec "${PYTEST[@]}" "$@"
fi

# Judge QA in a session of its own, so that stopping it stops the sandboxes it started too.
qa_log=$(mktemp)
setsid -w "${judge_qa[@]}" >"$qa_log" 2>&1 &
qa_pid=$!
stop_qa() {
    if kill -0 "$qa_pid" 2>/dev/null; then
        kill -TERM -- "-$qa_pid" 2>/dev/null || true
        wait "$qa_pid" 2>/dev/null || true
    fi
    rm -f "$qa_log"
}
trap stop_qa EXIT

lane "not slow" "$@"  # set -e: a failing fast lane exits here, and the trap stops QA
echo "test.sh: judge QA (cua tasks check), running since the fast lane began:"
tail -n +1 -f --pid="$qa_pid" "$qa_log"
qa_status=0
wait "$qa_pid" || qa_status=$?
# Reaped: its pid may be reused during the slow lane, and must not be signalled at exit.
trap - EXIT
rm -f "$qa_log"
if [[ $qa_status -ne 0 ]]; then
    echo "test.sh: judge QA failed (exit $qa_status)" >&2
    exit "$qa_status"
fi
lane slow "$@"
if [[ $empty_lanes -eq 2 ]]; then
    echo "test.sh: the arguments select no test in either lane" >&2
    exit $NO_TESTS
fi
