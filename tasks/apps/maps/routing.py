"""Directions on Port Alder's street graph (`city`): drive, walk, bike and transit, computed
deterministically (Dijkstra; transit time-dependent over the lines' timetables).

A trip starts and ends at a `Spot`: a point on one block of a street (a place's door, home).
Driving takes each street at its kind's speed, with a few seconds per intersection and a
rush-hour factor on weekdays (07:30-09:30, 16:30-18:30), plus time to find parking at the
destination (most downtown); walking and cycling never use the
expressway. Transit walks to a stop, waits for the next departure of the timetable (every
`headway` minutes from 05:30 until 00:30, half as often again on Sundays), rides, transfers
and walks on; it may also just walk when that is faster. A trip's duration is its arrival
less the departure asked for.
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass, field

from cua.tasks.apps.maps.city import EDGES, LINES, Edge, Line, district_of, node_xy

__all__ = ["MODES", "Leg", "Route", "Spot", "Step", "route", "travel_from"]

MODES = ("drive", "transit", "walk", "bike")
WALK, BIKE = 5.0 / 3.6, 15.0 / 3.6
DRIVE = {"local": 30 / 3.6, "avenue": 50 / 3.6, "highway": 80 / 3.6}
INTERSECTION_S = 6.0
RUSH_FACTOR = 1.35
DWELL_S = 25.0
BOARD_S = 30.0
FIRST_MIN, LAST_MIN = 5 * 60 + 30, 24 * 60 + 30
#: Time a drive allows to find parking at the destination, by district (downtown is hard).
PARKING_S = {"Old Town": 420.0, "Market Quarter": 360.0, "Harbour": 240.0}
DEFAULT_PARKING_S = 120.0



@dataclass(frozen=True)
class Spot:
    """A point on a street block: `edge` and how far along it from its first end (metres)."""

    edge: int
    along: float

    @property
    def xy(self) -> tuple[float, float]:
        e = EDGES[self.edge]
        (ax, ay), (bx, by) = node_xy(e.a), node_xy(e.b)
        t = self.along / e.length
        return ax + (bx - ax) * t, ay + (by - ay) * t


def parking_s(dst: Spot) -> float:
    """The time a drive to `dst` allows to find parking there."""
    return PARKING_S.get(district_of(*dst.xy), DEFAULT_PARKING_S)


@dataclass
class Step:
    """A stretch of one street (drive, walk, bike)."""

    street: str
    distance_m: float
    turn: str  # depart | left | right | straight
    heading: str  # north | south | east | west


@dataclass
class Leg:
    """A part of a transit trip: a walk, or a ride on one line."""

    kind: str  # walk | ride
    distance_m: float
    depart_s: float
    arrive_s: float
    line: str = ""
    headsign: str = ""
    board: str = ""
    alight: str = ""
    stops: int = 0


@dataclass
class Route:
    mode: str
    distance_m: float
    duration_s: float
    steps: list[Step] = field(default_factory=list)
    legs: list[Leg] = field(default_factory=list)
    tolls: bool = False
    highway: bool = False
    parking_s: float = 0.0
    points: list[tuple[float, float]] = field(default_factory=list)

    @property
    def minutes(self) -> int:
        """The duration as the app shows it: whole minutes, rounded half up, at least 1."""
        return max(1, int((self.duration_s + 30) // 60))

    @property
    def rides(self) -> int:
        return sum(1 for leg in self.legs if leg.kind == "ride")


def _usable(edge: Edge, mode: str, avoid_tolls: bool, avoid_highways: bool) -> bool:
    if mode != "drive":
        return edge.kind != "highway"
    return not (avoid_tolls and edge.toll) and not (avoid_highways and edge.kind == "highway")


def _edge_time(edge: Edge, mode: str, length: float) -> float:
    if mode == "walk" or mode == "transit":
        return length / WALK
    if mode == "bike":
        return length / BIKE
    return length / DRIVE[edge.kind] + (0.0 if edge.kind == "highway" else INTERSECTION_S)


@functools.lru_cache(maxsize=16)
def _adjacency(mode: str, avoid_tolls: bool, avoid_highways: bool) -> dict[int, list[tuple[int, Edge]]]:
    """Each intersection's usable blocks (the street graph never changes: computed once per option set)."""
    adj: dict[int, list[tuple[int, Edge]]] = {}
    for e in EDGES:
        if _usable(e, mode, avoid_tolls, avoid_highways):
            adj.setdefault(e.a, []).append((e.b, e))
            adj.setdefault(e.b, []).append((e.a, e))
    return adj


