# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""The shop's shipping methods: every `OrderAndItemCharges` row, cheapest first."""

from typing import Any

from oscar.apps.shipping import repository
from oscar.apps.shipping.models import OrderAndItemCharges


class Repository(repository.Repository):
    def get_available_shipping_methods(self, basket: Any, shipping_addr: Any = None, **kwargs: Any) -> list[Any]:
        methods = list(OrderAndItemCharges.objects.order_by("price_per_order", "code"))
        return methods or list(self.methods)
