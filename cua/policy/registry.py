"""Policy backends by name: `make_policy("openai:MODEL@URL")` and its kin.

Backends are found through the `cua.policy_backends` entry point group, as sandbox kinds
are through `cua.sandbox_kinds`: each names a `from_spec(rest, **kw) -> Policy` in its own
module, so this module imports no backend (and no backend imports it), and a package can
add a backend without touching cua. Loading one imports only that backend's module: a spec
of `openai:` never imports torch.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from cua.policy.base import Policy

__all__ = ["ENTRY_POINT_GROUP", "PolicyFactory", "backends", "make_policy"]

ENTRY_POINT_GROUP = "cua.policy_backends"
#: `from_spec(rest, **kw)`: the part of the spec after `KIND:` (for `remote`, the whole URL).
PolicyFactory = Callable[..., Policy]


def backends() -> dict[str, EntryPoint]:
    """The installed backends by kind."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def make_policy(spec: str, **kw: Any) -> Policy:
    """Build a policy from a short spec string.

    - ``http://host:port`` or ``https://...``: a running `cua policy serve` (backend
      ``remote``); pass ``token=...`` (or set CUA_POLICY_TOKEN).
    - ``openai:MODEL@BASE_URL``: an OpenAI-compatible chat completions server driven
      in-process (``family=...``, ``api_key=...`` or OPENAI_API_KEY, ``history_images=...``).
    - ``transformers:PATH``: a local checkpoint loaded in-process (``family=...``,
      ``device=...``, ``dtype=...``).
    - ``scripted:FILE.jsonl``: replays a recorded trajectory (actions, or raw outputs of
      a family).
    - ``KIND:REST`` for any other installed backend.

    Keyword arguments go to the chosen backend. Raises ValueError on a bad spec.
    """
    known = backends()
    if spec.startswith(("http://", "https://")):
        kind, rest = "remote", spec
    else:
        kind, sep, rest = spec.partition(":")
        if not sep or not rest:
            raise ValueError(f"bad policy spec {spec!r}: expected http(s)://HOST:PORT or KIND:ARGS with KIND one "
                             f"of {', '.join(sorted(k for k in known if k != 'remote'))}")
    entry = known.get(kind)
    if entry is None:
        raise ValueError(f"unknown policy kind {kind!r} in {spec!r}; installed: {', '.join(sorted(known))}")
    factory: PolicyFactory = entry.load()
    return factory(rest, **kw)
