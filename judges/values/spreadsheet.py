"""A small, safe spreadsheet formula language: tokenizer, recursive-descent parser and
evaluator. Never `eval`: a formula is parsed into a tree of tuples and walked. It lives
with the judges' values because two parts must compute alike: the sheets app computes
its cells with it, and the formula judge re-computes an agent's formula with it
(`references`, `evaluate`) to judge what the formula computes, not how it looks.

Grammar (case-insensitive names; `$` marks an absolute reference):
    formula := '=' compare
    compare := concat (('=' | '<>' | '<' | '>' | '<=' | '>=') concat)?
    concat  := additive ('&' additive)*
    additive:= term (('+' | '-') term)*
    term    := power (('*' | '/') power)*
    power   := unary ('^' unary)*
    unary   := ('-' | '+') unary | primary
    primary := NUMBER | STRING | REF (':' REF)? | NAME '(' args ')' | '(' compare ')'
Functions: SUM AVERAGE MIN MAX COUNT ROUND ABS IF. Errors are values (#DIV/0!, #REF!,
#NAME?, #VALUE!, #ERROR!, #CYCLE!) that propagate, as users expect from spreadsheets.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Union

__all__ = ["MAX_COLS", "MAX_ROWS", "CellError", "Value", "col_index", "col_name", "display", "evaluate", "evaluate_sheet",
           "literal", "parse_ref", "references", "shift_formula"]

MAX_COLS = 26
MAX_ROWS = 200


@dataclass(frozen=True)
class CellError:
    code: str

    def __str__(self) -> str:
        return self.code


Value = Union[float, str, None, CellError]

_TOKEN = re.compile(r"""\s*(?:
    (?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+)
  | (?P<str>"(?:[^"]|"")*")
  | (?P<ref>\$?[A-Za-z]{1,2}\$?\d+)(?![A-Za-z0-9_(])
  | (?P<name>[A-Za-z_][A-Za-z0-9_.]*)
  | (?P<op><>|<=|>=|[-+*/^&(),:=<>])
)""", re.VERBOSE)


class _ParseError(Exception):
    pass


def col_index(letters: str) -> int:
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n


def col_name(index: int) -> str:
    out = ""
    while index:
        index, rem = divmod(index - 1, 26)
        out = chr(65 + rem) + out
    return out


def parse_ref(ref: str) -> tuple[int, int]:
    """'B12' -> (row 12, col 2). Raises ValueError for anything else."""
    m = re.fullmatch(r"\$?([A-Za-z]{1,2})\$?(\d+)", ref.strip())
    if not m:
        raise ValueError(f"not a cell reference: {ref!r}")
    row, col = int(m.group(2)), col_index(m.group(1))
    if not (1 <= row <= MAX_ROWS and 1 <= col <= MAX_COLS):
        raise ValueError(f"reference out of range: {ref!r}")
    return row, col


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise _ParseError(f"unexpected {text[pos:pos + 8]!r}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str] | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise _ParseError(f"expected {value or 'more input'}")
        self.i += 1
        return tok

    def parse(self) -> Any:
        node = self.compare()
        if self.peek() is not None:
            raise _ParseError(f"unexpected {self.peek()[1]!r}")  # type: ignore[index]
        return node

    def _binary(self, sub: Callable[[], Any], ops: set[str]) -> Any:
        node = sub()
        while (tok := self.peek()) and tok[0] == "op" and tok[1] in ops:
            self.i += 1
            node = ("bin", tok[1], node, sub())
        return node

    def compare(self) -> Any:
        node = self.concat()
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] in {"=", "<>", "<", ">", "<=", ">="}:
            self.i += 1
            node = ("bin", tok[1], node, self.concat())
        return node

    def concat(self) -> Any:
        return self._binary(self.additive, {"&"})

    def additive(self) -> Any:
        return self._binary(self.term, {"+", "-"})

    def term(self) -> Any:
        return self._binary(self.power, {"*", "/"})

    def power(self) -> Any:
        return self._binary(self.unary, {"^"})

    def unary(self) -> Any:
        tok = self.peek()
        if tok and tok[0] == "op" and tok[1] in {"-", "+"}:
            self.i += 1
            return ("neg", self.unary()) if tok[1] == "-" else self.unary()
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "num":
            return ("num", float(text))
        if kind == "str":
            return ("str", text[1:-1].replace('""', '"'))
        if kind == "ref":
            start = parse_ref(text)
            tok = self.peek()
            if tok and tok[1] == ":":
                self.i += 1
                k2, t2 = self.take()
                if k2 != "ref":
                    raise _ParseError("expected a cell reference after ':'")
                end = parse_ref(t2)
                return ("range", (min(start[0], end[0]), min(start[1], end[1])), (max(start[0], end[0]), max(start[1], end[1])))
            return ("ref", start)
        if kind == "name":
            if self.peek() is None or self.peek()[1] != "(":  # type: ignore[index]
                if text.upper() in {"TRUE", "FALSE"}:
                    return ("num", 1.0 if text.upper() == "TRUE" else 0.0)
                return ("name", text)
            self.take("(")
            args = []
            if self.peek() is not None and self.peek()[1] != ")":  # type: ignore[index]
                args.append(self.compare())
                while self.peek() is not None and self.peek()[1] == ",":  # type: ignore[index]
                    self.i += 1
                    args.append(self.compare())
            self.take(")")
            return ("call", text.upper(), args)
        if text == "(":
            node = self.compare()
            self.take(")")
            return node
        raise _ParseError(f"unexpected {text!r}")


class _Raise(Exception):
    def __init__(self, error: CellError) -> None:
        self.error = error


def _num(v: Value) -> float:
    if isinstance(v, CellError):
        raise _Raise(v)
    if v is None or v == "":
        return 0.0
    if isinstance(v, float):
        return v
    try:
        return float(v)
    except ValueError:
        raise _Raise(CellError("#VALUE!")) from None


def _flatten(values: list[Any]) -> list[Value]:
    out: list[Value] = []
    for v in values:
        out.extend(v) if isinstance(v, list) else out.append(v)
    return out


def _numbers(args: list[Any]) -> list[float]:
    """Numbers among the arguments; ranges skip text and blanks as spreadsheets do."""
    nums: list[float] = []
    for a in args:
        if isinstance(a, list):
            for v in a:
                if isinstance(v, CellError):
                    raise _Raise(v)
                if isinstance(v, float):
                    nums.append(v)
        else:
            nums.append(_num(a))
    return nums


def _round(args: list[Any]) -> float:
    if len(args) not in (1, 2):
        raise _Raise(CellError("#VALUE!"))
    x, digits = _num(args[0]), int(_num(args[1])) if len(args) == 2 else 0
    q = 10.0 ** digits
    return math.floor(abs(x) * q + 0.5) / q * (1 if x >= 0 else -1)


def _average(args: list[Any]) -> float:
    nums = _numbers(args)
    if not nums:
        raise _Raise(CellError("#DIV/0!"))
    return sum(nums) / len(nums)


def _minmax(fn: Callable[[list[float]], float]) -> Callable[[list[Any]], float]:
    return lambda args: fn(_numbers(args)) if _numbers(args) else 0.0


FUNCTIONS: dict[str, Callable[[list[Any]], Value]] = {
    "SUM": lambda args: float(math.fsum(_numbers(args))),
    "AVERAGE": _average,
    "MIN": _minmax(min),
    "MAX": _minmax(max),
    "COUNT": lambda args: float(len(_numbers([a for a in args if isinstance(a, list)])) + sum(
        1 for a in args if not isinstance(a, list) and isinstance(a, float))),
    "ROUND": _round,
    "ABS": lambda args: abs(_num(args[0])) if len(args) == 1 else _bad(),
}


def _bad() -> Value:
    raise _Raise(CellError("#VALUE!"))


def _compare(op: str, a: Value, b: Value) -> float:
    for v in (a, b):
        if isinstance(v, CellError):
            raise _Raise(v)
    x: Any = a if a is not None else 0.0
    y: Any = b if b is not None else 0.0
    if isinstance(x, str) and isinstance(y, str):
        x, y = x.lower(), y.lower()
    elif isinstance(x, str) or isinstance(y, str):
        x, y = (1, 0) if isinstance(x, str) else (0, 1)  # text sorts after numbers
    result = {"=": x == y, "<>": x != y, "<": x < y, ">": x > y, "<=": x <= y, ">=": x >= y}[op]
    return 1.0 if result else 0.0


class _Evaluator:
    def __init__(self, raws: dict[tuple[int, int], str]) -> None:
        self.raws = raws
        self.values: dict[tuple[int, int], Value] = {}
        self.visiting: set[tuple[int, int]] = set()

    def cell(self, key: tuple[int, int]) -> Value:
        if key in self.values:
            return self.values[key]
        raw = self.raws.get(key, "")
        if key in self.visiting:
            return CellError("#CYCLE!")
        self.visiting.add(key)
        try:
            value = self._compute(raw)
        finally:
            self.visiting.discard(key)
        self.values[key] = value
        return value

    def _compute(self, raw: str) -> Value:
        if not raw.startswith("="):
            return literal(raw)
        try:
            tree = _Parser(raw[1:]).parse()
        except (_ParseError, ValueError):
            return CellError("#ERROR!")
        try:
            result = self.node(tree)
        except _Raise as exc:
            return exc.error
        if isinstance(result, list):
            return CellError("#VALUE!")
        if isinstance(result, float) and (math.isnan(result) or math.isinf(result)):
            return CellError("#NUM!")
        value: Value = result
        return value

    def node(self, n: Any) -> Any:
        kind = n[0]
        if kind in ("num", "str"):
            return n[1]
        if kind == "ref":
            v = self.cell(n[1])
            if isinstance(v, CellError):
                raise _Raise(v)
            return v
        if kind == "range":
            (r1, c1), (r2, c2) = n[1], n[2]
            return [self.cell((r, c)) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]
        if kind == "neg":
            return -_num(self.node(n[1]))
        if kind == "name":
            raise _Raise(CellError("#NAME?"))
        if kind == "call":
            name, args = n[1], n[2]
            if name == "IF":
                if len(args) not in (2, 3):
                    raise _Raise(CellError("#VALUE!"))
                cond = _num(self.node(args[0]))
                chosen = args[1] if cond else (args[2] if len(args) == 3 else ("num", 0.0))
                return self.node(chosen)
            fn = FUNCTIONS.get(name)
            if fn is None:
                raise _Raise(CellError("#NAME?"))
            return fn([self.node(a) for a in args])
        if kind == "bin":
            op, a, b = n[1], self.node(n[2]), self.node(n[3])
            if isinstance(a, list) or isinstance(b, list):
                raise _Raise(CellError("#VALUE!"))
            if op == "&":
                return display(a) + display(b)
            if op in {"=", "<>", "<", ">", "<=", ">="}:
                return _compare(op, a, b)
            x, y = _num(a), _num(b)
            if op == "+":
                return x + y
            if op == "-":
                return x - y
            if op == "*":
                return x * y
            if op == "/":
                if y == 0:
                    raise _Raise(CellError("#DIV/0!"))
                return x / y
            if op == "^":
                try:
                    return float(x ** y)
                except (OverflowError, ZeroDivisionError):
                    raise _Raise(CellError("#NUM!")) from None
        raise _Raise(CellError("#ERROR!"))


def literal(raw: str) -> Value:
    text = raw.strip()
    if text == "":
        return None
    try:
        return float(text.replace(",", "")) if re.fullmatch(r"[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?", text) else raw
    except ValueError:
        return raw


def evaluate_sheet(raws: dict[tuple[int, int], str]) -> dict[tuple[int, int], Value]:
    """Every non-empty cell's value, keyed like `raws`."""
    ev = _Evaluator(raws)
    return {key: ev.cell(key) for key in raws}


