"""Server metrics: counters and latency summaries, served as Prometheus text or JSON.

Plain in-process counters (no client library): the server is one process, and the
numbers users ask for are few (sandboxes live/created/crashed, requests by type and
error code, latency quantiles per request type).
"""

from __future__ import annotations

import gc
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["LatencySummary", "Metrics"]

_QUANTILES = (0.5, 0.9, 0.95, 0.99)


@dataclass
class LatencySummary:
    """Count and sum over all time; quantiles over the most recent `window` samples."""

    window: int = 2048
    count: int = 0
    total: float = 0.0
    recent: deque[float] = field(default_factory=deque)

    def add(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.recent.append(seconds)
        if len(self.recent) > self.window:
            self.recent.popleft()

    def quantiles(self) -> dict[float, float]:
        if not self.recent:
            return {}
        ordered = sorted(self.recent)
        last = len(ordered) - 1
        return {q: ordered[min(last, round(q * last))] for q in _QUANTILES}


class Metrics:
    def __init__(self) -> None:
        self.sandboxes: Counter[str] = Counter()  # created, closed, crashed, reaped, create_failed
        self.requests: Counter[str] = Counter()
        self.errors: Counter[tuple[str, str]] = Counter()
        self.latency: dict[str, LatencySummary] = {}
        self.connections_total = 0
        self.connections_open = 0
        self.protocol_errors = 0
        #: Frames not sent because the client read too slowly (stream frames, console/dialog events).
        self.frames_dropped = 0
        #: Connections closed because the client stopped reading, or sent no hello in time.
        self.slow_consumers = 0
        self.hello_timeouts = 0
        #: Handshakes refused for a browser Origin or Host not on the allow-list.
        self.refused_origins = 0
        #: Refreshes of the frozen heap (heap.py), and how long the last one's collection took.
        self.heap_refreshes = 0
        self.heap_refresh_ms = 0.0

    def request_done(self, rtype: str, seconds: float, error_code: str | None = None) -> None:
        self.requests[rtype] += 1
        if error_code is not None:
            self.errors[(rtype, error_code)] += 1
        summary = self.latency.get(rtype)
        if summary is None:
            summary = self.latency[rtype] = LatencySummary()
        summary.add(seconds)

    def as_dict(self, *, live: int) -> dict[str, Any]:
        return {
            "sandboxes": {"live": live, **dict(self.sandboxes)},
            "connections": {"open": self.connections_open, "total": self.connections_total},
            "protocol_errors": self.protocol_errors,
            "frames_dropped": self.frames_dropped,
            "slow_consumers": self.slow_consumers,
            "hello_timeouts": self.hello_timeouts,
            "refused_origins": self.refused_origins,
            "heap": {"frozen_objects": gc.get_freeze_count(), "refreshes": self.heap_refreshes,
                     "last_refresh_ms": self.heap_refresh_ms},
            "requests": dict(self.requests),
            "errors": [{"type": t, "code": c, "count": n} for (t, c), n in sorted(self.errors.items())],
            "latency_ms": {
                t: {"count": s.count, "mean": 1000 * s.total / s.count if s.count else 0.0,
                    **{f"p{round(q * 100)}": 1000 * v for q, v in s.quantiles().items()}}
                for t, s in sorted(self.latency.items())
            },
        }

    def prometheus(self, *, live: int) -> str:
        lines = [
            "# HELP cua_sandboxes_live Sandboxes currently open.",
            "# TYPE cua_sandboxes_live gauge",
            f"cua_sandboxes_live {live}",
            "# HELP cua_sandboxes_total Sandbox lifecycle events.",
            "# TYPE cua_sandboxes_total counter",
        ]
        for what in ("created", "closed", "crashed", "reaped", "create_failed"):
            lines.append(f'cua_sandboxes_total{{event="{what}"}} {self.sandboxes[what]}')
        lines += [
            "# TYPE cua_connections_open gauge",
            f"cua_connections_open {self.connections_open}",
            "# TYPE cua_connections_total counter",
            f"cua_connections_total {self.connections_total}",
            "# HELP cua_protocol_errors_total Malformed or out-of-protocol frames received.",
            "# TYPE cua_protocol_errors_total counter",
            f"cua_protocol_errors_total {self.protocol_errors}",
            "# HELP cua_frames_dropped_total Stream frames and console/dialog events not sent to a slow client.",
            "# TYPE cua_frames_dropped_total counter",
            f"cua_frames_dropped_total {self.frames_dropped}",
            "# TYPE cua_slow_consumers_total counter",
            f"cua_slow_consumers_total {self.slow_consumers}",
            "# TYPE cua_hello_timeouts_total counter",
            f"cua_hello_timeouts_total {self.hello_timeouts}",
            "# HELP cua_refused_origins_total Handshakes refused for their Origin or Host header.",
            "# TYPE cua_refused_origins_total counter",
            f"cua_refused_origins_total {self.refused_origins}",
            "# HELP cua_heap_frozen_objects Objects frozen out of the cycle collector's walks.",
            "# TYPE cua_heap_frozen_objects gauge",
            f"cua_heap_frozen_objects {gc.get_freeze_count()}",
            "# TYPE cua_heap_refreshes_total counter",
            f"cua_heap_refreshes_total {self.heap_refreshes}",
            "# HELP cua_requests_total Requests answered, by type.",
            "# TYPE cua_requests_total counter",
        ]
        lines += [f'cua_requests_total{{type="{t}"}} {n}' for t, n in sorted(self.requests.items())]
        lines += ["# HELP cua_request_errors_total Requests answered with an error, by type and code.",
                  "# TYPE cua_request_errors_total counter"]
        lines += [f'cua_request_errors_total{{type="{t}",code="{c}"}} {n}' for (t, c), n in sorted(self.errors.items())]
        lines += ["# HELP cua_request_seconds Request latency (quantiles over recent requests).",
                  "# TYPE cua_request_seconds summary"]
        for t, s in sorted(self.latency.items()):
            for q, v in s.quantiles().items():
                lines.append(f'cua_request_seconds{{type="{t}",quantile="{q}"}} {v:.6f}')
            lines.append(f'cua_request_seconds_sum{{type="{t}"}} {s.total:.6f}')
            lines.append(f'cua_request_seconds_count{{type="{t}"}} {s.count}')
        return "\n".join(lines) + "\n"
