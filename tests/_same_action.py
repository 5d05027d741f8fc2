"""Two unified actions are the same within what a model's text can carry: coordinates
within 1 pixel (a swipe's distance too), waits within 10 ms, everything else equal (the SFT round trips:
tests/policy/test_sft_roundtrip.py, and the exported rows of tests/record/test_export.py)."""

from __future__ import annotations

from cua.actions import Action


def assert_same(got: Action, want: Action) -> None:
    g, w = got.model_dump(), want.model_dump()
    assert g.keys() == w.keys() and g["type"] == w["type"], (got, want)
    for key, value in w.items():
        if key == "path":
            assert len(g[key]) == len(value)
            for gp, wp in zip(g[key], value, strict=True):
                assert abs(gp["x"] - wp["x"]) <= 1.0 and abs(gp["y"] - wp["y"]) <= 1.0, (got, want)
        elif key in ("x", "y", "dx", "dy", "distance") and value is not None:
            assert g[key] is not None and abs(g[key] - value) <= 1.0, (key, got, want)
        elif key == "seconds":
            assert abs(g[key] - value) <= 0.01, (got, want)
        else:
            assert g[key] == value, (key, got, want)
