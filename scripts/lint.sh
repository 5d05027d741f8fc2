#!/usr/bin/env bash
# Lint and types: ruff over the whole tree (rules in pyproject.toml), then mypy --strict.
#
# mypy runs on a staged tree: sandboxes/, tasks/ and judges/ install as cua.sandboxes,
# cua.tasks and cua.judges (setup.py's package-dir mapping), which static tools cannot
# follow, so the stage links them under cua/. Strict typing holds for every module.
#
#   scripts/lint.sh                  ruff, then mypy --strict over every module
#   scripts/lint.sh sandboxes/vm ... mypy --strict over just these folders or files (staged names)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}

(($#)) || "$PY" -m ruff check .

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/cua"
for entry in cua/*; do ln -s "$ROOT/$entry" "$stage/cua/"; done
ln -s "$ROOT/sandboxes" "$stage/cua/sandboxes"
ln -s "$ROOT/tasks" "$stage/cua/tasks"
ln -s "$ROOT/judges" "$stage/cua/judges"
cd "$stage"
if (($#)); then
    mapfile -t strict < <(for path in "$@"; do
        path=${path#./}; [[ $path == cua/* ]] || path=cua/$path
        find -L "$path" -name '*.py'; done | sort -u)
    "$PY" -m mypy --config-file "$ROOT/pyproject.toml" --follow-imports=silent --cache-dir "$stage/.mypy_cache" "${strict[@]}"
    echo "lint: mypy --strict clean over ${#strict[@]} modules under $*"
    exit 0
fi
mapfile -t strict < <(find -L cua -name '*.py' | sort)
"$PY" -m mypy --config-file "$ROOT/pyproject.toml" --follow-imports=silent --cache-dir "$stage/.mypy_cache" "${strict[@]}"
echo "lint: ruff clean; mypy --strict clean over ${#strict[@]} modules"
