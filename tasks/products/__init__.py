"""Real open-source products as the sandbox's apps (issue 31): a product's own server
process (MediaWiki under `php -S`, ...) with its real database, wrapped so that it speaks
the app contract (tasks/apps/CONTRACT.md) like a bundled app.

- `base`: `ProductApp`, the `WebApp` a product is to the rest of the kit (the task loader,
  the params' row queries, judge QA's in-process mirror), over seeded database images the
  product's own code wrote at build time; `FileDB`, the live instance's database file;
- `service`: the service process -- it starts the product's server on $CUA_APP_PORT and
  answers the control socket (health, reset, state, sql, snapshot, restore), logging each
  of the product's requests' changes in the activity log;
- one subpackage per product (`mediawiki`), registered as a bundled app name by a
  one-line `tasks/apps/<name>` package, so a suite names it with `sandbox.app`.
"""
