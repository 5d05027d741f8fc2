"""Repeats and reliability: pass@k, pass^k and flakiness of a run that ran each variant
(a template at a seed) k times (`cua eval --repeats k`).

A single run of a variant says whether an agent *can* pass it; repeats say whether it does
so *reliably*, which is what a deployed agent is judged by (HAL, tau-bench's pass^k):

- pass@k: the chance that at least one of k tries passes;
- pass^k (`pass_all_k`): the chance that all k tries pass;
- flaky: a variant whose tries disagree (some pass, some fail);
- score variance: how much a variant's score moves between tries (population variance of
  its tries, averaged over variants).

Both chances use the unbiased estimators over the n scored tries of a variant with c passes
(Chen et al. 2021 for pass@k; the same counting for pass^k): 1 - C(n-c, k)/C(n, k) and
C(c, k)/C(n, k). A try lost to the infrastructure (after its retries) is no evidence about
the agent, so it is not a try; a variant left with fewer than k scored tries has no pass@k
and is counted in `short`, never scored as a failure.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import comb

from pydantic import BaseModel, Field

__all__ = ["Reliability", "Tries", "pass_all_k", "pass_at_k", "reliability"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k tries drawn from n (c of them passed) passes."""
    _check(n, c, k)
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_all_k(n: int, c: int, k: int) -> float:
    """The chance that all k tries drawn from n (c of them passed) pass."""
    _check(n, c, k)
    return comb(c, k) / comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")


class Tries(BaseModel):
    """The scored tries of one variant: whether each passed, and its score."""

    passed: list[bool] = Field(default_factory=list)
    scores: list[float] = Field(default_factory=list)

    def add(self, passed: bool, score: float) -> None:
        self.passed.append(passed)
        self.scores.append(score)

    @property
    def flaky(self) -> bool:
        return 0 < sum(self.passed) < len(self.passed)

    @property
    def variance(self) -> float:
        n = len(self.scores)
        if n < 2:
            return 0.0
        mean = sum(self.scores) / n
        return sum((s - mean) ** 2 for s in self.scores) / n


class Reliability(BaseModel):
    """pass@k, pass^k and flakiness over a set of variants (a task's, or the whole run's)."""

    #: k: the tries per variant asked for.
    k: int
    #: Variants with at least k scored tries (those the figures are over).
    variants: int = 0
    #: Variants with fewer than k scored tries (tries lost to the infrastructure): left out.
    short: int = 0
    pass_at_k: float | None = None
    pass_all_k: float | None = None
    #: Variants whose tries disagree, and their share of `variants`.
    flaky: int = 0
    flaky_rate: float | None = None
    #: The mean over variants of the population variance of a variant's scores.
    score_variance: float | None = None


def reliability(variants: Iterable[Tries], k: int) -> Reliability:
    """The figures over `variants`, each variant's estimate weighted equally."""
    out = Reliability(k=k)
    at, every, variance = 0.0, 0.0, 0.0
    for tries in variants:
        n = len(tries.passed)
        if n < k:
            out.short += 1
            continue
        c = sum(tries.passed)
        out.variants += 1
        at += pass_at_k(n, c, k)
        every += pass_all_k(n, c, k)
        variance += tries.variance
        out.flaky += tries.flaky
    if out.variants:
        out.pass_at_k = round(at / out.variants, 6)
        out.pass_all_k = round(every / out.variants, 6)
        out.flaky_rate = round(out.flaky / out.variants, 6)
        out.score_variance = round(variance / out.variants, 6)
    return out
