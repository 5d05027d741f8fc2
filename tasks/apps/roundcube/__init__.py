"""Roundcube with Dovecot, the real product (`cua.tasks.products.roundcube`), under the
bundled apps' names, so a suite runs it with `sandbox: {app: roundcube}`."""

from cua.tasks.products.roundcube import Roundcube as APP

__all__ = ["APP"]
