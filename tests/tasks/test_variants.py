"""Appearance variants (`cua.variant`, issue 32): drawn seeded, held out of a split, shown by
the bundled apps (theme, layout, locale) and the browser sandbox (viewport), recorded in the
trajectory, and refused with a typed error when they are no variant."""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from _apps_common import open_app

from cua.cli import main
from cua.episode import NoopAgent, run_episode
from cua.episode.local import LocalSandbox, open_local
from cua.errors import BadRequest
from cua.observation import Size
from cua.tasks.registry import get_template
from cua.tasks.variants import in_variant, split_variants, variant_of, variants_of
from cua.trajectory import TrajectoryWriter, read_trajectory
from cua.variant import DEFAULT, HoldOut, Variant, VariantAxes, draw, draws, parse_variant

GERMAN_DARK = Variant(theme="dark", layout="sidebar", locale="de-DE", viewport=Size(width=1280, height=720))


# --- the model, drawing and holding out (no browser) ---

def test_draws_are_seeded_and_cover_every_axis() -> None:
    axes = VariantAxes(layouts=("top", "sidebar", "dense"), locales=("en-US", "de-DE"))
    first = [draw(random.Random(7), axes) for _ in range(3)]
    assert first == [draw(random.Random(7), axes) for _ in range(3)]
    many = draws(random.Random(1), axes, 40)
    assert len(set(many)) == 40 and many[0] == Variant(theme="light", layout="top", locale="en-US")
    for axis in ("theme", "layout", "locale", "viewport"):
        assert len({v.value(axis) for v in many}) == len(axes.values(axis)), axis


def test_a_held_out_variant_never_appears_in_the_train_split() -> None:
    hold = HoldOut.parse("theme=contrast,locale=de-DE")
    instance = get_template("todo.mark_done@1").instantiate(0)
    for seed in range(20):
        shown = variants_of(instance.model_copy(update={"seed": seed}), 5, hold_out=hold)
        assert shown and all(not hold.holds(v) for v in map(variant_of, shown) if v is not None)
        held = variants_of(instance.model_copy(update={"seed": seed}), 5, hold_out=hold, held=True)
        assert held and all(v is not None and (v.theme == "contrast" or v.locale == "de-DE") for v in map(variant_of, held))


def test_bad_variant_input_gets_a_typed_error() -> None:
    with pytest.raises(BadRequest) as info:
        parse_variant({"theme": "dark", "colour": "red"})
    assert info.value.details["field"] == "variant.colour"
    with pytest.raises(BadRequest):
        parse_variant("dark")
    with pytest.raises(BadRequest, match="no theme 'neon'"):
        HoldOut.parse("theme=neon")
    with pytest.raises(BadRequest, match="axis=value"):
        HoldOut.parse("colour=red")
    with pytest.raises(BadRequest, match="no locale 'fr-FR'"):
        load_todo().set_variant(Variant(locale="fr-FR"))


def load_todo() -> Any:
    app, _, _ = open_app("todo")
    return app


def test_the_app_reset_takes_a_variant_and_refuses_a_bad_one() -> None:
    app, page, control = open_app("todo")
    ok = control.post("/__cua/reset", json={"seed": 0, "variant": GERMAN_DARK.model_dump(mode="json")})
    assert ok.status_code == 200 and app.variant == GERMAN_DARK
    html = page.get("/").text
    assert '<html lang="de-DE" data-theme="dark" data-layout="sidebar">' in html and ">Listen<" in html
    bad = control.post("/__cua/reset", json={"seed": 0, "variant": {"locale": "xx"}})
    assert bad.status_code == 400 and bad.json()["field"] == "variant.locale"
    assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200 and app.variant == DEFAULT


def test_an_app_refuses_a_locale_it_does_not_have() -> None:
    _, _, control = open_app("clock")  # an app with no translated UI takes every theme, English only
    assert control.post("/__cua/reset", json={"seed": 0, "variant": {"theme": "sepia"}}).status_code == 200
    assert control.post("/__cua/reset", json={"seed": 0, "variant": {"locale": "de-DE"}}).status_code == 400


