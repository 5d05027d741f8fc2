"""The fake kind: a deterministic in-process form, for fast tests of everything above a
sandbox (server, client, episodes, eval) without Chromium, X or QEMU."""

from cua.sandboxes.fake.config import FakeConfig
from cua.sandboxes.fake.sandbox import FAKE_QUERIES, FakeSandbox

__all__ = ["FAKE_QUERIES", "FakeConfig", "FakeSandbox"]
