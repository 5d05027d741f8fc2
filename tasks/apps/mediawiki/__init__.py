"""MediaWiki, the real product (`cua.tasks.products.mediawiki`), under the bundled apps'
names, so a suite runs it with `sandbox: {app: mediawiki}`."""

from cua.tasks.products.mediawiki import MediaWiki as APP

__all__ = ["APP"]
