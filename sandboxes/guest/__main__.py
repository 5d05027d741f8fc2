"""`python3 -m <this package>` or `python3 <this folder>` runs the guest agent."""

import os
import sys

if not __package__:  # run as a folder: find the sibling modules even under `python3 -I`
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    from .agent import main
except ImportError:  # run as a folder: python3 /opt/cua-guest
    from agent import main  # type: ignore[no-redef,import-not-found]

sys.exit(main())
