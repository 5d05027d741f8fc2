"""Oscar's class loader (OSCAR_DYNAMIC_CLASS_LOADER), with the shop's shipping repository in
place of Oscar's free-only one: the methods are Oscar's own `OrderAndItemCharges` rows, kept
in the database (and edited in the dashboard's Shipping charges); and the catalogue's browse
pages read from the database (`browse`)."""

from oscar.core.loading import default_class_loader


def class_loader(module_label, classnames, module_prefix):
    if module_label == "shipping.repository" and classnames == ["Repository"]:
        from cua_oscar_site.shipping import Repository
        return [Repository]
    if module_label == "search.views" and set(classnames) <= {"CatalogueView", "ProductCategoryView"}:
        from cua_oscar_site import browse
        return [getattr(browse, name) for name in classnames]
    return default_class_loader(module_label, classnames, module_prefix)
