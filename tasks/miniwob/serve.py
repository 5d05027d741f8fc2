"""Run the MiniWoB++ service: `python -m cua.tasks.miniwob.serve [--untimed] --port P --socket S`.

Speaks the app contract (tasks/apps/CONTRACT.md) like a bundled app: pages on TCP
127.0.0.1:P, control endpoints on the unix socket S; port and socket default to
$CUA_APP_PORT and $CUA_APP_SOCKET, which a sandbox sets for its services. Prints
"ready" once both listen. `--untimed` turns MiniWoB's episode time limits off (the
option is in the sandbox config the instance records, and every episode row says so).
"""

from __future__ import annotations

import asyncio
import sys

from cua.tasks.apps.serve import serve_app, service_args
from cua.tasks.miniwob.app import MiniWobApp

UNTIMED_FLAG = "--untimed"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    timed = UNTIMED_FLAG not in argv
    args = service_args("python -m cua.tasks.miniwob.serve [--untimed]", [a for a in argv if a != UNTIMED_FLAG],
                        named=False)
    app = MiniWobApp(timed=timed)
    app.reset(args.seed)
    asyncio.run(serve_app(app, args.port, args.socket))
    return 0


if __name__ == "__main__":
    sys.exit(main())
