"""`python3 -m <this package>` or `python3 <this folder>` runs the guest agent."""

import sys

try:
    from .agent import main
except ImportError:  # run as a folder: python3 /opt/cua-guest
    from agent import main  # type: ignore[no-redef]

sys.exit(main())
