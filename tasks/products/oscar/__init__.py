"""django-oscar (PyPI `django-oscar` 4.2.1 on Django 5.2, BSD-3-Clause) on SQLite, as a
product app: waitress serves the shop's Django (`serve_oscar.py`, the project in `site/`),
`seed_oscar.py` fills it through Oscar's own models, `state()` reads it.

The judge-facing state is Oscar's own tables under their Django names, read plainly (a
decimal as SQLite returns it, a datetime as Django stores it, "2026-03-01 09:00:00"):
catalogue (`catalogue_product`, `catalogue_category`, `catalogue_productcategory`,
`catalogue_productclass`, `catalogue_productattribute`, `catalogue_productattributevalue`),
stock (`partner_stockrecord`), people (`auth_user` without its password, `address_useraddress`),
baskets (`basket_basket`, `basket_line`, `basket_basket_vouchers`), orders (`order_order`,
`order_line`, `order_shippingaddress`, `order_orderdiscount`, `order_ordernote` and
`order_orderstatuschange`, Oscar's status history: an order placed and then cancelled keeps
both here, as on the dashboard's order page), offers (`offer_conditionaloffer`,
`offer_condition`, `offer_benefit`, `offer_range`, `voucher_voucher`, `voucher_voucher_offers`),
`reviews_productreview`, the shipping methods (`shipping_orderanditemcharges`) and customers'
wish lists (`wishlists_wishlist`, `wishlists_line`).
Sessions, logs of sent e-mails and analytics counters are not in it; judges read any table by SQL.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.apps.activity import added_row
from cua.tasks.products.base import ProductApp
from cua.tasks.products.oscar import build

__all__ = ["TABLES", "Oscar"]

_SCHEMA = Path(__file__).parent / "schema.sql"
_LAUNCHER = Path(__file__).parent / "serve_oscar.py"

#: table -> the columns `state()` shows of it (each table's key is `id`).
TABLES: dict[str, tuple[str, ...]] = {
    "catalogue_product": ("structure", "title", "upc", "slug", "is_public", "parent_id", "product_class_id",
                          "rating"),
    "catalogue_category": ("name", "slug", "path", "depth", "is_public"),
    "catalogue_productcategory": ("product_id", "category_id"),
    "catalogue_productclass": ("name", "slug"),
    "catalogue_productattribute": ("product_class_id", "name", "code", "type"),
    "catalogue_productattributevalue": ("product_id", "attribute_id", "value_text", "value_integer",
                                        "value_boolean", "value_float"),
    "partner_stockrecord": ("product_id", "partner_id", "partner_sku", "price_currency", "price", "num_in_stock",
                            "num_allocated", "low_stock_threshold"),
    "auth_user": ("username", "email", "first_name", "last_name", "is_staff", "is_superuser", "is_active"),
    "address_useraddress": ("user_id", "title", "first_name", "last_name", "line1", "line2", "line3", "line4", "state",
                            "postcode", "country_id", "phone_number", "is_default_for_shipping",
                            "is_default_for_billing"),
    "basket_basket": ("owner_id", "status"),
    "basket_line": ("basket_id", "product_id", "stockrecord_id", "quantity", "price_currency", "price_excl_tax",
                    "price_incl_tax"),
    "basket_basket_vouchers": ("basket_id", "voucher_id"),
    "order_order": ("number", "user_id", "basket_id", "status", "currency", "total_incl_tax", "total_excl_tax",
                    "shipping_incl_tax", "shipping_excl_tax", "shipping_method", "shipping_code",
                    "shipping_address_id", "billing_address_id", "date_placed"),
    "order_line": ("order_id", "product_id", "stockrecord_id", "partner_sku", "title", "quantity",
                   "line_price_incl_tax", "line_price_before_discounts_incl_tax", "unit_price_incl_tax", "status"),
    "order_shippingaddress": ("title", "first_name", "last_name", "line1", "line2", "line3", "line4", "state", "postcode",
                              "country_id", "phone_number", "notes"),
    "order_orderdiscount": ("order_id", "category", "offer_id", "offer_name", "voucher_id", "voucher_code",
                            "amount"),
    "order_ordernote": ("order_id", "user_id", "note_type", "message"),
    "order_orderstatuschange": ("order_id", "old_status", "new_status", "date_created"),
    "offer_conditionaloffer": ("name", "offer_type", "status", "condition_id", "benefit_id", "start_datetime",
                               "end_datetime", "num_applications", "num_orders", "total_discount"),
    "offer_condition": ("range_id", "type", "value"),
    "offer_benefit": ("range_id", "type", "value", "max_affected_items"),
    "offer_range": ("name", "includes_all_products"),
    "voucher_voucher": ("name", "code", "usage", "start_datetime", "end_datetime", "num_basket_additions",
                        "num_orders", "total_discount"),
    "voucher_voucher_offers": ("voucher_id", "conditionaloffer_id"),
    "reviews_productreview": ("product_id", "user_id", "score", "title", "body", "status"),
    "shipping_orderanditemcharges": ("code", "name", "price_per_order", "price_per_item",
                                     "free_shipping_threshold"),
    "wishlists_wishlist": ("owner_id", "name", "key", "visibility"),
    "wishlists_line": ("wishlist_id", "product_id", "quantity", "title"),
}


#: Columns Oscar fills itself beyond `date_*` stamps (its order numbers, prices copied from
#: stock records, totals it computes, counters, slugs, a basket line's reference).
_ASSIGNED: dict[str, tuple[str, ...]] = {
    "catalogue_product": ("slug", "rating"),
    "basket_line": ("line_reference", "price_currency", "price_excl_tax", "price_incl_tax", "stockrecord_id",
                    "tax_code"),
    "order_order": ("number", "basket_id", "currency", "total_incl_tax", "total_excl_tax", "shipping_incl_tax",
                    "shipping_excl_tax", "shipping_method", "billing_address_id", "shipping_address_id", "site_id",
                    "guest_email", "shipping_tax_code", "analytics_tracked"),
    "order_line": ("stockrecord_id", "partner_id", "partner_name", "partner_sku", "partner_line_reference",
                   "partner_line_notes", "title", "upc", "line_price_incl_tax", "line_price_excl_tax",
                   "line_price_before_discounts_incl_tax", "line_price_before_discounts_excl_tax",
                   "unit_price_incl_tax", "unit_price_excl_tax", "status", "tax_code", "allocation_cancelled",
                   "num_allocated"),
    "order_orderdiscount": ("category", "offer_id", "offer_name", "voucher_id", "amount", "frequency", "message"),
    "order_orderstatuschange": ("old_status",),
    "order_shippingaddress": ("search_text", "code"),
    "address_useraddress": ("search_text", "hash", "num_orders_as_shipping_address", "num_orders_as_billing_address"),
    "offer_conditionaloffer": ("num_applications", "num_orders", "total_discount"),
    "voucher_voucher": ("num_basket_additions", "num_orders", "total_discount"),
    "wishlists_wishlist": ("key",),
    "wishlists_line": ("title",),
}


def _assigned(schema: str) -> dict[str, tuple[str, ...]]:
    """`_ASSIGNED`, with every table's `date_*` columns: Django's auto_now stamps (created,
    updated, submitted, merged, placed), which the kit's timestamp rule does not know by name."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(schema)
        out = {t: set(cols) for t, cols in _ASSIGNED.items()}
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for row in conn.execute(f'PRAGMA table_info("{table}")'):
                if str(row[1]).startswith("date_"):
                    out.setdefault(str(table), set()).add(str(row[1]))
        return {t: tuple(sorted(cols)) for t, cols in sorted(out.items())}
    finally:
        conn.close()


class Oscar(ProductApp):
    name = "oscar"
    title = build.SHOP
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    #: Columns Oscar fills itself (`_ASSIGNED`, and Django's `date_*` stamps).
    assigned: ClassVar[dict[str, tuple[str, ...]]] = _assigned(schema)

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        self._socket = control_socket
        build.template_image()  # the static files it serves
        return data_dir / "shop.db"

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        argv = [str(build.oscar_python()), str(_LAUNCHER), "--port", str(port), "--socket", self._socket]
        return argv, build.oscar_env(data_dir)

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for table, columns in TABLES.items():
            cols = ", ".join(f'"{c}"' for c in ("id", *columns))
            out[table] = self.db.all(f'SELECT {cols} FROM "{table}" ORDER BY id')
        return out

    def irreversible(self, change: Change) -> str | None:
        """An order placed (its row written) and an order's status moved (a row of Oscar's
        status history): kept in the activity log even if the rows are erased later."""
        if added_row(change, "order_order") is not None:
            return "order_placed"
        row = added_row(change, "order_orderstatuschange")
        if row is not None:
            return f"order_status_{str(row.get('new_status') or '').lower().replace(' ', '_')}"
        return None
