# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""A thumbnailer that serves the original image (no resized copies on disk: nothing of an
episode's survives a reset outside the database, and the seeded products have no images)."""

from types import SimpleNamespace
from typing import Any

from django.conf import settings
from oscar.core.thumbnails import AbstractThumbnailer


class PlainThumbnailer(AbstractThumbnailer):
    def generate_thumbnail(self, source: Any, **opts: Any) -> SimpleNamespace:
        name = getattr(source, "name", None) or str(source)
        if name == settings.OSCAR_MISSING_IMAGE_URL or name.endswith("image_not_found.jpg"):
            return SimpleNamespace(url=settings.STATIC_URL + "oscar/img/image_not_found.jpg", width=None, height=None)
        return SimpleNamespace(url=settings.MEDIA_URL + name, width=None, height=None)

    def delete_thumbnails(self, source: Any) -> None:
        return None
