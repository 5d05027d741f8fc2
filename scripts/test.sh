#!/usr/bin/env bash
# Set up (idempotent), then run the whole test suite with real Chromium, Xvfb and QEMU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