# --- in real Chromium ---

def _shared(config: dict[str, Any]) -> dict[str, Any]:
    return {**config, "isolation": "shared"}


async def _page_facts(handle: LocalSandbox) -> dict[str, Any]:
    page = handle.sandbox.page  # type: ignore[attr-defined]
    return dict(await page.evaluate(
        "() => ({bg: getComputedStyle(document.body).backgroundColor, color: getComputedStyle(document.body).color,"
        " lang: document.documentElement.lang, text: document.body.textContent,"
        " width: innerWidth, height: innerHeight,"
        " bar: document.querySelector('header.appbar').getBoundingClientRect().toJSON(),"
        " main: document.querySelector('main').getBoundingClientRect().toJSON()})"))


@pytest.mark.slow
def test_two_variants_differ_on_screen_and_in_the_page(tmp_path: Path) -> None:
    """The first frames of one task under two variants differ; the German one shows German
    text and dates, the dark one other computed colours; the trajectory records the variant."""
    base = get_template("todo.complete_overdue@1").instantiate(0)
    plain, german = in_variant(base, DEFAULT), in_variant(base, GERMAN_DARK)

    async def run() -> None:
        async with open_local("browser", _shared(plain.sandbox_config)) as handle:
            first = await handle.reset(seed=0, options={"start_url": "/lists/1?show=all",
                                                        "variant": DEFAULT.model_dump(mode="json")})
            light = await _page_facts(handle)
            second = await handle.reset(seed=0, options={"start_url": "/lists/1?show=all",
                                                         "variant": GERMAN_DARK.model_dump(mode="json")})
            dark = await _page_facts(handle)
            assert first.screenshot is not None and second.screenshot is not None
            assert first.screenshot.data != second.screenshot.data
            assert light["bg"] != dark["bg"] and light["color"] != dark["color"]
            assert light["lang"] == "en-US" and dark["lang"] == "de-DE"
            assert light["main"]["top"] >= light["bar"]["bottom"]  # top: the bar above the page
            assert dark["main"]["left"] >= dark["bar"]["right"] and dark["bar"]["height"] > dark["bar"]["width"]  # sidebar
            assert "Priority" in light["text"] and "Priorität" in dark["text"]
            assert re.search(r"\d{2}\.\d{2}\.2026", dark["text"]) and not re.search(r"\d{2}\.\d{2}\.2026", light["text"])
            writer = TrajectoryWriter(tmp_path / "german")
            record = await run_episode(handle, german, NoopAgent(), writer=writer)
            writer.close()
            assert record.status == "completed"
        meta = read_trajectory(tmp_path / "german").meta
        assert meta.sandbox_config["variant"] == GERMAN_DARK.model_dump(mode="json")

    asyncio.run(run())


@pytest.mark.slow
def test_the_variant_viewport_is_the_sandbox_screen() -> None:
    wide = Variant(viewport=Size(width=1440, height=900))

    async def run() -> None:
        config = _shared({**get_template("todo.open_list@1").instantiate(0).sandbox_config,
                          "variant": wide.model_dump(mode="json")})
        async with open_local("browser", config) as handle:
            await handle.reset(seed=0)
            facts = await _page_facts(handle)
            assert (facts["width"], facts["height"]) == (1440, 900)
            with pytest.raises(BadRequest, match="fixed at create"):
                await handle.reset(seed=0, options={"variant": DEFAULT.model_dump(mode="json")})
            with pytest.raises(BadRequest):
                await handle.reset(seed=0, options={"variant": {"theme": "dark", "shape": "round"}})
            with pytest.raises(BadRequest, match="refused the variant"):  # the app's own refusal, typed
                await handle.reset(seed=0, options={"variant": wide.model_copy(update={"locale": "fr-FR"}).model_dump(mode="json")})
            await handle.reset(seed=0)  # the sandbox goes on
            assert (await _page_facts(handle))["lang"] == "en-US"

    asyncio.run(run())


