"""A curriculum for the rollout service: it tracks how often each template (and each
variant: a template at a seed) is passed, and picks the next tasks by a rule.

An RL run that samples tasks uniformly spends most of its rollouts where they teach
nothing: on tasks the policy always passes (every reward 1, no advantage) and on tasks it
never passes (every reward 0). GRPO-style trainers feel this twice, since a group whose
rewards are all equal has zero advantage. The rules:

- `uniform`: every template of the pool alike;
- `band`: templates whose success is inside a target band (default 20-80%), and those
  not yet known (fewer than `min_episodes` scored), are drawn; the rest only by the
  exploration share;
- `progress`: learning progress (Portelas et al. 2020; Kanitscheider et al. 2021): the
  distance between a fast and a slow moving average of success, so a template whose
  success is moving is drawn more, whether it rises or falls (forgetting); unknown
  templates first.

Every rule mixes in `explore` of uniform draws, so no template starves and a template
that left the band is seen again when the policy changes. Success is an exponential moving
average (`alpha`) of the scored rollouts: a masked or lost rollout is no evidence and is
never counted. The state is kept in a JSON file (written whole, atomically, after every
update) and read back at start, so a restarted service goes on where it was.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = ["Curriculum", "CurriculumError", "CurriculumSettings", "CurriculumView", "Rule", "SuccessStats"]

Rule = Literal["uniform", "band", "progress"]


class CurriculumError(ValueError):
    """A curriculum that cannot be used: bad settings, or a state file that is not one."""


class CurriculumSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rule: Rule = "uniform"
    #: The `band` rule's target success, inclusive.
    band_low: float = Field(0.2, ge=0.0, le=1.0)
    band_high: float = Field(0.8, ge=0.0, le=1.0)
    #: Weight of the newest outcome in the success average; the slow average's is a fifth of it.
    alpha: float = Field(0.2, gt=0.0, le=1.0)
    #: Share of draws made uniformly over the pool, whatever the rule.
    explore: float = Field(0.1, ge=0.0, le=1.0)
    #: Scored rollouts before a template's success counts as known.
    min_episodes: int = Field(3, ge=1)

    @model_validator(mode="after")
    def _band(self) -> CurriculumSettings:
        if self.band_low > self.band_high:
            raise ValueError(f"band_low {self.band_low} is above band_high {self.band_high}")
        return self

    @property
    def slow_alpha(self) -> float:
        return self.alpha / 5


class SuccessStats(BaseModel):
    """Scored rollouts of one template or variant, and its moving averages of success."""

    model_config = ConfigDict(extra="forbid")
    episodes: int = 0
    passes: int = 0
    #: Fast and slow exponential moving averages of success (None before the first).
    success: float | None = None
    slow: float | None = None

    def add(self, passed: bool, alpha: float, slow_alpha: float) -> None:
        value = 1.0 if passed else 0.0
        self.episodes += 1
        self.passes += passed
        self.success = value if self.success is None else self.success + alpha * (value - self.success)
        self.slow = value if self.slow is None else self.slow + slow_alpha * (value - self.slow)

    @property
    def progress(self) -> float:
        return abs((self.success or 0.0) - (self.slow or 0.0))


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")
    format: Literal["cua.curriculum"] = "cua.curriculum"
    version: Literal[1] = 1
    templates: dict[str, SuccessStats] = Field(default_factory=dict)
    #: "<template id>#<seed>" -> its stats.
    variants: dict[str, SuccessStats] = Field(default_factory=dict)


class TemplateView(BaseModel):
    episodes: int
    passes: int
    success: float | None
    progress: float
    known: bool
    #: The chance that the next draw from the whole known pool is this template.
    probability: float


class CurriculumView(BaseModel):
    """`GET /curriculum`: the rule, its settings, and every template's figures."""

    settings: CurriculumSettings
    path: str | None
    templates: dict[str, TemplateView]
    variants: int


class Curriculum:
    """See the module docstring. `path`: the state file (None: kept in memory only)."""

    def __init__(self, settings: CurriculumSettings | None = None, path: Path | None = None) -> None:
        self.settings = settings or CurriculumSettings()
        self.path = path
        self._state = self._load() if path is not None and path.exists() else _State()

    # --- the record ---

    def record(self, task_id: str, seed: int, passed: bool) -> None:
        """One scored rollout of `task_id` at `seed` (never a masked or lost one)."""
        a, slow = self.settings.alpha, self.settings.slow_alpha
        self._state.templates.setdefault(task_id, SuccessStats()).add(passed, a, slow)
        self._state.variants.setdefault(f"{task_id}#{seed}", SuccessStats()).add(passed, a, slow)

    def record_many(self, outcomes: Iterable[tuple[str, int, bool]]) -> None:
        """Several rollouts (a group's), saved once."""
        for task_id, seed, passed in outcomes:
            self.record(task_id, seed, passed)
        self.save()

    def stats(self, task_id: str) -> SuccessStats:
        return self._state.templates.get(task_id) or SuccessStats()

    # --- the rule ---

    def weights(self, pool: Sequence[str]) -> dict[str, float]:
        """The rule's weight of each template of `pool` (before the exploration share)."""
        s = self.settings
        out: dict[str, float] = {}
        for task_id in pool:
            stats = self.stats(task_id)
            known = stats.episodes >= s.min_episodes and stats.success is not None
            if s.rule == "uniform" or not known:
                out[task_id] = 1.0
            elif s.rule == "band":
                assert stats.success is not None
                out[task_id] = 1.0 if s.band_low <= stats.success <= s.band_high else 0.0
            else:
                out[task_id] = stats.progress
        return out

    def probabilities(self, pool: Sequence[str]) -> dict[str, float]:
        """The chance of each template of `pool` on one draw: the rule's share, plus the
        exploration share spread evenly (all of it when the rule weighs every template 0)."""
        pool = list(dict.fromkeys(pool))
        if not pool:
            return {}
        weights = self.weights(pool)
        total = sum(weights.values())
        explore = self.settings.explore if total > 0 else 1.0
        return {t: (1 - explore) * (weights[t] / total if total > 0 else 0.0) + explore / len(pool) for t in pool}

    def sample(self, pool: Sequence[str], count: int, rng: random.Random) -> list[str]:
        """`count` templates drawn from `pool` (with replacement) by the rule."""
        if not pool:
            raise CurriculumError("the curriculum's pool is empty")
        chances = self.probabilities(pool)
        return rng.choices(list(chances), weights=list(chances.values()), k=count)

    # --- persistence ---

    def view(self, pool: Sequence[str] | None = None) -> CurriculumView:
        known = list(self._state.templates) if pool is None else list(pool)
        chances = self.probabilities(known)
        templates = {}
        for task_id in known:
            stats = self.stats(task_id)
            templates[task_id] = TemplateView(
                episodes=stats.episodes, passes=stats.passes,
                success=round(stats.success, 6) if stats.success is not None else None,
                progress=round(stats.progress, 6), known=stats.episodes >= self.settings.min_episodes,
                probability=round(chances.get(task_id, 0.0), 6))
        return CurriculumView(settings=self.settings, path=str(self.path) if self.path else None,
                              templates=templates, variants=len(self._state.variants))

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(self._state.model_dump_json(indent=1), encoding="utf-8")
        os.replace(tmp, self.path)

    def _load(self) -> _State:
        assert self.path is not None
        try:
            return _State.model_validate(json.loads(self.path.read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError, ValidationError) as exc:
            raise CurriculumError(f"{self.path} is not a curriculum state this service can read "
                                  f"({type(exc).__name__}); move it away to start afresh") from None
