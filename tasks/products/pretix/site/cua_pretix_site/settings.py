# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""Django settings of the pretix one sandbox instance serves (run under the pretix venv:
`cua.tasks.products.pretix.build`): pretix's own settings, read from the $PRETIX_* variables
build.pretix_env() sets (SQLite in the instance's folder, no Redis, no Celery broker: pretix
then runs its tasks eagerly, in the request), with what a sandbox needs on top.

Nothing is cached in process between requests: pretix's cache is its dummy cache when no
Redis or memcached is configured, and sessions live in the database, so a database image put
back is what the next request sees."""

from pretix.settings import *  # noqa: F401,F403 -- pretix's documented settings, extended

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # seeded accounts log in fast
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"  # no mail leaves the sandbox
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
FETCH_ECB_RATES = False
LOGGING = {"version": 1, "disable_existing_loggers": True,
           "handlers": {"err": {"class": "logging.StreamHandler"}},
           "loggers": {"django.request": {"handlers": ["err"], "level": "ERROR"}}}
