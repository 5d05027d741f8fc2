"""Trac, the real product (`cua.tasks.products.trac`), under the bundled apps' names, so a
suite runs it with `sandbox: {app: trac}`."""

from cua.tasks.products.trac import Trac as APP

__all__ = ["APP"]