def is_rush(weekday: int, minute: int) -> bool:
    return weekday < 5 and (450 <= minute < 570 or 990 <= minute < 1110)


@dataclass
class _Tree:
    """Shortest paths from one spot: for each node, the cost and how it was reached."""

    cost: dict[int, float]
    dist: dict[int, float]
    prev: dict[int, tuple[int, Edge] | None]


def _tree(src: Spot, mode: str, avoid_tolls: bool, avoid_highways: bool) -> _Tree:
    adj = _adjacency(mode, avoid_tolls, avoid_highways)
    e0 = EDGES[src.edge]
    cost: dict[int, float] = {}
    dist: dict[int, float] = {}
    prev: dict[int, tuple[int, Edge] | None] = {}
    heap: list[tuple[float, float, int]] = []
    for node, length in ((e0.a, src.along), (e0.b, e0.length - src.along)):
        t = _edge_time(e0, mode, length)
        if t < cost.get(node, math.inf):
            cost[node], dist[node], prev[node] = t, length, None
            heapq.heappush(heap, (t, length, node))
    done: set[int] = set()
    while heap:
        c, d, n = heapq.heappop(heap)
        if n in done:
            continue
        done.add(n)
        for m, e in adj.get(n, []):
            nc = c + _edge_time(e, mode, e.length)
            if nc < cost.get(m, math.inf) - 1e-9:
                cost[m], dist[m], prev[m] = nc, d + e.length, (n, e)
                heapq.heappush(heap, (nc, d + e.length, m))
    return _Tree(cost, dist, prev)


def _heading(a: tuple[float, float], b: tuple[float, float]) -> str:
    dx, dy = b[0] - a[0], b[1] - a[1]
    if abs(dx) >= abs(dy):
        return "east" if dx > 0 else "west"
    return "south" if dy > 0 else "north"


_ORDER = ["north", "east", "south", "west"]


def _turn(before: str, after: str) -> str:
    delta = (_ORDER.index(after) - _ORDER.index(before)) % 4
    return {0: "straight", 1: "right", 3: "left"}.get(delta, "straight")


def _steps(points: list[tuple[tuple[float, float], str, float]]) -> list[Step]:
    """Steps from a path's pieces ((end point, street, length), the first the start)."""
    steps: list[Step] = []
    last = points[0][0]
    for end, street, length in points[1:]:
        if length <= 0:
            last = end
            continue
        heading = _heading(last, end)
        if steps and steps[-1].street == street and steps[-1].heading == heading:
            steps[-1].distance_m += length
        else:
            turn = "depart" if not steps else _turn(steps[-1].heading, heading)
            steps.append(Step(street, length, turn, heading))
        last = end
    return steps


def _finish(tree: _Tree, src: Spot, dst: Spot, mode: str, *,
            path: bool = True) -> tuple[float, float, list[tuple[tuple[float, float], str, float]], list[Edge]]:
    """(cost, distance, path pieces, edges used) from `src` to `dst` through `tree`; with
    `path` false, only the edges used (for their tolls and highway), no pieces."""
    e1 = EDGES[dst.edge]
    best: tuple[float, float, int | None] = (math.inf, math.inf, None)
    for node, length in ((e1.a, dst.along), (e1.b, e1.length - dst.along)):
        if node in tree.cost:
            c = tree.cost[node] + _edge_time(e1, mode, length)
            if c < best[0]:
                best = (c, tree.dist[node] + length, node)
    if src.edge == dst.edge:  # along the same block
        length = abs(src.along - dst.along)
        c = _edge_time(e1, mode, length) - (INTERSECTION_S if mode == "drive" and e1.kind != "highway" else 0.0)
        if c <= best[0]:
            return c, length, [(src.xy, e1.street, 0.0), (dst.xy, e1.street, length)], [e1]
    cost, distance, found = best
    if found is None:
        return math.inf, math.inf, [], []
    node = found
    chain: list[tuple[int, Edge]] = []
    n: int = node
    while (p := tree.prev[n]) is not None:
        chain.append((n, p[1]))
        n = p[0]
    chain.reverse()
    e0 = EDGES[src.edge]
    if not path:
        return cost, distance, [], [e0, *(e for _, e in chain), e1]
    first = src.along if n == e0.a else e0.length - src.along
    pieces: list[tuple[tuple[float, float], str, float]] = [(src.xy, e0.street, 0.0), (node_xy(n), e0.street, first)]
    used = [e0]
    for m, e in chain:
        pieces.append((node_xy(m), e.street, e.length))
        used.append(e)
    pieces.append((dst.xy, e1.street, dst.along if node == e1.a else e1.length - dst.along))
    used.append(e1)
    return cost, distance, pieces, used


