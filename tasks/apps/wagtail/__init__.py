"""Wagtail, the real product (`cua.tasks.products.wagtail`), under the bundled apps' names, so a
suite runs it with `sandbox: {app: wagtail}`."""

from cua.tasks.products.wagtail import Wagtail as APP

__all__ = ["APP"]
