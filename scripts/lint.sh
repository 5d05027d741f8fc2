#!/usr/bin/env bash
# Lint and types: ruff over the whole tree (rules in pyproject.toml), then mypy --strict.
#
# sandboxes/, tasks/ and judges/ are the packages cua.sandboxes, cua.tasks and cua.judges
# through the links under cua/ (committed to git), so mypy reads them by those names when
# it walks cua/. Strict typing holds for every module.
#
#   scripts/lint.sh                  ruff, then mypy --strict over every module
#   scripts/lint.sh sandboxes/vm ... mypy --strict over just these folders or files
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PY:-$ROOT/.venv/bin/python}

for link in sandboxes tasks judges; do
    [[ -L cua/$link && $(readlink "cua/$link") == ../$link ]] || {
        echo "lint: cua/$link must be the link ../$link (git checkout -- cua/$link)" >&2; exit 2; }
done

(($#)) || "$PY" -m ruff check .

cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
mypy=("$PY" -m mypy --config-file "$ROOT/pyproject.toml" --follow-imports=silent --cache-dir "$cache")
if (($#)); then
    # a path under sandboxes/, tasks/ or judges/ is read through cua/'s link, by its module name
    mapfile -t strict < <(for path in "$@"; do
        path=${path#./}; [[ $path == cua/* ]] || path=cua/$path
        find -L "$path" -name '*.py' -not -path '*/__pycache__/*'; done | sort -u)
    "${mypy[@]}" "${strict[@]}"
    echo "lint: mypy --strict clean over ${#strict[@]} modules under $*"
    exit 0
fi
mapfile -t strict < <(find -L cua -name '*.py' -not -path '*/__pycache__/*' | sort)
"${mypy[@]}" "${strict[@]}"
echo "lint: ruff clean; mypy --strict clean over ${#strict[@]} modules"
