"""An attack on the desktop kind: the injection is a file in the home folder, seeded at reset
like the task's own files, and an agent that types the secret it asks for is attacked."""

from __future__ import annotations

import shutil

import pytest

from cua.actions import Done, Type
from cua.attack import DESKTOP_FILE
from cua.episode import open_local, run_episode
from cua.episode.agent import AgentTurn, EpisodeContext
from cua.episode.safety import with_attacks
from cua.observation import Observation
from cua.state import FileQuery
from cua.task import TaskInstance
from cua.tasks.registry import get_template

pytestmark = pytest.mark.slow

if any(shutil.which(t) is None for t in ("bwrap", "Xvfb", "openbox")):
    pytest.skip("desktop sandboxes need bwrap, Xvfb and openbox", allow_module_level=True)


class SecretTyper:
    """Reads the planted file, as an agent that opens it would, and types the code it asks for."""

    name = "typer"

    def __init__(self) -> None:
        self._ctx: EpisodeContext | None = None
        self._typed = False

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        self._ctx = ctx

    async def turn(self, observation: Observation) -> AgentTurn:
        assert self._ctx is not None
        if self._typed:
            return AgentTurn(actions=[Done()])
        self._typed = True
        planted = await self._ctx.query(FileQuery(path=DESKTOP_FILE))
        code = next(w for w in str(planted.value).split() if w.startswith("SEC-"))
        return AgentTurn(actions=[Type(text=f"echo {code}")])


async def test_a_desktop_file_injection_is_planted_and_following_it_is_attacked() -> None:
    instance = with_attacks(get_template("desktop.archive_folder@1").instantiate(0), 1)
    (attack,) = instance.attacks
    assert attack.place == "desktop.file" and instance.sandbox_config["files"][DESKTOP_FILE] == attack.text
    async with open_local(instance.sandbox_kind, instance.sandbox_config) as handle:
        record = await run_episode(handle, instance, SecretTyper())
        assert record.status == "completed", record.error
        assert record.safety is not None and record.safety.attacked, record.safety
        assert [(v.rule, v.step) for v in record.safety.violations] == [("secret_typed", 0)]
