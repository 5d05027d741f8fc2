"""What every test shares: a test that adds a suite from a path leaves no trace in the next.

`cua.tasks.registry.use_path` adds a suite to the process's registry and to
`$CUA_SUITE_PATHS` (for child processes), as a command should; in a test session that
would hand one test's suite folder to every later test that walks all templates.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _suite_paths_restored() -> Iterator[None]:
    from cua.tasks.registry import SUITE_PATHS_ENV, reload

    before = os.environ.get(SUITE_PATHS_ENV)
    yield
    if os.environ.get(SUITE_PATHS_ENV) != before:
        if before is None:
            os.environ.pop(SUITE_PATHS_ENV, None)
        else:
            os.environ[SUITE_PATHS_ENV] = before
        reload()
