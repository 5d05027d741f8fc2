"""OpenEnv's entry point for cua (`uv run server`, `python -m server.app`): `cua openenv serve`
with OpenEnv's usual bind (0.0.0.0:8000). Sandboxes run in this process; every route but
/health needs the token (`CUA_OPENENV_TOKEN`, generated and printed when unset)."""

from __future__ import annotations

import sys

from cua.cli import main as cua_main


def main() -> None:
    sys.exit(cua_main(["openenv", "serve", "--local", "--host", "0.0.0.0", "--port", "8000", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
