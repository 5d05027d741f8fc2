"""Latency figures as the benchmarks print them: the median and the 95th percentile of a
sample, in milliseconds."""

from __future__ import annotations

import statistics

__all__ = ["p50", "spread"]


def p50(samples_ms: list[float]) -> float:
    return statistics.median(samples_ms)


def spread(samples_ms: list[float], places: int = 2) -> str:
    """`p50=<x> ms p95=<y> ms` of one group of samples (at least two)."""
    p95 = statistics.quantiles(samples_ms, n=20)[-1]
    return f"p50={p50(samples_ms):.{places}f} ms p95={p95:.{places}f} ms"