@pytest.mark.slow
def test_eval_runs_k_variants_and_records_them(tmp_path: Path) -> None:
    """`cua eval --variants 2`: each instance in two variants, each episode's record and
    trajectory name its variant, the manifest the run's K; a resume finds both done."""
    out = tmp_path / "run"
    argv = ["eval", "todo.open_list@1", "--policy", "oracle", "--variants", "2", "--local", "--isolation", "shared",
            "--no-progress", "--no-report", "--frames", "last", "--out", str(out)]
    assert main(argv) == 0
    records = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2 and all(r["verdict"]["passed"] for r in records)
    assert records[0]["variant"] is None or records[0]["variant"] != records[1]["variant"]
    metas = [read_trajectory(out / r["trajectory"]).meta for r in records]
    assert [m.sandbox_config.get("variant") for m in metas if m is not None][1] is not None
    assert json.loads((out / "manifest.json").read_text())["runner"]["variants"] == 2
    assert main([*argv, "--resume"]) == 0  # both variants finished: nothing runs again
    assert len((out / "episodes.jsonl").read_text().splitlines()) == 2
    export = tmp_path / "export"
    assert main(["export", str(out), "--format", "jsonl", "--rows", "episode", "--images", "path",
                 "--out", str(export)]) == 0
    rows = [json.loads(line) for f in sorted(export.rglob("*.jsonl")) for line in f.read_text().splitlines()]
    assert sorted(r["variant"] for r in rows) == sorted(r["variant"] for r in records)


def test_eval_refuses_a_bad_hold_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", "todo.open_list@1", "--hold-out", "theme=neon", "--local", "--out", str(tmp_path / "r")]) == 2
    assert "no theme 'neon'" in capsys.readouterr().err


def test_a_hold_out_splits_by_variant() -> None:
    """With a hold-out, a train template's held variants are the test split, its others the
    train split; a test template is test data in every variant."""
    hold = HoldOut.parse("locale=de-DE")
    train = get_template("todo.mark_done@1").instantiate(1)
    test = get_template("todo.add_todo@1").instantiate(1)
    assert train.tags.split == "train" and test.tags.split == "test"
    locales = {split: {v.locale for v in map(variant_of, split_variants(train, 6, hold, split)) if v is not None}
               for split in ("train", "test")}
    assert locales == {"train": {"en-US"}, "test": {"de-DE"}}
    assert split_variants(test, 3, hold, "train") == []
    assert len(split_variants(test, 3, hold, "test")) == 3


def test_the_locale_writes_money_numbers_and_dates() -> None:
    """de-DE: prices `1.234,56 $` (the data's currency, the locale's separators), German UI
    text, German dates in the mail list; en-US: the apps' own `$1,234.56` and `Mar 01`."""
    shop, shop_page, shop_control = open_app("shop")
    mail, mail_page, mail_control = open_app("mail")
    german = {"seed": 0, "variant": {"locale": "de-DE"}}
    price = shop.db.scalar("SELECT price_cents FROM products ORDER BY price_cents DESC LIMIT 1")
    assert price >= 100_000  # a price with a thousands separator
    for control in (shop_control, mail_control):
        assert control.post("/__cua/reset", json=german).status_code == 200
    listing = shop_page.get("/search?q=&sort=price_desc").text
    whole, cents = divmod(price, 100)
    assert f"{whole // 1000}.{whole % 1000:03d},{cents:02d}\u00a0$" in listing and "Sortieren nach" in listing
    inbox = mail_page.get("/folder/inbox").text
    assert re.search(r"\d\d\. (Jan\.|Feb\.|März|Apr\.|Mai|Juni|Juli|Aug\.|Sept\.|Okt\.|Nov\.|Dez\.)<", inbox)
    assert "Posteingang" in inbox
    for control in (shop_control, mail_control):
        assert control.post("/__cua/reset", json={"seed": 0}).status_code == 200
    assert f"${whole // 1000},{whole % 1000:03d}.{cents:02d}" in shop_page.get("/search?q=&sort=price_desc").text
    assert re.search(r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d\d<", mail_page.get("/folder/inbox").text)
