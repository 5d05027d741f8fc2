# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
# (the line above: this module runs under the Wagtail venv, whose libraries the main venv lacks)
"""Django settings of the Wagtail site one sandbox instance serves (under the Wagtail venv).

Everything an instance varies comes from the environment: `CUA_WAGTAIL_DB` (its SQLite
file), `CUA_WAGTAIL_MEDIA` (its media folder). No cache outlives a request (a dummy cache,
no persistent database connection), so a database put back by the service is what the
next request sees.
"""

import os

BASE_DIR = os.path.dirname(os.path.abspath(__file__))
SECRET_KEY = "cua-sandbox-wagtail-not-secret"  # noqa: S105 -- a loopback-only sandbox
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
INSTALLED_APPS = [
    "cms",
    "wagtail.contrib.forms",
    "wagtail.contrib.redirects",
    "wagtail.contrib.settings",
    "wagtail.embeds",
    "wagtail.sites",
    "wagtail.users",
    "wagtail.snippets",
    "wagtail.documents",
    "wagtail.images",
    "wagtail.search",
    "wagtail.admin",
    "wagtail",
    "modelcluster",
    "taggit",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "wagtail.contrib.redirects.middleware.RedirectMiddleware",
]
ROOT_URLCONF = "urls"
TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [os.path.join(BASE_DIR, "templates")],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.contrib.messages.context_processors.messages",
    ]},
}]
WSGI_APPLICATION = None
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ.get("CUA_WAGTAIL_DB", ":memory:"),
                         "CONN_MAX_AGE": 0, "OPTIONS": {"timeout": 30}}}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
# A fast hash: seeding writes a dozen accounts and every sandbox login checks one.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "/static/"
STATIC_ROOT = os.path.join(BASE_DIR, "static")
MEDIA_ROOT = os.environ.get("CUA_WAGTAIL_MEDIA", os.path.join(BASE_DIR, "media"))
MEDIA_URL = "/media/"
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
WAGTAIL_SITE_NAME = "Harbourlight"
WAGTAILADMIN_BASE_URL = "http://127.0.0.1"
WAGTAILSEARCH_BACKENDS = {"default": {"BACKEND": "wagtail.search.backends.database"}}
WAGTAIL_ENABLE_UPDATE_CHECK = False
WAGTAIL_ENABLE_WHATS_NEW_BANNER = False
WAGTAILADMIN_NOTIFICATION_USE_HTML = False
WAGTAIL_WORKFLOW_ENABLED = True
EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
LOGGING = {"version": 1, "disable_existing_loggers": False,
           "handlers": {"err": {"class": "logging.StreamHandler"}},
           "root": {"handlers": ["err"], "level": "WARNING"}}
