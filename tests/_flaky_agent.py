"""An agent for `cua eval --agent _flaky_agent:make` (tests/eval/test_eval_repeats.py): it
solves a task by its oracle, but on the fake suite's `set_counter` only on every other try
of a variant, so repeats of that variant disagree; every turn reports token counts."""

from __future__ import annotations

from collections import Counter

from cua.episode.agent import AgentTurn, EpisodeContext, NoopAgent, OracleAgent
from cua.observation import Observation
from cua.task import TaskInstance
from cua.trajectory import TokenTrace

#: Tries seen so far per variant (task at seed), in this process.
TRIES: Counter[tuple[str, int]] = Counter()
#: What every turn reports: 100 prompt tokens, 64 of them for the image, and 10 generated.
TOKENS = TokenTrace(prompt_tokens=100, completion_tokens=10, image_tokens=64)


class FlakyAgent:
    name = "flaky"

    def __init__(self, instance: TaskInstance) -> None:
        key = (instance.task_id, instance.seed)
        attempt = TRIES[key]
        TRIES[key] += 1
        fails = instance.task_id.startswith("fake.set_counter") and attempt % 2 == 1
        self._inner: NoopAgent | OracleAgent = NoopAgent() if fails else OracleAgent("oracle")

    async def begin(self, instance: TaskInstance, ctx: EpisodeContext) -> None:
        await self._inner.begin(instance, ctx)

    async def turn(self, observation: Observation) -> AgentTurn:
        turn = await self._inner.turn(observation)
        return turn.model_copy(update={"tokens": TOKENS})


def make(instance: TaskInstance) -> FlakyAgent:
    return FlakyAgent(instance)
