"""Deterministic, state-based judges: getters (state queries or the agent's answer),
comparators, combinators, and a side-effect diff. An LLM is never the judge.

`StateJudge(JudgeSpec)` implements `cua.task.Judge`; task files declare the spec
(see tasks/README.md)."""

from cua.judges.judge import StateJudge
from cua.judges.spec import JudgeSpec

__all__ = ["JudgeSpec", "StateJudge"]
