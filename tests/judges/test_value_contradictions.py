"""Values that say something else than their digits: a scaled number, a weekday that is not
the date's, a line break inside one list item. Each passed a judge in an outside probe set
("103 cents" for a price in dollars, "Thursday, April 8, 2026" for a Wednesday, two bullets
read as three); each is refused now, and what is really equivalent still passes."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cua.judges.normalize import rich_text
from cua.judges.values.amounts import compare_money, compare_number
from cua.judges.values.temporal import compare_date


@pytest.mark.parametrize("answer", ["103 cents", "1118.99 thousand", "249k", "249 K", "249¢", "1.2 million", "3 dozen",
                                    "$249 k", "2 bn"])
def test_a_scaled_number_is_not_the_number(answer: str) -> None:
    digits = "".join(ch for ch in answer if ch.isdigit() or ch == ".")
    assert not compare_number(answer, digits)[0]
    assert not compare_money(answer, digits)[0]


@pytest.mark.parametrize("answer,expected", [("$1,118.99", "1118.99"), ("1118.99 USD", "1118.99"), ("12 items", "12"),
                                             ("-3 %", "-3"), ("1 234.50", "1234.5"), ("249 dollars", "249")])
def test_decorated_numbers_still_pass(answer: str, expected: str) -> None:
    assert compare_number(answer, expected)[0]


@settings(max_examples=60, deadline=None)
@given(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)), st.integers(0, 6))
def test_a_weekday_beside_a_date_must_be_its_own(day: dt.date, other: int) -> None:
    own = f"{day:%A}, {day:%B} {day.day}, {day.year}"
    assert compare_date(own, day.isoformat())[0]
    assert compare_date(f"{day:%a} {day.isoformat()}", day.isoformat())[0]
    wrong = dt.date(2024, 1, 1 + other)  # Monday 1 Jan 2024 + other days: every weekday
    if wrong.weekday() != day.weekday():
        assert not compare_date(f"{wrong:%A}, {day:%B} {day.day}, {day.year}", day.isoformat())[0]
    assert not compare_date(f"Monday or Tuesday, {day.isoformat()}", day.isoformat())[0]


def test_a_line_broken_inside_a_list_item_is_not_another_item() -> None:
    three = rich_text("<ul><li>a</li><li>b</li><li>c</li></ul>")
    assert rich_text("<ul><li>a<br>b</li><li>c</li></ul>") != three
    assert rich_text("<ul><li>a<br/>b</li><li>c</li></ul>") != three
    assert rich_text("<ul><li><strong>a</strong></li><li>b</li><li>c</li></ul>") == rich_text(
        "<ul><li><b>a</b></li><li>b</li><li>c</li></ul>")
    # outside a list a break and a paragraph still read alike, as they did
    assert rich_text("<p>x<br>y</p>") == rich_text("<p>x</p><p>y</p>")
