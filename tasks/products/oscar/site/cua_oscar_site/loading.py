# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""Oscar's class loader (OSCAR_DYNAMIC_CLASS_LOADER), with the shop's shipping repository in
place of Oscar's free-only one: the methods are Oscar's own `OrderAndItemCharges` rows, kept
in the database (and edited in the dashboard's Shipping charges); and the catalogue's browse
pages read from the database (`browse`)."""

from typing import Any

from oscar.core.loading import default_class_loader


def class_loader(module_label: str, classnames: list[str], module_prefix: str) -> list[Any]:
    if module_label == "shipping.repository" and classnames == ["Repository"]:
        from cua_oscar_site.shipping import Repository
        return [Repository]
    if module_label == "search.views" and set(classnames) <= {"CatalogueView", "ProductCategoryView"}:
        from cua_oscar_site import browse
        return [getattr(browse, name) for name in classnames]
    loaded: list[Any] = default_class_loader(module_label, classnames, module_prefix)
    return loaded