def route(src: Spot, dst: Spot, mode: str, *, weekday: int, minute: int, avoid_tolls: bool = False,
          avoid_highways: bool = False) -> Route | None:
    """The fastest way from `src` to `dst` leaving on `weekday` (0 = Monday) at `minute` after
    midnight; None when there is none (a drive that avoids every way across the river)."""
    if mode == "transit":
        return _transit(src, dst, weekday, minute)
    tree = _tree(src, mode, avoid_tolls, avoid_highways)
    cost, distance, pieces, used = _finish(tree, src, dst, mode)
    if math.isinf(cost):
        return None
    parking = 0.0
    if mode == "drive":
        cost *= RUSH_FACTOR if is_rush(weekday, minute) else 1.0
        parking = parking_s(dst)
    return Route(mode, distance, cost + parking, parking_s=parking, steps=_steps(pieces), tolls=any(e.toll for e in used),
                 highway=any(e.kind == "highway" for e in used), points=[p[0] for p in pieces])


# --- transit ---


def _ride_offsets(line: Line, stops: tuple[int, ...]) -> list[float]:
    out, t = [0.0], 0.0
    for a, b in zip(stops, stops[1:]):
        (ax, ay), (bx, by) = node_xy(a), node_xy(b)
        d = math.hypot(bx - ax, by - ay) if line.kind == "metro" else abs(bx - ax) + abs(by - ay)
        t += d / (line.speed_kmh / 3.6) + DWELL_S
        out.append(t)
    return out


def _next_departure(line: Line, offset: float, t: float, weekday: int) -> float:
    headway = line.headway_min * 60 * (1.5 if weekday == 6 else 1.0)
    first = (FIRST_MIN + line.offset_min) * 60 + offset
    last = LAST_MIN * 60 + offset
    day = 0.0
    while True:
        if t <= first + day:
            return first + day
        n = math.ceil((t - first - day) / headway)
        dep = first + day + n * headway
        if dep <= last + day:
            return dep
        day += 86400.0


def _line_dist(line: Line, a: int, b: int) -> float:
    (ax, ay), (bx, by) = node_xy(a), node_xy(b)
    return math.hypot(bx - ax, by - ay) if line.kind == "metro" else abs(bx - ax) + abs(by - ay)


@dataclass
class _TState:
    time: float
    prev: tuple[tuple[int, int], Leg] | None


def _transit_tree(src: Spot, weekday: int, minute: int) -> dict[tuple[int, int], _TState]:
    """Earliest arrival at each (node, ride): ride -1 on foot, else 2*line + direction."""
    start = minute * 60.0
    walk_adj = _adjacency("walk", False, False)
    directions: list[tuple[Line, tuple[int, ...], list[float]]] = []
    for line in LINES:
        for stops in (line.stops, tuple(reversed(line.stops))):
            directions.append((line, stops, _ride_offsets(line, stops)))
    best: dict[tuple[int, int], _TState] = {}
    heap: list[tuple[float, int, int]] = []
    e0 = EDGES[src.edge]
    for node, length in ((e0.a, src.along), (e0.b, e0.length - src.along)):
        t = start + length / WALK
        if t < best.get((node, -1), _TState(math.inf, None)).time:
            best[(node, -1)] = _TState(t, ((-1, -1), Leg("walk", length, start, t)))
            heapq.heappush(heap, (t, node, -1))
    done: set[tuple[int, int]] = set()

    def relax(key: tuple[int, int], t: float, came: tuple[int, int], leg: Leg) -> None:
        if t < best.get(key, _TState(math.inf, None)).time - 1e-9:
            best[key] = _TState(t, (came, leg))
            heapq.heappush(heap, (t, key[0], key[1]))

    while heap:
        t, node, ride = heapq.heappop(heap)
        key = (node, ride)
        if key in done:
            continue
        done.add(key)
        if ride == -1:
            for m, e in walk_adj.get(node, []):
                relax((m, -1), t + e.length / WALK, key, Leg("walk", e.length, t, t + e.length / WALK))
            for k, (line, stops, offs) in enumerate(directions):
                if node in stops[:-1]:
                    i = stops.index(node)
                    dep = _next_departure(line, offs[i], t + BOARD_S, weekday)
                    relax((node, k), dep, key, Leg("wait", 0.0, t, dep))
        else:
            line, stops, offs = directions[ride]
            relax((node, -1), t, key, Leg("alight", 0.0, t, t))
            i = stops.index(node)
            if i + 1 < len(stops):
                nxt = stops[i + 1]
                arr = t + offs[i + 1] - offs[i]
                relax((nxt, ride), arr, key, Leg("ride", _line_dist(line, node, nxt), t, arr, line=line.name,
                                                 headsign=line.stop_name(stops[-1]), board=line.stop_name(node),
                                                 alight=line.stop_name(nxt), stops=1))
    return best


