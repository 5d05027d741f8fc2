"""Port Alder, the city Waypoint maps: its street grid, river, bridges, districts and transit
lines. The city is the same for every seed (streets do not move); the places on it are seeded.

The grid is 14 streets west-east by 10 north-south, blocks of 400 m by 360 m. The Alder
river runs between the 7th and 8th north-south streets; three bridges cross it: Mill Bridge
(a local street), Iron Bridge (Harbour Road, an avenue) and the Bayshore Expressway's toll
bridge. The expressway (the southmost street) is a highway: no walking or cycling on it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["COLS", "ROWS", "DX", "DY", "DISTRICTS", "Edge", "EDGES", "LINES", "Line", "NODES", "RIVER_X",
           "STREETS", "district_of", "edge_between", "node_id", "node_xy"]

COLS, ROWS = 14, 10
DX, DY = 400, 360
#: x of the river's middle (between the 7th and 8th north-south streets)
RIVER_X = 6 * DX + DX // 2

#: West-east streets, north to south: (name, kind). Kinds: local, avenue, highway.
ROW_STREETS = [("Northgate Road", "local"), ("Mill Street", "local"), ("Linden Street", "local"), ("Market Street", "avenue"),
               ("Chapel Street", "local"), ("Harbour Road", "avenue"), ("Rose Lane", "local"), ("Station Street", "local"),
               ("Quay Street", "local"), ("Bayshore Expressway", "highway")]
#: North-south streets, west to east.
COL_STREETS = [("Ash Avenue", "local"), ("Birch Way", "local"), ("Cedar Street", "local"), ("Dock Avenue", "avenue"),
               ("Elm Street", "local"), ("Fir Street", "local"), ("Garden Walk", "local"), ("Hill Street", "local"),
               ("Ivy Lane", "local"), ("Juniper Avenue", "avenue"), ("Kings Road", "local"), ("Larch Street", "local"),
               ("Maple Street", "local"), ("Nord Avenue", "avenue")]
STREETS = [name for name, _ in ROW_STREETS] + [name for name, _ in COL_STREETS]
#: Rows whose street crosses the river, and what the bridge is called.
BRIDGES = {1: "Mill Bridge", 5: "Iron Bridge", 9: "Alder Toll Bridge"}

#: (name, first col, last col, first row, last row)
DISTRICTS = [("Northgate", 0, 2, 0, 4), ("Old Town", 3, 6, 0, 4), ("University Hill", 7, 9, 0, 4), ("Eastbank", 10, 13, 0, 4),
             ("Greenfield", 0, 2, 5, 9), ("Market Quarter", 3, 6, 5, 9), ("Riverside", 7, 9, 5, 9), ("Harbour", 10, 13, 5, 9)]


def node_id(col: int, row: int) -> int:
    return row * COLS + col


def node_xy(node: int) -> tuple[int, int]:
    return (node % COLS) * DX, (node // COLS) * DY


NODES = list(range(COLS * ROWS))


@dataclass(frozen=True)
class Edge:
    """A block of one street between two neighbouring intersections."""

    id: int
    a: int
    b: int
    street: str
    kind: str  # local | avenue | highway
    toll: bool
    bridge: str
    length: float = 0.0

    def __post_init__(self) -> None:
        (ax, ay), (bx, by) = node_xy(self.a), node_xy(self.b)
        object.__setattr__(self, "length", math.hypot(bx - ax, by - ay))


def _edges() -> list[Edge]:
    out: list[Edge] = []
    for row, (street, kind) in enumerate(ROW_STREETS):
        for col in range(COLS - 1):
            bridge = ""
            if col == 6:  # the river
                if row not in BRIDGES:
                    continue
                bridge = BRIDGES[row]
            out.append(Edge(len(out), node_id(col, row), node_id(col + 1, row), street, kind, row == 9 and col == 6, bridge))
    for col, (street, kind) in enumerate(COL_STREETS):
        for row in range(ROWS - 1):
            out.append(Edge(len(out), node_id(col, row), node_id(col, row + 1), street, kind, False, ""))
    return out


EDGES = _edges()


def edge_between(a: int, b: int) -> int:
    """The id of the block between two neighbouring intersections."""
    return next(e.id for e in EDGES if {e.a, e.b} == {a, b})


def district_of(x: float, y: float) -> str:
    col, row = min(COLS - 1, round(x / DX)), min(ROWS - 1, round(y / DY))
    for name, c0, c1, r0, r1 in DISTRICTS:
        if c0 <= col <= c1 and r0 <= row <= r1:
            return name
    return DISTRICTS[0][0]  # pragma: no cover (the districts tile the grid)


@dataclass(frozen=True)
class Line:
    """A transit line: its stops (intersections) in order, how often it runs, how fast."""

    code: str
    name: str
    kind: str  # tram | bus | metro
    stops: tuple[int, ...]
    headway_min: int
    speed_kmh: float
    offset_min: int

    def stop_name(self, node: int) -> str:
        col, row = node % COLS, node // COLS
        if self.kind == "metro":
            return METRO_NAMES.get(node, f"{ROW_STREETS[row][0]} station")
        return f"{ROW_STREETS[row][0]} / {COL_STREETS[col][0]}"


METRO_NAMES = {node_id(1, 8): "Greenfield", node_id(4, 6): "Market", node_id(6, 3): "Old Town", node_id(8, 2): "University",
               node_id(11, 3): "Eastbank", node_id(12, 7): "Harbour"}

LINES = [
    Line("T1", "Tram 1", "tram", tuple(node_id(c, 5) for c in (0, 2, 4, 6, 7, 9, 11, 13)), 8, 20.0, 2),
    Line("T2", "Tram 2", "tram", tuple(node_id(c, 1) for c in (0, 2, 4, 6, 7, 9, 11, 13)), 10, 20.0, 5),
    Line("B14", "Bus 14", "bus", tuple(node_id(3, r) for r in (0, 2, 4, 6, 8)), 12, 18.0, 3),
    Line("B22", "Bus 22", "bus", tuple(node_id(10, r) for r in (0, 2, 4, 6, 8)), 15, 18.0, 7),
    Line("M1", "Metro M1", "metro", (node_id(1, 8), node_id(4, 6), node_id(6, 3), node_id(8, 2), node_id(11, 3), node_id(12, 7)),
         6, 38.0, 1),
]
