"""pretix (PyPI `pretix` 2026.8.0 on Django 5.2, AGPL-3.0 with additional terms) on SQLite,
as a product app: the ticket shop and its control panel. Waitress serves pretix's Django
(`serve_pretix.py`; its settings in `site/`), `seed_pretix.py` fills it through pretix's own
models and services, `state()` reads it.

The judge-facing state is pretix's own tables under their Django names: the organizer's
events (`pretixbase_event`), what they sell (`pretixbase_itemcategory`, `pretixbase_item`,
`pretixbase_itemvariation`, `pretixbase_quota` with `pretixbase_quota_items`), orders
(`pretixbase_order`, `pretixbase_orderposition`, `pretixbase_orderpayment`,
`pretixbase_orderrefund`, `pretixbase_orderfee`), vouchers, check-in lists and check-ins,
the staff (`pretixbase_user` without its password) and teams, and pretix's own audit trail
`pretixbase_logentry` (every change pretix makes is logged there: an order placed, marked
paid, cancelled, a product changed; the activity log sees its rows, so a change undone later
is still seen). A translated name (pretix stores `{"en": "Weekend pass"}`) is shown as its
English text. Sessions, carts of the shop, cached files and pretix's transaction ledger are
not in it; judges read any table by SQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from cua.judges.sidefx import Change
from cua.tasks.apps.activity import added_row
from cua.tasks.products.base import ProductApp
from cua.tasks.products.pretix import build

__all__ = ["TABLES", "Pretix"]

_SCHEMA = Path(__file__).parent / "schema.sql"
_LAUNCHER = Path(__file__).parent / "serve_pretix.py"

#: table -> the columns `state()` shows of it (each table's key is `id`); translated columns
#: (`_I18N`) are shown as their English text.
TABLES: dict[str, tuple[str, ...]] = {
    "pretixbase_organizer": ("name", "slug"),
    "pretixbase_event": ("organizer_id", "name", "slug", "currency", "date_from", "date_to", "presale_start",
                         "presale_end", "live", "is_public", "location", "testmode"),
    "pretixbase_itemcategory": ("event_id", "name", "position"),
    "pretixbase_item": ("event_id", "category_id", "name", "active", "default_price", "admission", "position",
                        "require_voucher", "hide_without_voucher", "max_per_order", "min_per_order",
                        "available_from", "available_until"),
    "pretixbase_itemvariation": ("item_id", "value", "active", "default_price", "position"),
    "pretixbase_quota": ("event_id", "name", "size", "closed"),
    "pretixbase_quota_items": ("quota_id", "item_id"),
    "pretixbase_order": ("event_id", "code", "status", "email", "datetime", "expires", "total", "comment",
                         "cancellation_date", "require_approval", "testmode", "checkin_attention"),
    "pretixbase_orderposition": ("order_id", "positionid", "item_id", "variation_id", "price", "voucher_id",
                                 "attendee_name_cached", "attendee_email", "canceled", "addon_to_id"),
    "pretixbase_orderpayment": ("order_id", "local_id", "state", "amount", "provider", "payment_date"),
    "pretixbase_orderrefund": ("order_id", "local_id", "state", "source", "amount", "provider", "payment_id",
                               "comment"),
    "pretixbase_orderfee": ("order_id", "fee_type", "value", "description", "canceled"),
    "pretixbase_voucher": ("event_id", "code", "item_id", "variation_id", "quota_id", "price_mode", "value",
                           "max_usages", "redeemed", "valid_until", "block_quota", "tag", "comment"),
    "pretixbase_checkinlist": ("event_id", "name", "all_products", "include_pending"),
    "pretixbase_checkin": ("position_id", "list_id", "type", "successful", "datetime", "forced"),
    "pretixbase_user": ("email", "fullname", "is_active", "is_staff", "locale", "timezone", "require_2fa"),
    "pretixbase_team": ("organizer_id", "name", "all_events", "all_event_permissions", "all_organizer_permissions",
                        "limit_event_permissions", "limit_organizer_permissions"),
    "pretixbase_team_members": ("team_id", "user_id"),
    "pretixbase_team_limit_events": ("team_id", "event_id"),
    "pretixbase_logentry": ("action_type", "content_type_id", "object_id", "event_id", "user_id"),
}

#: Columns pretix stores translated (JSON by language): shown as their English text.
_I18N = {("pretixbase_event", "name"), ("pretixbase_event", "location"), ("pretixbase_itemcategory", "name"),
         ("pretixbase_item", "name"), ("pretixbase_itemvariation", "value")}

#: Columns pretix fills itself beyond its timestamps (order codes and totals, a position's
#: cached name and secret, counters, its ledger and audit fields).
_ASSIGNED: dict[str, tuple[str, ...]] = {
    "pretixbase_order": ("code", "status", "secret", "internal_secret", "datetime", "expires", "total",
                         "last_modified", "cancellation_date", "organizer_id", "sales_channel_id", "locale",
                         "meta_info", "email_known_to_work", "invoice_dirty", "tax_rounding_mode",
                         # what a shop order starts with (no question of this shop's asks for them)
                         "comment", "expiry_reminder_sent", "download_reminder_sent", "checkin_attention",
                         "checkin_text", "require_approval", "testmode", "phone", "customer_id",
                         "valid_if_pending", "api_meta"),
    "pretixbase_orderposition": ("positionid", "secret", "web_secret", "pseudonymization_id",
                                 "attendee_name_cached", "tax_value", "tax_rate", "tax_rule_id", "tax_code",
                                 "organizer_id", "price", "meta_info", "attendee_name_parts", "attendee_email",
                                 "subevent_id", "seat_id", "city", "company", "country", "state", "street",
                                 "zipcode", "used_membership_id", "is_bundled", "discount_id", "voucher_budget_use",
                                 "blocked", "valid_from", "valid_until", "ignore_from_quota_while_blocked",
                                 "price_includes_rounding_correction", "tax_value_includes_rounding_correction",
                                 "addon_to_id"),
    "pretixbase_orderpayment": ("local_id", "state", "amount", "created", "payment_date", "provider", "info",
                                "migrated", "fee_id", "process_initiated"),
    "pretixbase_orderrefund": ("local_id", "created", "execution_date", "info"),
    "pretixbase_voucher": ("redeemed", "created"),
    "pretixbase_checkin": ("datetime", "created", "nonce", "raw_barcode", "raw_item_id", "raw_variation_id",
                           "raw_subevent_id", "raw_source_type", "auto_checked_in", "device_id", "forced", "gate_id",
                           "error_explanation", "error_reason", "force_sent"),
    "pretixbase_logentry": ("datetime", "data", "visible", "shredded", "content_type_id", "object_id", "event_id",
                            "user_id", "api_token_id", "oauth_application_id", "device_id", "organizer_link_id"),
}


def _column(table: str, column: str) -> str:
    if (table, column) in _I18N:
        return f'CASE WHEN json_valid("{column}") THEN json_extract("{column}", \'$.en\') ELSE "{column}" END AS "{column}"'
    return f'"{column}"'


class Pretix(ProductApp):
    name = "pretix"
    title = f"{build.ORGANIZER} tickets"
    schema = _SCHEMA.read_text(encoding="utf-8")
    builder = build
    assigned: ClassVar[dict[str, tuple[str, ...]]] = _ASSIGNED

    def prepare_instance(self, data_dir: Path, control_socket: str) -> Path:
        self._socket = control_socket
        build.static_root()  # raises ProductMissing where the wheel's static files are not
        return data_dir / "pretix.db"

    def server_argv(self, data_dir: Path, port: int) -> tuple[list[str], dict[str, str]]:
        argv = [str(build.pretix_python()), str(_LAUNCHER), "--port", str(port), "--socket", self._socket]
        return argv, build.pretix_env(data_dir, port)

    def state(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for table, columns in TABLES.items():
            cols = ", ".join(_column(table, c) for c in ("id", *columns))
            out[table] = self.db.all(f'SELECT {cols} FROM "{table}" ORDER BY id')
        return out

    def irreversible(self, change: Change) -> str | None:
        """What pretix's audit trail records as done to an order (placed, paid, cancelled,
        refunded, expired, ...) and to an event or product deleted: kept in the activity log
        even if the rows are put back later."""
        row = added_row(change, "pretixbase_logentry")
        if row is None:
            return None
        action = str(row.get("action_type") or "")
        for prefix in ("pretix.event.order.", "pretix.event.deleted", "pretix.event.item.deleted",
                       "pretix.event.checkin", "pretix.control.views.checkin"):
            if action.startswith(prefix):
                return action.removeprefix("pretix.").replace(".", "_")
        return None
