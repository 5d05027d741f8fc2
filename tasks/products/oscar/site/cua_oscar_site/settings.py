# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""Django settings of the Oscar shop one sandbox instance serves (run under the Oscar venv:
`cua.tasks.products.oscar.build`). The instance's folder comes from $CUA_OSCAR_DATA (its
SQLite file `shop.db`), the collected static files from $CUA_OSCAR_STATIC.

Nothing is cached in process between requests (a dummy cache; sessions in the database),
so a database image put back is what the next request sees."""

import os
from pathlib import Path

from oscar.defaults import *  # noqa: F401,F403 -- Oscar's documented way to start a project's settings

DATA = Path(os.environ.get("CUA_OSCAR_DATA", "/tmp/cua-oscar"))
SECRET_KEY = os.environ.get("CUA_OSCAR_SECRET", "cua-oscar-not-secret")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
ROOT_URLCONF = "cua_oscar_site.urls"
WSGI_APPLICATION = None
SITE_ID = 1
TIME_ZONE = "UTC"
USE_TZ = True
USE_I18N = True
LANGUAGE_CODE = "en-gb"
LANGUAGES = [("en-gb", "English")]

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(DATA / "shop.db"),
                         "OPTIONS": {"timeout": 30}, "CONN_MAX_AGE": 0}}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
SESSION_ENGINE = "django.contrib.sessions.backends.db"
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # seeded accounts log in fast
AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = []

STATIC_URL = "/static/"
STATIC_ROOT = os.environ.get("CUA_OSCAR_STATIC", str(DATA / "static"))
MEDIA_URL = "/media/"
MEDIA_ROOT = str(DATA / "media")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.sites",
    "django.contrib.flatpages",
    "oscar.config.Shop",
    "oscar.apps.analytics.apps.AnalyticsConfig",
    "oscar.apps.checkout.apps.CheckoutConfig",
    "oscar.apps.address.apps.AddressConfig",
    "oscar.apps.shipping.apps.ShippingConfig",
    "oscar.apps.catalogue.apps.CatalogueConfig",
    "oscar.apps.catalogue.reviews.apps.CatalogueReviewsConfig",
    "oscar.apps.communication.apps.CommunicationConfig",
    "oscar.apps.partner.apps.PartnerConfig",
    "oscar.apps.basket.apps.BasketConfig",
    "oscar.apps.payment.apps.PaymentConfig",
    "oscar.apps.offer.apps.OfferConfig",
    "oscar.apps.order.apps.OrderConfig",
    "oscar.apps.customer.apps.CustomerConfig",
    "oscar.apps.search.apps.SearchConfig",
    "oscar.apps.voucher.apps.VoucherConfig",
    "oscar.apps.wishlists.apps.WishlistsConfig",
    "oscar.apps.dashboard.apps.DashboardConfig",
    "oscar.apps.dashboard.reports.apps.ReportsDashboardConfig",
    "oscar.apps.dashboard.users.apps.UsersDashboardConfig",
    "oscar.apps.dashboard.orders.apps.OrdersDashboardConfig",
    "oscar.apps.dashboard.catalogue.apps.CatalogueDashboardConfig",
    "oscar.apps.dashboard.offers.apps.OffersDashboardConfig",
    "oscar.apps.dashboard.partners.apps.PartnersDashboardConfig",
    "oscar.apps.dashboard.pages.apps.PagesDashboardConfig",
    "oscar.apps.dashboard.ranges.apps.RangesDashboardConfig",
    "oscar.apps.dashboard.reviews.apps.ReviewsDashboardConfig",
    "oscar.apps.dashboard.vouchers.apps.VouchersDashboardConfig",
    "oscar.apps.dashboard.communications.apps.CommunicationsDashboardConfig",
    "oscar.apps.dashboard.shipping.apps.ShippingDashboardConfig",
    "widget_tweaks",
    "haystack",
    "treebeard",
    "django_tables2",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "oscar.apps.basket.middleware.BasketMiddleware",
    "django.contrib.flatpages.middleware.FlatpageFallbackMiddleware",
]

TEMPLATES = [{
    "BACKEND": "django.template.backends.django.DjangoTemplates",
    "DIRS": [],
    "APP_DIRS": True,
    "OPTIONS": {"context_processors": [
        "django.template.context_processors.debug",
        "django.template.context_processors.request",
        "django.contrib.auth.context_processors.auth",
        "django.template.context_processors.i18n",
        "django.contrib.messages.context_processors.messages",
        "oscar.apps.search.context_processors.search_form",
        "oscar.apps.checkout.context_processors.checkout",
        "oscar.apps.communication.notifications.context_processors.notifications",
        "oscar.core.context_processors.metadata",
    ]},
}]

AUTHENTICATION_BACKENDS = ["oscar.apps.customer.auth_backends.EmailBackend",
                           "django.contrib.auth.backends.ModelBackend"]
HAYSTACK_CONNECTIONS = {"default": {"ENGINE": "haystack.backends.simple_backend.SimpleEngine"}}
HAYSTACK_SIGNAL_PROCESSOR = "haystack.signals.BaseSignalProcessor"

OSCAR_SHOP_NAME = "Fernhill Outfitters"
OSCAR_SHOP_TAGLINE = "Outdoor gear"
OSCAR_DEFAULT_CURRENCY = "GBP"
OSCAR_THUMBNAILER = "cua_oscar_site.thumbnails.PlainThumbnailer"
OSCAR_DYNAMIC_CLASS_LOADER = "cua_oscar_site.loading.class_loader"
OSCAR_SEND_REGISTRATION_EMAIL = False
OSCAR_ALLOW_ANON_CHECKOUT = False
OSCAR_ALLOW_ANON_REVIEWS = False
OSCAR_MODERATE_REVIEWS = False
LOGGING = {"version": 1, "disable_existing_loggers": True,
           "handlers": {"err": {"class": "logging.StreamHandler"}},
           "loggers": {"django.request": {"handlers": ["err"], "level": "ERROR"}}}

# Order statuses: the dashboard moves an order (and its lines) along these; each move is a
# row of Oscar's OrderStatusChange (its audit trail), with a note.
OSCAR_INITIAL_ORDER_STATUS = "Pending"
OSCAR_INITIAL_LINE_STATUS = "Pending"
OSCAR_ORDER_STATUS_PIPELINE = {
    "Pending": ("Being processed", "Cancelled"),
    "Being processed": ("Shipped", "Cancelled"),
    "Shipped": ("Complete",),
    "Complete": (),
    "Cancelled": (),
}
OSCAR_LINE_STATUS_PIPELINE = OSCAR_ORDER_STATUS_PIPELINE
OSCAR_ORDER_STATUS_CASCADE = {"Being processed": "Being processed", "Shipped": "Shipped",
                              "Complete": "Complete", "Cancelled": "Cancelled"}
