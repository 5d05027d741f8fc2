"""django-oscar, the real product (`cua.tasks.products.oscar`), under the bundled apps' names,
so a suite runs it with `sandbox: {app: oscar}`."""

from cua.tasks.products.oscar import Oscar as APP

__all__ = ["APP"]
