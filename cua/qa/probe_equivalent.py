"""Judge QA's typed `equivalent` probe: both sides of each typed check's equivalence class.

For every check the task must pass (under the root's `all`, not inside `any`, `not` or
`weighted`) whose comparator names a value type (`cua.judges.values`: date, time,
datetime, email, url, money, number, text, rich text, formula, phone, address), the
value that check observed in the oracle's run is rewritten in the judge input:

- each other way to write it (`variants.equivalents`) must still PASS the judge;
- the nearest other value and two values in one answer (`variants.near`) must FAIL.

The value is rewritten where the check reads it: the agent's answer, or the state
query's own value when the getter reads it whole (a DOM property, the title, the URL, a
scalar SQL read, a file's text). A URL read by one parameter gets the parameter repeated
with another value, which must fail. Other reads (a path into the app's state) are the
database probes' (`cua.qa.probes`) to attack.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.getters import build_getter
from cua.judges.judge import StateJudge
from cua.judges.values import parse_one_number
from cua.judges.values.variants import equivalents, near
from cua.state import StateResult
from cua.task import JudgeInput, TaskInstance

__all__ = ["TYPED_OPS", "typed_probes"]

#: Comparator spec -> the value type it compares as.
TYPED_OPS: dict[type, str] = {
    S.DateCmp: "date", S.TimeCmp: "time", S.DateTimeCmp: "datetime", S.EmailCmp: "email", S.UrlCmp: "url",
    S.MoneyCmp: "money", S.NumberCmp: "number", S.TextCmp: "text", S.RichTextCmp: "rich_text", S.PhoneCmp: "phone",
    S.AddressCmp: "address", S.FormulaCmp: "formula",
}

Rewrite = Callable[[Any], JudgeInput]


def _required(nodes: list[Any]) -> Iterator[S.CheckNode]:
    """The checks that must each hold for the task to pass."""
    for node in nodes:
        if isinstance(node, S.CheckNode):
            yield node
        elif isinstance(node, S.AllNode):
            yield from _required(node.all)


def _reader(check: S.CheckNode, data: JudgeInput) -> tuple[Any, Rewrite] | str:
    """The value the check read and how to put another in its place, or why not."""
    get = check.get
    if isinstance(get, S.AnswerGetter):
        done = data.done
        if done is None or not isinstance(done.answer, str):
            return "the oracle gave no answer"
        return done.answer, lambda v: data.model_copy(update={"done": done.model_copy(update={"answer": v})})
    if isinstance(get, S.DoneStatusGetter) or get.at != "final" or get.path is not None:
        return "the check reads a path into the state (the database probes attack it)"
    if isinstance(get, S.DomGetter) and get.all:
        return "the check reads a list of elements"
    getter = build_getter(get)
    result = data.final.get(getter.key)
    if result is None or not result.ok:
        return "the state was not read"
    value = result.value

    def put(v: Any) -> JudgeInput:
        return data.model_copy(update={"final": {**data.final, getter.key: StateResult(value=v)}})

    if isinstance(get, S.SqlGetter):
        if not (get.scalar and isinstance(value, list) and value and isinstance(value[0], dict) and value[0]):
            return "the check reads SQL rows (the database probes attack them)"
        column = next(iter(value[0]))
        return value[0][column], lambda v: put([{**value[0], column: v}, *value[1:]])
    if isinstance(get, S.UrlGetter) and (get.part != "full" or get.param is not None):
        return "the check reads one part of the URL"
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value, put
    return "the value read is not a scalar"


def _around(spec: Any, value: Any) -> Any:
    """The check's comparator with the oracle's observed value as its expected value."""
    if isinstance(spec, S.FormulaCmp) and spec.value is None:
        return None
    if isinstance(spec, S.UrlCmp):
        return spec.model_copy(update={"value": value, "params": None})
    return spec.model_copy(update={"value": value})


def _step(spec: Any) -> float:
    if isinstance(spec, S.NumberCmp):
        want = parse_one_number(spec.value)
        return max(spec.abs, spec.rel * abs(want)) if isinstance(want, float) else spec.abs
    return 0.0


def _param_repeats(check: S.CheckNode, data: JudgeInput) -> list[tuple[str, JudgeInput]]:
    """A URL read by one parameter, with that parameter repeated with another value."""
    get = check.get
    if not isinstance(get, S.UrlGetter) or get.param is None:
        return []
    getter = build_getter(S.UrlGetter(kind="url"))
    result = data.final.get(getter.key)
    if result is None or not result.ok or not isinstance(result.value, str):
        return []
    parts = urlsplit(result.value)
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    mine = [v for k, v in pairs if k == get.param]
    if len(mine) != 1:
        return []
    url = urlunsplit(parts._replace(query=urlencode([*pairs, (get.param, mine[0] + "x")])))
    final = {**data.final, getter.key: StateResult(value=url)}
    return [(f"the URL parameter {get.param!r} repeated ({url})", data.model_copy(update={"final": final}))]


def _cell_variants(check: S.CheckNode, data: JudgeInput) -> list[tuple[bool, str, JudgeInput]]:
    """For a check of a saved spreadsheet's cells (`op: cells` over a reader's stdout):
    (must pass, what, input) with each checked formula written otherwise (absolute
    references, case, spacing: must pass) and just wrong (a reference moved, the value
    typed instead of the formula: must fail)."""
    spec, get = check.expect, check.get
    if not isinstance(spec, S.CellsCmp) or isinstance(spec.cells, str) or isinstance(get, (S.AnswerGetter,
                                                                                           S.DoneStatusGetter)):
        return []
    if get.path != "stdout" or get.at != "final":
        return []
    getter = build_getter(get.model_copy(update={"path": None}))
    result = data.final.get(getter.key)
    if result is None or not result.ok or not isinstance(result.value, dict):
        return []
    raw = result.value
    dump = raw.get("stdout")
    if not isinstance(dump, str):
        return []
    lines = dump.splitlines()
    out: list[tuple[bool, str, JudgeInput]] = []

    def with_line(i: int, line: str) -> JudgeInput:
        text = "\n".join(lines[:i] + [line] + lines[i + 1:]) + "\n"
        return data.model_copy(update={"final": {**data.final, getter.key: StateResult(value={**raw, "stdout": text})}})

    for ref, want in spec.cells.items():
        if not want.formula:
            continue
        for i, line in enumerate(lines):
            parts = line.split("\t")
            if len(parts) != 3 or parts[0] != ref or not parts[1].startswith("f=") or not parts[1][2:]:
                continue
            formula = parts[1][2:]
            for what, other in equivalents("formula", formula):
                written = with_line(i, f"{ref}\tf={other}\t{parts[2]}")
                out.append((True, f"{ref}'s formula {formula!r} {what} ({other!r})", written))
            for what, other in near("formula", formula):
                if other == "0":
                    other_line, what = f"{ref}\tf=\t{parts[2]}", "the value typed instead"
                else:
                    other_line = f"{ref}\tf={other}\t{parts[2]}"
                out.append((False, f"{ref}'s formula {formula!r} as {what}", with_line(i, other_line)))
    return out


def typed_probes(instance: TaskInstance, oracle: JudgeInput) -> tuple[dict[str, int], dict[str, str],
                                                                      list[tuple[str, str, Any]]]:
    """(ran, skipped, wrong) of the `equivalent` probe on the oracle's judged end."""
    judge = instance.judge
    if not isinstance(judge, StateJudge):
        return {}, {"equivalent (typed)": "the judge is not a state judge"}, []
    spec = judge.spec
    ran, skipped, wrong = 0, {}, []
    why: list[str] = []
    for check in _required(list(spec.checks)):
        for what, data in _param_repeats(check, oracle):
            ran += 1
            verdict = judge.evaluate(data)
            if verdict.passed:
                wrong.append(("probe:equivalent", f"{check.check}: passes with {what}", verdict))
        for must_pass, what, data in _cell_variants(check, oracle):
            ran += 1
            verdict = judge.evaluate(data)
            if verdict.passed != must_pass:
                wrong.append(("probe:equivalent", f"{check.check}: {what} {'fails' if must_pass else 'passes'}", verdict))
        kind = TYPED_OPS.get(type(check.expect))
        if kind is None:
            continue
        read = _reader(check, oracle)
        if isinstance(read, str):
            why.append(f"{check.check}: {read}")
            continue
        value, rewrite = read
        # Each side as the check's own type and options define it around what the oracle
        # showed (a URL's defaults, a number's tolerance); the judge's verdict must agree.
        around = _around(check.expect, value)
        for what, other in equivalents(kind, value):
            if around is not None and not compare(around, other)[0]:
                continue
            ran += 1
            verdict = judge.evaluate(rewrite(other))
            if not verdict.passed:
                wrong.append(("probe:equivalent", f"{check.check}: the {kind} {value!r} {what} ({other!r}) fails",
                              verdict))
        for what, other in near(kind, value, step=_step(check.expect)):
            if around is not None and compare(around, other)[0]:
                continue
            ran += 1
            verdict = judge.evaluate(rewrite(other))
            if verdict.passed:
                wrong.append(("probe:equivalent", f"{check.check}: the {kind} {value!r} passes as {what} ({other!r})",
                              verdict))
    if not ran:
        skipped["equivalent (typed)"] = "; ".join(why) or "no check the task must pass compares a typed value"
    return ({"equivalent": ran} if ran else {}), skipped, wrong
