"""Typed values (`cua.judges.values`): each type's comparator, both sides of its stated
equivalence class as properties (hypothesis writes the same value in the ways the class
allows: they pass; the nearest other value and two values in one answer: they fail), and
the spec and getters that route through them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from cua.actions import Done
from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.judges.judge import StateJudge
from cua.judges.values import compare_as
from cua.judges.values.variants import equivalents, near
from cua.qa.probe_equivalent import typed_probes
from cua.state import StateResult, UrlQuery
from cua.task import JudgeInput, TaskInstance, query_key

CMP: TypeAdapter[S.ComparatorSpec] = TypeAdapter(S.ComparatorSpec)
FAST = settings(max_examples=60, deadline=None)

dates = st.dates(dt.date(1990, 1, 1), dt.date(2090, 12, 31))
times = st.times().map(lambda t: t.replace(second=0, microsecond=0))


def same(kind: str, a: object, b: object) -> bool:
    return compare_as(kind, a, b)[0]


def date_forms(d: dt.date) -> list[str]:
    return [d.isoformat(), f"{d:%B} {d.day}, {d.year}", f"{d:%b}. {d.day} {d.year}", f"{d.day} {d:%B} {d.year}",
            f"{d:%A}, {d.day}th of {d:%B} {d.year}" if d.day in (4, 5, 6, 7, 8, 9) else f"{d:%A}, {d:%B} {d.day}, {d.year}",
            f"{d.month:02d}/{d.day:02d}/{d.year}"]


def time_forms(t: dt.time) -> list[str]:
    h12 = (t.hour % 12) or 12
    half = "PM" if t.hour >= 12 else "AM"
    return [f"{t:%H:%M}", f"{t:%H:%M}:00", f"{h12}:{t.minute:02d} {half}", f"{h12}:{t.minute:02d}{half.lower()}",
            f"{h12}:{t.minute:02d} {half[0].lower()}.m."]


# ---------------------------------------------------------------- dates and times

@FAST
@given(dates, st.data())
def test_a_date_in_any_unambiguous_format_is_the_date(d: dt.date, data: st.DataObject) -> None:
    written = data.draw(st.sampled_from(date_forms(d)))
    assert same("date", written, d.isoformat())
    assert same("date", d.isoformat(), written)


@FAST
@given(dates, st.integers(1, 400), st.data())
def test_another_date_and_two_dates_fail(d: dt.date, days: int, data: st.DataObject) -> None:
    other = d + dt.timedelta(days=data.draw(st.sampled_from([days, -days])))
    a, b = data.draw(st.sampled_from(date_forms(d))), data.draw(st.sampled_from(date_forms(other)))
    assert not same("date", b, d.isoformat())
    for hedge in (f"{a} or {b}", f"{b} or {a}", f"{a}, {b}", f"either {a} or {b}"):
        assert not same("date", hedge, d.isoformat()), hedge


def test_a_date_hedged_inside_one_phrase_fails() -> None:
    for hedge in ("March 5 or 6, 2026", "March or April 5, 2026", "5 or 6 March 2026", "2026-03-05 (or the 6th)"):
        assert not same("date", hedge, "2026-03-05"), hedge
    assert same("date", "Thursday, March 5th, 2026", "2026-03-05")
    assert not same("date", "2026-02-30", "2026-03-02")


@FAST
@given(times, st.data())
def test_a_time_in_any_format_is_the_time(t: dt.time, data: st.DataObject) -> None:
    written = data.draw(st.sampled_from(time_forms(t)))
    assert same("time", written, f"{t:%H:%M}")


@FAST
@given(times, st.integers(1, 600), st.data())
def test_another_time_and_two_times_fail(t: dt.time, minutes: int, data: st.DataObject) -> None:
    other = (dt.datetime.combine(dt.date(2026, 1, 1), t) + dt.timedelta(minutes=minutes)).time()
    a, b = data.draw(st.sampled_from(time_forms(t))), data.draw(st.sampled_from(time_forms(other)))
    assert not same("time", b, f"{t:%H:%M}")
    for hedge in (f"{a} or {b}", f"{b} or {a}", f"{a}-{b}", f"between {a} and {b}"):
        assert not same("time", hedge, f"{t:%H:%M}"), hedge


@FAST
@given(dates, times, st.data())
def test_datetimes_need_both_parts(d: dt.date, t: dt.time, data: st.DataObject) -> None:
    expected = f"{d.isoformat()} {t:%H:%M}"
    written = f"{data.draw(st.sampled_from(date_forms(d)))} {data.draw(st.sampled_from(time_forms(t)))}"
    assert same("datetime", written, expected)
    assert same("datetime", f"{d.isoformat()}T{t:%H:%M}:00Z", expected)
    assert not same("datetime", d.isoformat(), expected)
    later = dt.datetime.combine(d, t) + dt.timedelta(minutes=1)
    assert not same("datetime", f"{later:%Y-%m-%d %H:%M}", expected)
    assert not same("datetime", f"{written} or {later:%Y-%m-%d %H:%M}", expected)


# ---------------------------------------------------------------- numbers and money

@FAST
@given(st.integers(-10**9, 10**9), st.data())
def test_money_to_the_cent_in_any_notation(cents: int, data: st.DataObject) -> None:
    amount = Decimal(cents) / 100
    sign = "-" if amount < 0 else ""
    a = abs(amount)
    forms = [f"{sign}${a:,.2f}", f"{amount:.2f} USD", f"USD {amount:,.2f}", f"{sign}US${a}", f"{amount} dollars"]
    written = data.draw(st.sampled_from(forms))
    assert same("money", written, f"{amount:.2f} USD"), written
    assert not same("money", f"{amount + Decimal('0.01'):.2f} USD", f"{amount:.2f} USD")
    assert not same("money", f"{amount:.2f} EUR", f"{amount:.2f} USD")
    assert not same("money", f"{written} or {amount + 1:.2f}", f"{amount:.2f} USD")


@FAST
@given(st.integers(-10**11, 10**11), st.integers(0, 3), st.data())
def test_numbers_however_grouped(n: int, decimals: int, data: st.DataObject) -> None:
    x = Decimal(n) / (10 ** decimals)
    forms = [f"{x:,f}", f"{x:f}", f"{x:.{decimals + 2}f}", f"{x:,.{decimals + 1}f} items"]
    assert same("number", data.draw(st.sampled_from(forms)), float(x))
    step = Decimal(1) / (10 ** decimals)
    assert not same("number", f"{x + step:f}", float(x))
    assert not same("number", f"{x:f} or {x + step:f}", float(x))


# ---------------------------------------------------------------- email, URL

locals_ = st.from_regex(r"[a-z][a-z0-9._]{0,10}[a-z0-9]", fullmatch=True)
domains = st.from_regex(r"[a-z][a-z0-9-]{0,8}[a-z0-9]\.(com|org|net|io)", fullmatch=True)


@FAST
@given(locals_, domains, st.data())
def test_an_email_address_whatever_its_case_and_wrapping(local: str, domain: str, data: st.DataObject) -> None:
    addr = f"{local}@{domain}"
    cased = "".join(ch.upper() if data.draw(st.booleans()) else ch for ch in addr)
    forms = [cased, f'"{cased}"', f"mailto:{cased}", f"Ana Diaz <{cased}>", f"{cased}."]
    assert same("email", data.draw(st.sampled_from(forms)), addr)


@FAST
@given(locals_, domains)
def test_another_mailbox_or_two_addresses_fail(local: str, domain: str) -> None:
    addr = f"{local}@{domain}"
    assert not same("email", f"{local}x@{domain}", addr)
    assert not same("email", f"{local}+tag@{domain}", addr)
    assert not same("email", f"{addr}, other@{domain}", addr)
    assert not same("email", f"{addr} or {local}@x{domain}", addr)
    assert not same("email", f"{local}@{domain}x", addr)


params = st.lists(st.tuples(st.sampled_from(["sort", "brand", "q", "dir", "page"]),
                            st.from_regex(r"[a-z0-9]{1,6}", fullmatch=True)), min_size=1, max_size=4, unique_by=lambda p: p[0])


@FAST
@given(params, st.data())
def test_a_url_whatever_its_spelling_and_parameter_order(pairs: list[tuple[str, str]], data: st.DataObject) -> None:
    query = "&".join(f"{k}={v}" for k, v in pairs)
    expected = f"https://shop.test/c/shoes?{query}"
    shuffled = "&".join(f"{k}={v}" for k, v in data.draw(st.permutations(pairs)))
    forms = [f"https://SHOP.test:443/c/shoes?{shuffled}", f"HTTPS://shop.test/c/%73hoes?{shuffled}",
             f"https://shop.test/c/shoes?{shuffled}"]
    assert same("url", data.draw(st.sampled_from(forms)), expected)
    assert same("url", f"https://shop.test/c/shoes?{shuffled}", f"/c/shoes?{query}")


@FAST
@given(params, st.data())
def test_an_added_repeated_or_missing_parameter_fails(pairs: list[tuple[str, str]], data: st.DataObject) -> None:
    query = "&".join(f"{k}={v}" for k, v in pairs)
    expected = f"/c/shoes?{query}"
    k, v = data.draw(st.sampled_from(pairs))
    assert not same("url", f"/c/shoes?{query}&{k}={v}z", expected)  # repeated, another value
    assert not same("url", f"/c/shoes?{query}&{k}={v}", expected)  # repeated, the same value
    assert not same("url", f"/c/shoes?{query}&extra=1", expected)
    assert not same("url", "/c/shoes?" + "&".join(f"{a}={b}" for a, b in pairs if a != k), expected)
    assert not same("url", f"/c/shoes/?{query}", expected)
    assert not same("url", f"/c/shoes?{query} /c/boots", expected)


# ---------------------------------------------------------------- text, rich text, formula, phone, address

words = st.lists(st.from_regex(r"[A-Za-z][a-z]{1,7}", fullmatch=True), min_size=1, max_size=5).map(" ".join)


@FAST
@given(words, st.data())
def test_quoted_text_is_the_text_in_an_answer_only(text: str, data: st.DataObject) -> None:
    """An answer's enclosing quotes come from the instruction ('Rename it to "Y"'); a stored
    value keeps them (the app shows a title stored as '"Y"' with its quotes). Case and
    spacing aside either way: free text the agent types is judged as text."""
    quoted = [f'"{text}"', f"'{text}'", f"\u201c{text}\u201d", f'"\u201c{text}\u201d"']
    spaced = [f"  {text.upper()} ", text.replace(" ", "   "), text.lower()]
    answer = _judge([{"check": "said", "get": {"kind": "answer"}, "expect": {"op": "text", "value": text}}])
    stored = _judge([{"check": "stored", "get": {"kind": "url"}, "expect": {"op": "text", "value": text}}])
    key = query_key(UrlQuery())
    form = data.draw(st.sampled_from(quoted + spaced))
    assert answer.evaluate(JudgeInput(done=Done(answer=form))).passed
    assert stored.evaluate(JudgeInput(final={key: StateResult(value=form)})).passed == (form in spaced)
    assert same("text", form, text) == (form in spaced)  # a table's or a cell's stored text


@FAST
@given(words)
def test_text_one_letter_off_fails(text: str) -> None:
    for what, value in near("text", text):
        assert not same("text", value, text), what
    assert not same("text", f'"{text}" and "{text}"', text)  # quotes inside stay


@FAST
@given(st.sampled_from(["SUM", "AVERAGE", "MAX", "MIN", "COUNT"]), st.from_regex(r"[A-H]", fullmatch=True),
       st.integers(1, 50), st.integers(1, 50), st.data())
def test_a_formula_up_to_absolute_references_case_and_spacing(fn: str, col: str, r1: int, r2: int,
                                                                 data: st.DataObject) -> None:
    lo, hi = min(r1, r2), max(r1, r2)
    expected = f"={fn}({col}{lo}:{col}{hi})"
    dollar = data.draw(st.sampled_from(["$", ""])), data.draw(st.sampled_from(["$", ""]))
    forms = [f"={fn.lower()}( {dollar[0]}{col}{dollar[1]}{lo} : {col}{hi} )", f"={fn}(${col}${lo}:${col}${hi})",
             f"={fn}({col}{hi}:{col}{lo})", f"={fn}({col.lower()}{lo}:{col.lower()}{hi})"]
    assert same("formula", data.draw(st.sampled_from(forms)), expected)
    assert same("formula", f"{fn}(${col}${lo}:{col}{hi})", f"{fn}({col}{lo}:{col}{hi})")  # stored without "="
    assert not same("formula", f"={fn}({col}{lo}:{col}{hi + 1})", expected)
    assert not same("formula", f"={'MAX' if fn != 'MAX' else 'MIN'}({col}{lo}:{col}{hi})", expected)
    assert not same("formula", '=SUM("B2")', '=SUM("b2")')  # string literals are exact


def test_a_typed_value_is_not_a_formula() -> None:
    assert not compare(CMP.validate_python({"op": "formula", "value": "=SUM(B2:B7)"}), "120")[0]
    assert compare(CMP.validate_python({"op": "formula", "value": "=SUM(B2:B7)"}), "=sum($B$2:$B$7)")[0]


@FAST
@given(st.from_regex(r"[2-9]\d{9}", fullmatch=True), st.data())
def test_a_phone_number_however_grouped(digits: str, data: st.DataObject) -> None:
    a, b, c = digits[:3], digits[3:6], digits[6:]
    forms = [f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"+1 {a} {b} {c}", f"1-{a}-{b}-{c}", f"001 {a}{b}{c}"]
    assert same("phone", data.draw(st.sampled_from(forms)), digits)
    other = digits[:-1] + str((int(digits[-1]) + 1) % 10)
    assert not same("phone", other, digits)
    assert not same("phone", f"{digits} or {other}", digits)
    assert not same("phone", f"{digits}, {other}", digits)


@FAST
@given(st.integers(1, 9999), st.sampled_from(["Oak", "Maple", "Elm"]),
       st.sampled_from([("Street", "St."), ("Avenue", "Ave"), ("Road", "Rd")]), st.data())
def test_an_address_through_its_abbreviations(number: int, name: str, kind: tuple[str, str],
                                              data: st.DataObject) -> None:
    expected = f"{number} {name} {kind[0]}, Apartment 4"
    forms = [f"{number} {name} {kind[1]} Apt 4", f"{number} {name.upper()} {kind[0].upper()}\nAPT. 4",
             f'"{number} {name} {kind[1]}, Apt. 4"']
    assert same("address", data.draw(st.sampled_from(forms)), expected)
    assert not same("address", f"{number + 1} {name} {kind[0]}, Apartment 4", expected)
    assert not same("address", f"{number} {name} {kind[0]}, Apartment 5", expected)


def test_rich_text_both_sides() -> None:
    assert same("rich_text", "<div>Hi <strong>there</strong></div>", "<p>Hi <b>there</b></p>")
    assert not same("rich_text", "<p>Hi there</p>", "<p>Hi <b>there</b></p>")
    assert not same("rich_text", "<p>Hi <b>therf</b></p>", "<p>Hi <b>there</b></p>")


# ---------------------------------------------------------------- every scalar type refuses several values

@given(st.sampled_from([("email", "a@x.org"), ("url", "/c?a=1"), ("date", "2026-03-05"), ("time", "14:30"),
                        ("datetime", "2026-03-05 14:30"), ("money", "$12.00"), ("number", "12"), ("text", "milk"),
                        ("rich_text", "<p>milk</p>"), ("formula", "=A1"), ("phone", "5550102000"),
                        ("address", "1 Oak St")]))
def test_every_scalar_type_refuses_a_list(case: tuple[str, str]) -> None:
    kind, value = case
    assert same(kind, value, value)
    assert not same(kind, [value], value)
    assert not same(kind, [value, value], value)
    assert not same(kind, None, value)


# ---------------------------------------------------------------- the variants judge QA uses are both sides

@FAST
@given(st.sampled_from([("date", "2026-03-05"), ("time", "09:05"), ("datetime", "2026-03-05 14:30"),
                        ("number", "971"), ("number", "12.50"), ("money", "$1,234.50"), ("email", "Ana@Example.org"),
                        ("url", "https://ex.com/c/s?sort=price&brand=Acme"), ("url", "/c/s?sort=price"),
                        ("text", "Renew passport"), ("rich_text", "<p>Hi <b>there</b></p>"), ("formula", "=SUM(B2:B7)"),
                        ("phone", "(555) 010-2000"), ("address", "12 Oak Street, Apt 4")]))
def test_generated_equivalents_pass_and_near_values_fail(case: tuple[str, str]) -> None:
    kind, value = case
    assert equivalents(kind, value) and near(kind, value)
    for what, other in equivalents(kind, value):
        if kind == "text" and "quotes" in what:  # an answer's class only (a stored text keeps its quotes)
            assert compare(S.TextCmp(op="text", value=value, quotes=True), other)[0] and not same(kind, other, value)
            continue
        assert same(kind, other, value), (what, other)
    for what, other in near(kind, value):
        assert not same(kind, other, value), (what, other)


# ---------------------------------------------------------------- through the spec and the judge

def test_spec_ops_route_through_the_types() -> None:
    def ok(observed: object, **spec: object) -> bool:
        return compare(CMP.validate_python(spec), observed)[0]

    assert ok("ANA@x.org", op="email", value="ana@x.org")
    assert ok("https://a.test/c?b=1&a=2", op="url", value="/c?a=2&b=1")
    assert ok("https://a.test/c?b=1&a=2&utm=x", op="url", value="/c?a=2&b=1", ignore_params=["utm"])
    assert not ok("https://a.test/c?b=1&a=2&brand=x", op="url", value="/c?a=2&b=1")
    assert ok("2:30 PM", op="time", value="14:30") and not ok("2:30 or 3 PM", op="time", value="14:30")
    assert ok("1234.5", op="money", value="$1,234.50", currency="USD")
    assert not ok("€1234.5", op="money", value="1234.50", currency="USD")
    assert ok('"Renew passport"', op="text", value="renew passport", quotes=True)
    assert not ok('"Renew passport"', op="text", value="renew passport")
    rows = [{"email": "ANA@X.ORG", "when": "March 5, 2026", "f": "=sum($A$1:A3)"}]
    assert ok(rows, op="table", rows=[{"email": "ana@x.org", "when": "2026-03-05", "f": "=SUM(A1:A3)"}],
              normalize={"email": "email", "when": "date", "f": "formula"})
    assert not ok([{"when": "March 5 or 6, 2026"}], op="table", rows=[{"when": "2026-03-05"}], normalize={"when": "date"})


def _judge(checks: list[dict[str, object]]) -> StateJudge:
    return StateJudge(S.JudgeSpec.model_validate({"checks": checks}))


def test_a_hedged_date_answer_fails_the_judge() -> None:
    judge = _judge([{"check": "the date", "get": {"kind": "answer"}, "expect": {"op": "date", "value": "2026-03-05"}}])
    assert judge.evaluate(JudgeInput(done=Done(answer="March 5, 2026"))).passed
    assert not judge.evaluate(JudgeInput(done=Done(answer="March 5, 2026 or March 6, 2026"))).passed
    assert not judge.evaluate(JudgeInput(done=Done(answer="March 5 or 6, 2026"))).passed


def test_a_repeated_url_parameter_is_not_read_as_its_first_value() -> None:
    judge = _judge([{"check": "sorted", "get": {"kind": "url", "param": "sort"}, "expect": {"op": "equals", "value": "price"}}])
    key = query_key(UrlQuery())

    def at(url: str) -> bool:
        return judge.evaluate(JudgeInput(final={key: StateResult(value=url)})).passed

    assert at("https://shop.test/c/shoes?sort=price")
    assert not at("https://shop.test/c/shoes?sort=price&sort=name")
    whole = _judge([{"check": "the page", "get": {"kind": "url"}, "expect": {"op": "url", "value": "/c/shoes?sort=price"}}])
    assert whole.evaluate(JudgeInput(final={key: StateResult(value="https://shop.test/c/shoes?sort=price")})).passed
    assert not whole.evaluate(JudgeInput(final={key: StateResult(value="https://shop.test/c/shoes?sort=price&brand=Acme")})).passed


# ---------------------------------------------------------------- judge QA's typed equivalent probe

def _instance(checks: list[dict[str, object]]) -> TaskInstance:
    return TaskInstance(task_id="t.x@1", seed=0, instruction="When?", sandbox_kind="fake", sandbox_config={},
                        judge=_judge(checks), oracle=None)


def test_the_typed_probe_passes_a_judge_that_keeps_the_class() -> None:
    instance = _instance([{"check": "the date", "get": {"kind": "answer"}, "expect": {"op": "date", "value": "2026-03-05"}}])
    ran, _, wrong = typed_probes(instance, JudgeInput(done=Done(answer="2026-03-05")))
    assert ran["equivalent"] >= 5 and not wrong


def test_the_typed_probe_catches_hedges_refused_equivalents_and_param_reads() -> None:
    # a date answer judged by a pattern: a hedge passes and another format fails
    loose = _instance([{"check": "the date", "get": {"kind": "answer"},
                        "expect": {"op": "text", "value": "2026-03-05"}}])
    _, _, wrong = typed_probes(loose, JudgeInput(done=Done(answer="2026-03-05")))
    assert not wrong  # text is its own type: its class is quotes, case and spacing
    hedgy = _instance([{"check": "the date", "get": {"kind": "answer"},
                        "expect": {"op": "date", "value": "2026-03-05"}},
                       {"check": "and it says so", "get": {"kind": "answer"},
                        "expect": {"op": "regex", "pattern": "^2026-03-05$"}}])
    _, _, wrong = typed_probes(hedgy, JudgeInput(done=Done(answer="2026-03-05")))
    assert any("another format" in reason for _, reason, _ in wrong)
    key = query_key(UrlQuery())
    by_param = _instance([{"check": "sorted", "get": {"kind": "url", "param": "sort"},
                           "expect": {"op": "text", "value": "price"}}])
    ran, _, wrong = typed_probes(by_param, JudgeInput(final={key: StateResult(value="https://s.test/c?sort=price")}))
    assert ran["equivalent"] >= 1 and not wrong  # the repeated parameter reads as a list: it fails


def test_office_cells_are_judged_by_type_and_the_probe_attacks_their_formulas() -> None:
    """office.calc_sum_total's judge reads the saved cells: a total written with absolute
    references (or a lower-case function) is the same formula; a moved reference or the
    value typed instead is not."""
    from cua.judges.getters import build_getter
    from cua.tasks.registry import get_template

    instance = get_template("office.calc_sum_total@1").instantiate(0)
    p = instance.params
    get = instance.judge.spec.checks[0].get
    key = build_getter(get.model_copy(update={"path": None})).key
    label, cell = p["label_cell"], p["cell"]

    from cua.state import FilesQuery
    from cua.task import query_key

    # the user's files as the guest lists them, the same at reset and at the end (no other file touched)
    files = {query_key(q): StateResult(value={"entries": {}, "truncated": False})
             for q in instance.judge.queries() if isinstance(q, FilesQuery)}

    def saved(formula: str, value: object) -> JudgeInput:
        dump = f"{p['kept']}\n{label}\tf=\tv=Total\n{cell}\tf={formula}\tv={value}\n"
        return JudgeInput(initial=files,
                          final={**files, key: StateResult(value={"returncode": 0, "stdout": dump, "stderr": ""})},
                          done=Done())

    n = p["last"]
    assert instance.judge.evaluate(saved(f"SUM(B2:B{n})", p["total"])).passed
    assert instance.judge.evaluate(saved(f"SUM($B$2:$B${n})", p["total"])).passed
    assert instance.judge.evaluate(saved(f"sum(B{n}:B2)", f"{p['total']}.0")).passed
    assert not instance.judge.evaluate(saved(f"SUM(B3:B{n})", p["total"])).passed
    assert not instance.judge.evaluate(saved("", p["total"])).passed
    assert not instance.judge.evaluate(saved(f"SUM(B2:B{n})", p["total"] + 1)).passed
    ran, _, wrong = typed_probes(instance, saved(f"SUM(B2:B{n})", p["total"]))
    assert ran["equivalent"] >= 4 and not wrong


def test_an_email_typed_in_other_case_is_the_contact_asked_for() -> None:
    """contacts.new_contact on the real contacts app: the new contact saved with its email
    in upper case is the same address (the judge's lookup and its allowed change read it
    as an email, not as exact text); another address is not."""
    from cua.state import AppStateQuery, SqlQuery
    from cua.tasks.params import seeded_app
    from cua.tasks.registry import get_template

    instance = get_template("contacts.new_contact@1").instantiate(0)
    p = instance.params

    def read(app: Any) -> dict[str, StateResult]:
        out = {}
        for q in instance.judge.queries():
            if isinstance(q, AppStateQuery):
                out[query_key(q)] = StateResult(value=app.state())
            elif isinstance(q, SqlQuery):
                out[query_key(q)] = StateResult(value=app.db.read_only_query(q.query, list(q.params)))
        return out

    def saved_as(email: str) -> bool:
        with seeded_app("contacts", instance.reset_seed) as app:
            before = read(app)
            app.db.execute("INSERT INTO contacts (first_name, last_name, email, phone, title, company_id, owner_id, "
                           "status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, '2026-03-01')",
                           (p["first"], p["last"], email, p["phone"], p["title"], p["co"]["id"], p["o"]["id"],
                            p["status"]))
            after = read(app)
        return instance.judge.evaluate(JudgeInput(initial=before, final=after, done=Done())).passed

    assert saved_as(p["email"])
    assert saved_as(p["email"].upper())
    assert not saved_as("x" + p["email"])


def test_a_url_part_is_read_as_the_server_reads_it() -> None:
    judge = _judge([{"check": "the category", "get": {"kind": "url", "part": "path"},
                     "expect": {"op": "equals", "value": "/c/shoes"}}])
    key = query_key(UrlQuery())
    for url, ok in (("https://s.test/%63/shoes", True), ("https://s.test/c/%73hoes?x=1", True),
                    ("https://s.test/c/shoes%2F", False), ("https://s.test/c/shoe", False)):
        assert judge.evaluate(JudgeInput(final={key: StateResult(value=url)})).passed is ok, url


def test_osworld_workbooks_and_tabs_compare_as_typed_values(tmp_path: Any) -> None:
    import openpyxl

    from cua.tasks.osworld.metrics import METRICS

    def book(name: str, total: str) -> str:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(["Item", "Cost"])
        ws.append(["a", 3])
        ws.append(["b", 4])
        ws.append(["Total", total])
        path = tmp_path / name
        wb.save(path)
        return str(path)

    ref = book("ref.xlsx", "=SUM(B2:B3)")
    assert METRICS["compare_table"](book("abs.xlsx", "=SUM($B$2:$B$3)"), ref) == 1.0
    assert METRICS["compare_table"](book("moved.xlsx", "=SUM(B2:B4)"), ref) == 0.0
    assert METRICS["compare_table"](book("typed.xlsx", "7"), ref) == 0.0
    rule = {"type": "url", "url": "https://www.example.com/search?q=cua&lang=en"}
    assert METRICS["is_expected_active_tab"]({"url": "https://WWW.example.com:443/search?lang=en&q=cua"}, rule) == 1.0
    assert METRICS["is_expected_active_tab"]({"url": "https://www.example.com/search?q=cua&lang=en&q=x"}, rule) == 0.0


def test_the_database_probe_respells_an_email_address_it_wrote() -> None:
    from cua.qa.probes import equivalent_spellings

    spelled = dict(equivalent_spellings("email", "ana.diaz@example.org"))
    assert spelled == {"the email address in upper case": "ANA.DIAZ@EXAMPLE.ORG"}
    assert same("email", "ANA.DIAZ@EXAMPLE.ORG", "ana.diaz@example.org")
    assert equivalent_spellings("to_addrs", "a@x.org, b@x.org") == [("the recipients in another order", "b@x.org, a@x.org")]


def test_equals_with_a_type_keeps_the_shape_and_types_the_leaves() -> None:
    from typing import get_args

    from cua.judges.values import TYPES

    assert get_args(S.ValueTypeName) == TYPES  # the spec and the values name the same types
    spec = CMP.validate_python({"op": "equals", "value": [["ana@x.org"]], "type": "email"})
    assert compare(spec, [["Ana@X.org"]])[0]
    for wrong in ([["ana@x.org", "bo@x.org"]], [["ana@x.org"], ["ana@x.org"]], [["bo@x.org"]], ["ana@x.org"], []):
        assert not compare(spec, wrong)[0], wrong


def test_wikitext_that_opens_with_a_heading_is_no_formula() -> None:
    """The equivalent probe respells a formula in other case; wikitext opening with a
    heading ("= Title =", a Trac page) read as one, and the probe then failed the oracle's
    correct end state (tracker_trac, fifth session)."""
    from cua.qa.probes import equivalent_spellings

    for wiki in ("= Release checklist =\nShip it.", "== History ==", "= Title =", "=Title=\n\nbody"):
        assert not any(name.startswith("formula") for name, _ in equivalent_spellings("text", wiki)), wiki
    assert dict(equivalent_spellings("raw", "=SUM(B2:B9)")) == {"formula in lower case, spaced": "=sum ( b2:b9 )"}
    assert dict(equivalent_spellings("raw", "=A1=B1")).get("formula in lower case, spaced") == "=a1=b1"
