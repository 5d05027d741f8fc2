"""pretix, the real product (`cua.tasks.products.pretix`), under the bundled apps' names,
so a suite runs it with `sandbox: {app: pretix}`."""

from cua.tasks.products.pretix import Pretix as APP

__all__ = ["APP"]
