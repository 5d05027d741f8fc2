"""A typed URL is judged by what the app reads, not by its text (issue 29, class 1).

Each bundled app declares its query parameters once (`WebApp.query_params`); its routes read
them through that declaration and the task loader hands the same rules to every `url` check
on the app. These tests take the real templates (`shop.sort_by_price_desc`,
`travel.filtered_search`, `contacts.sort_by_company_desc`), the real apps behind
Starlette's TestClient, and hold the judge to the page: a URL the app reads as the expected
one shows the same page and passes; one that changes what the page shows fails.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from _apps_common import open_app  # tests/'s own helpers, as pytest puts tests/ on sys.path

from cua.judges import spec as S
from cua.judges.comparators import compare
from cua.tasks.format import TaskFormatError
from cua.tasks.loader import load_file, load_text

SUITES = "tasks/suites"


def _url_check(template_id: str, seed: int = 0) -> S.UrlCmp:
    suite = template_id.split(".", 1)[0]
    template = next(t for t in load_file(f"{SUITES}/{suite}/{suite}.yaml") if t.id == template_id)
    spec = template.instantiate(seed).judge.spec
    found = [n.expect for n in spec.checks if isinstance(n, S.CheckNode) and isinstance(n.expect, S.UrlCmp)]
    assert len(found) == 1, template_id
    return found[0]


def _expected(check: S.UrlCmp) -> str:
    return str(check.value) + ("?" + urlencode(check.params, doseq=True) if check.params else "")


def _shown(html: str) -> str:
    """The page's visible text (what a user reads), tags dropped."""
    main = re.search(r"<main>(.*)</main>", html, re.S)
    assert main is not None
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", main.group(1))).strip()


def _judge_and_page(app_name: str, check: S.UrlCmp, same: list[str], other: list[str]) -> None:
    _, web, ctl = open_app(app_name)
    ctl.reset(0)
    want_url = _expected(check)
    want = web.get(want_url)
    assert want.status_code == 200
    for url in same:
        assert compare(check, f"http://127.0.0.1{url}") == (True, ""), url
        assert _shown(web.get(url).text) == _shown(want.text), f"{url} shows another page than {want_url}"
    for url in other:
        ok, why = compare(check, f"http://127.0.0.1{url}")
        assert not ok and why, url
        assert web.get(url).text != want.text, f"{url} shows the page of {want_url}"


def test_shop_reads_page_sort_and_flags_as_the_app_does() -> None:
    check = _url_check("shop.sort_by_price_desc@1")
    assert check.query_rules and not check.defaults  # the app's declaration, nothing by hand
    base = str(check.value).split("?")[0]
    _judge_and_page("shop", check, same=[
        f"{base}?sort=price_desc&page=1",  # page 1 is no page parameter (the probe's case)
        f"{base}?page=01&sort=price_desc", f"{base}?sort=price_desc&page=0",
        f"{base}?sort=price_asc&sort=price_desc",  # the app reads the last one
        f"{base}?sort=price_desc&brand=&min=",
        f"{base}?sort=price_desc&utm_source=mail",  # a parameter the shop reads nowhere
    ], other=[
        f"{base}?sort=price_desc&page=2", f"{base}?sort=price_desc&in_stock=1", f"{base}?sort=price_desc&brand=Nimbus",
        f"{base}?sort=price_desc&sort=price_asc",  # the last one wins: another order
        f"{base}?sort=price_asc", f"{base}?sort=featured", base,
    ])


def test_travel_reads_airports_and_filters_as_the_app_does() -> None:
    check = _url_check("travel.filtered_search@1")
    p = {k: str(v) for k, v in (check.params or {}).items()}
    o, d, day = p["from"], p["to"], p["date"]
    q = f"date={day}&stops=0&sort=depart"
    _judge_and_page("travel", check, same=[
        f"/flights?from={o.lower()}&to={d.lower()}&{q}",  # the probe's case
        f"/flights?from=+{o}+&to={d}&{q}&window=any&max_price=",
        f"/flights?from=Somewhere+({o})&to={d}&{q}&stops=0&window=bogus",
        f"/flights?to={d}&from={o}&sort=price&{q}",  # the last sort is read
    ], other=[
        f"/flights?from={o}&to={d}&{q}&stops=1", f"/flights?from={o}&to={d}&{q}&window=morning",
        f"/flights?from={o}&to={d}&{q}&max_price=1", f"/flights?from={o}&to={d}&{q}&sort=price",
        f"/flights?from={d}&to={o}&{q}", f"/flights?from={o}&to={d}&date={day}&sort=depart",
    ])


def test_travel_resolves_a_unique_city_as_its_airport() -> None:
    check = _url_check("travel.filtered_search@1")
    from cua.tasks.apps.travel.seed import AIRPORTS

    cities = [c for _, c, _ in AIRPORTS]
    code, city = next((code, city) for code, city, _ in AIRPORTS if cities.count(city) == 1)
    rule = check.query_rules["from"]
    assert rule.canonical(city.upper()) == code == rule.canonical(f"{city} ({code.lower()})")
    shared = next(c for c in cities if cities.count(c) > 1)
    assert rule.canonical(shared) not in {code for code, _, _ in AIRPORTS}  # two airports: not one of them


def test_contacts_reads_page_size_and_direction_as_the_app_does() -> None:
    check = _url_check("contacts.sort_by_company_desc@1")
    _judge_and_page("contacts", check, same=[
        "/contacts?sort=company&dir=desc&per=25", "/contacts?sort=company&dir=desc&per=10&page=1",
        "/contacts?dir=asc&sort=company&dir=desc&status=bogus", "/contacts?sort=company&dir=desc&ref=home",
    ], other=[
        "/contacts?sort=company&dir=desc&per=50", "/contacts?sort=company&dir=desc&page=2",
        "/contacts?sort=company&dir=desc&status=lead", "/contacts?sort=company", "/contacts?sort=company&dir=DESC",
        "/contacts?sort=company&dir=desc&msg=Saved",  # a flash message: shown
    ])


APP_SOURCES = Path(__file__).resolve().parents[2] / "tasks" / "apps"


@pytest.mark.parametrize("app", ["shop", "travel", "contacts", "kanban", "calendar"])
def test_a_declaring_app_reads_its_query_only_through_its_declaration(app: str) -> None:
    """The judge ignores a parameter the app does not declare; that is sound only while no
    route reads the query another way."""
    from cua.tasks.apps import query_rules

    assert query_rules(app)
    for source in (APP_SOURCES / app).rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        for way in ("request.query_params", ".query_params.get", "query_string", "request.url.query", ".url.query"):
            assert way not in text, f"{source} reads the query as {way!r}, not through self.query()"


_FILE = """
suite: shop
templates:
  - id: shop.by_hand@1
    instruction: Sort.
    sandbox: {kind: browser, app: shop}
    judge:
      checks:
        - check: sorted
          get: {kind: url}
          expect: {op: url, value: "/c/x?sort=price_desc", defaults: {sort: featured}}
    oracle: []
    tags: {tier: 1}
"""


def test_a_url_check_on_a_bundled_app_lists_no_defaults_by_hand() -> None:
    template = load_text(_FILE, "t.yaml", suite="shop")[0]
    with pytest.raises(TaskFormatError, match="declares its query parameters"):
        template.instantiate(0)
    fixed = load_text(_FILE.replace(", defaults: {sort: featured}", ""), "t.yaml", suite="shop")[0]
    check: Any = fixed.instantiate(0).judge.spec.checks[0]
    assert compare(check.expect, "http://h/c/x?sort=price_desc&page=1")[0]
