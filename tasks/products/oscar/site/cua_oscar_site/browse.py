# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""Browsing the catalogue and its categories from the database, as Oscar's search handler
without a search engine did before 3.2.4 (Haystack's simple backend, which this shop uses
for its keyword search, finds nothing for an empty query, so Oscar's own browse pages would
be empty): Oscar's views and templates, with the page of products read by Django."""

from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.core.paginator import EmptyPage, PageNotAnInteger, Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from oscar.apps.search.views import catalogue
from oscar.core.loading import get_model

Product = get_model("catalogue", "Product")


def _page(request: Any, queryset: Any, template: str, extra: dict[str, Any]) -> Any:
    paginator = Paginator(queryset, settings.OSCAR_PRODUCTS_PER_PAGE)
    try:
        page = paginator.page(request.GET.get("page") or 1)
    except (EmptyPage, PageNotAnInteger):
        raise Http404("no such page")
    context = {"products": [SimpleNamespace(object=p) for p in page.object_list], "paginator": paginator,
               "page_obj": page, "page": page, "is_paginated": paginator.num_pages > 1, **extra}
    return render(request, template, context)


def _products() -> Any:
    return Product.objects.browsable().base_queryset().order_by("title", "id")


class CatalogueView(catalogue.CatalogueView):
    def get(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        return _page(request, _products(), self.template_name, {"summary": "All products"})


class ProductCategoryView(catalogue.ProductCategoryView):
    def get(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        self.category = self.get_category()
        if not self.is_viewable(self.category, request):
            raise Http404()
        moved = self.redirect_if_necessary(request.path, self.category)
        if moved is not None:
            return moved
        queryset = _products().filter(categories__in=self.category.get_descendants_and_self()).distinct()
        try:
            return _page(request, queryset, self.template_name, {"category": self.category,
                                                                 "summary": self.category.name})
        except Http404:
            messages.error(request, "The given page number was invalid.")
            return redirect(self.category.get_absolute_url())