def _merge(raw: list[Leg]) -> list[Leg]:
    legs: list[Leg] = []
    for leg in raw:
        if leg.kind in ("alight",):
            continue
        if leg.kind == "wait":
            continue
        if legs and legs[-1].kind == leg.kind == "walk":
            legs[-1].distance_m += leg.distance_m
            legs[-1].arrive_s = leg.arrive_s
        elif legs and legs[-1].kind == leg.kind == "ride" and legs[-1].line == leg.line and legs[-1].alight == leg.board \
                and legs[-1].headsign == leg.headsign and abs(legs[-1].arrive_s - leg.depart_s) < 1e-6:
            legs[-1].distance_m += leg.distance_m
            legs[-1].arrive_s, legs[-1].alight, legs[-1].stops = leg.arrive_s, leg.alight, legs[-1].stops + 1
        else:
            legs.append(Leg(leg.kind, leg.distance_m, leg.depart_s, leg.arrive_s, leg.line, leg.headsign, leg.board,
                            leg.alight, leg.stops))
    return [leg for leg in legs if leg.kind == "ride" or leg.distance_m > 0]


def _transit_finish(tree: dict[tuple[int, int], _TState], src: Spot, dst: Spot, minute: int) -> Route:
    start = minute * 60.0
    e1 = EDGES[dst.edge]
    best_t, best_node, tail = math.inf, -1, 0.0
    for node, length in ((e1.a, dst.along), (e1.b, e1.length - dst.along)):
        state = tree.get((node, -1))
        if state is not None and state.time + length / WALK < best_t:
            best_t, best_node, tail = state.time + length / WALK, node, length
    if src.edge == dst.edge:
        length = abs(src.along - dst.along)
        if start + length / WALK <= best_t:
            return Route("transit", length, length / WALK, legs=[Leg("walk", length, start, start + length / WALK)])
    raw: list[Leg] = [Leg("walk", tail, best_t - tail / WALK, best_t)]
    key: tuple[int, int] = (best_node, -1)
    while True:
        state = tree[key]
        assert state.prev is not None
        came, leg = state.prev
        raw.append(leg)
        if came == (-1, -1):
            break
        key = came
    raw.reverse()
    legs = _merge(raw)
    distance = sum(leg.distance_m for leg in legs)
    return Route("transit", distance, best_t - start, legs=legs)


def _transit(src: Spot, dst: Spot, weekday: int, minute: int) -> Route:
    return _transit_finish(_transit_tree(src, weekday, minute), src, dst, minute)


def travel_from(src: Spot, dsts: dict[int, Spot], *, weekday: int, minute: int) -> dict[int, dict[str, Route]]:
    """Every mode's route from `src` to each of `dsts` (by key), leaving then, with no
    avoidances: one shortest-path tree per mode, so the same routes `route` gives."""
    out: dict[int, dict[str, Route]] = {k: {} for k in dsts}
    for mode in ("drive", "walk", "bike"):
        tree = _tree(src, mode, False, False)
        for k, dst in dsts.items():
            cost, distance, _, used = _finish(tree, src, dst, mode, path=False)
            parking = 0.0
            if mode == "drive":
                cost *= RUSH_FACTOR if is_rush(weekday, minute) else 1.0
                parking = parking_s(dst)
            out[k][mode] = Route(mode, distance, cost + parking, parking_s=parking, steps=[], tolls=any(e.toll for e in used),
                                 highway=any(e.kind == "highway" for e in used))
    ttree = _transit_tree(src, weekday, minute)
    for k, dst in dsts.items():
        out[k]["transit"] = _transit_finish(ttree, src, dst, minute)
    return out