def references(raw: str) -> frozenset[tuple[int, int]] | None:
    """Every cell a formula reads, ranges expanded, as (row, col); None when `raw` is not a
    formula this language parses (it does not start with "=", or the app shows #ERROR!)."""
    if not raw.startswith("="):
        return None
    try:
        tree = _Parser(raw[1:]).parse()
    except (_ParseError, ValueError):
        return None
    out: set[tuple[int, int]] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if not isinstance(node, tuple):
            continue
        if node[0] == "ref":
            out.add(node[1])
        elif node[0] == "range":
            (r1, c1), (r2, c2) = node[1], node[2]
            out.update((r, c) for r in range(r1, r2 + 1) for c in range(c1, c2 + 1))
        else:
            stack.extend(x for x in node[1:] if isinstance(x, tuple))
            stack.extend(a for x in node[1:] if isinstance(x, list) for a in x)
    return frozenset(out)


def evaluate(raw: str, raws: dict[tuple[int, int], str]) -> Value:
    """The value a cell holding `raw` shows in a sheet whose other cells hold `raws` (the
    cell itself is none of them: a formula that reads its own cell reads it empty here)."""
    return _Evaluator(raws)._compute(raw)


def display(value: Value) -> str:
    if value is None:
        return ""
    if isinstance(value, CellError):
        return value.code
    if isinstance(value, float):
        if value == int(value) and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.10g}"
    return value


def shift_formula(raw: str, drow: int, dcol: int = 0) -> str:
    """Move a formula by (drow, dcol) as copy/sort does: relative refs shift, $-parts stay."""
    if not raw.startswith("=") or (drow == 0 and dcol == 0):
        return raw

    def move(m: re.Match[str]) -> str:
        cabs, letters, rabs, digits = m.group(1), m.group(2), m.group(3), m.group(4)
        col = col_index(letters) + (0 if cabs else dcol)
        row = int(digits) + (0 if rabs else drow)
        if row < 1 or col < 1:
            return "#REF!"
        return f"{cabs}{col_name(col)}{rabs}{row}"

    out, pos = [], 0
    for m in re.finditer(r'"(?:[^"]|"")*"', raw):
        out.append(re.sub(r"(\$?)\b([A-Za-z]{1,2})(\$?)(\d+)\b(?!\()", move, raw[pos:m.start()]))
        out.append(m.group(0))
        pos = m.end()
    out.append(re.sub(r"(\$?)\b([A-Za-z]{1,2})(\$?)(\d+)\b(?!\()", move, raw[pos:]))
    return "".join(out)
