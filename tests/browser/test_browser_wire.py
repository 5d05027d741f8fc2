"""Playwright's driver messages decoded with orjson (sandboxes/browser/wire.py): what orjson
refuses still decodes as `json` would, through the real driver and Chromium."""

from __future__ import annotations

import json

import pytest
from _browser_rig import open_rig, serve  # tests/'s own helpers, as pytest puts tests/ on sys.path
from playwright._impl.transport import Transport

from cua.sandboxes.browser import wire


def test_loads_takes_what_json_takes() -> None:
    assert wire.loads is not json.loads, "orjson is a dependency of the browser extra"
    for text in ['{"a": [1, 2.5, "x", null, true], "b": {}}', '"\\ud800"', '[NaN, Infinity]', '"caf\u00e9 \\u00e9"']:
        assert repr(wire.loads(text)) == repr(json.loads(text))
        assert repr(wire.loads(text.encode())) == repr(json.loads(text))
    # past 64 bits orjson gives a float; the driver's numbers are JavaScript doubles anyway
    assert wire.loads("100000000000000000000") == 1e20
    with pytest.raises(json.JSONDecodeError):
        wire.loads("{not json")


@pytest.mark.slow
async def test_the_driver_decodes_with_it_and_a_lone_surrogate_survives() -> None:
    with serve({"/": "<title>t</title><p>plain</p>"}) as site:
        async with open_rig(site) as rig:
            assert getattr(Transport.deserialize_message, "__cua_fast__", False), "the runtime installs the decoder"
            await rig.navigator.goto(site.url("/"))
            page = rig.pages.page
            # orjson refuses a lone surrogate; the driver sends one as "\ud800"
            assert await page.evaluate("() => { document.title = 'a\\ud800b'; return document.title; }") == "a\ud800b"
            tree = await rig.pages.cdp.send("Accessibility.getFullAXTree")  # type: ignore[union-attr]
            assert any((n.get("name") or {}).get("value") == "plain" for n in tree["nodes"])
