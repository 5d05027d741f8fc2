#!/usr/bin/env bash
# Set everything up, then evaluate the oracle policy on the bundled todo suite through a
# real sandbox server: a first run that proves the whole chain works on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/cua eval todo --policy oracle --parallel 2 --seeds 2 "$@"
