"""The MediaWiki suite: templates over the real MediaWiki product (tasks/products/mediawiki)."""
