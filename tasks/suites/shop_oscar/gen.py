"""Seeded parameters for the Oscar suite: each function is a template's `generator`, called
with the in-process Oscar at the task's seed and the template's rng. It picks the customer,
product, order or voucher from Oscar's own tables and computes the exact end state the
judge expects, so a judge never guesses at a value it could read.
"""

from __future__ import annotations

import random
from decimal import Decimal
from typing import Any
from urllib.parse import quote_plus

from cua.tasks.products.oscar import Oscar
from cua.tasks.products.oscar.build import PASSWORD

__all__ = ["add_to_basket", "apply_voucher", "cancel_order", "change_price", "change_stock", "checkout",
           "cancel_without_rights", "count_in_category", "delete_review", "order_total", "write_review"]

_REVIEWS = [("Light and warm", "Kept me warm on a windy ridge walk; packs down small."),
            ("Good value", "Does everything the dearer ones do, and it arrived in two days."),
            ("Sturdy but heavy", "Well made, though heavier than the listing suggests."),
            ("Not for winter", "Fine in summer, but it struggled on a frosty night.")]


def _money(value: Any) -> str:
    return str(Decimal(str(value)).quantize(Decimal("0.01")))


def _customers(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [u for u in state["auth_user"] if not u["is_staff"] and not u["is_superuser"]]


#: The seeded staff by what Oscar's dashboard lets them do (seed_oscar.py's permissions).
_CATALOGUE_STAFF = ("hwalsh", "jpatel")
_ORDER_STAFF = ("hwalsh", "rkhan")


def _staff(state: dict[str, Any], who: tuple[str, ...]) -> list[dict[str, Any]]:
    return [u for u in state["auth_user"] if u["username"] in who]


def _buyable(state: dict[str, Any]) -> list[dict[str, Any]]:
    """Standalone products in stock, with their stock record (one partner: one each)."""
    stock = {s["product_id"]: s for s in state["partner_stockrecord"]}
    out = []
    for p in state["catalogue_product"]:
        s = stock.get(p["id"])
        if p["structure"] == "standalone" and p["is_public"] and s and s["num_in_stock"] - s["num_allocated"] >= 5:
            out.append({"id": p["id"], "title": p["title"], "title_q": quote_plus(p["title"]), "slug": p["slug"],
                        "sr": s["id"], "price": _money(s["price"]), "sku": s["partner_sku"],
                        "stock": s["num_in_stock"], "allocated": s["num_allocated"],
                        "threshold": s["low_stock_threshold"]})
    return out


def _login(u: dict[str, Any]) -> dict[str, Any]:
    return {"email": u["email"], "password": PASSWORD, "uid": u["id"], "name": f"{u['first_name']} {u['last_name']}"}


def _max(state: dict[str, Any], table: str) -> int:
    return max([int(r["id"]) for r in state[table]] or [0])


def _next(state: dict[str, Any]) -> dict[str, Any]:
    """The largest ids of the tables an episode adds rows to, and the id of the basket it makes
    first (Oscar's baskets are numbered by SQLite, after the largest ever given)."""
    out = {f"max_{key}": _max(state, table) for key, table in (
        ("basket", "basket_basket"), ("line", "basket_line"), ("bv", "basket_basket_vouchers"),
        ("order", "order_order"), ("oline", "order_line"), ("addr", "order_shippingaddress"),
        ("review", "reviews_productreview"), ("change", "order_orderstatuschange"), ("note", "order_ordernote"))}
    out["next_basket"] = out["max_basket"] + 1
    out["next_order"] = out["max_order"] + 1
    return out


def add_to_basket(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    u = rng.choice(_customers(state))
    p = rng.choice(_buyable(state))
    qty = rng.randint(2, 4)
    return {**_login(u), "p": p, "qty": qty, "wrong_qty": qty + 1, **_next(state)}


def apply_voucher(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    u = rng.choice(_customers(state))
    p = rng.choice(_buyable(state))
    code = "TRAIL10"  # live, for every product (CAMP15 only for camping kit; WINTER20 has expired)
    voucher = next(v for v in state["voucher_voucher"] if v["code"] == code)
    return {**_login(u), "p": p, "code": code, "voucher": voucher["id"], "expired": "WINTER20", **_next(state)}


def checkout(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    u = rng.choice(_customers(state))
    p = rng.choice(_buyable(state))
    methods = state["shipping_orderanditemcharges"]
    method, other = rng.sample(methods, 2)
    address = next(a for a in state["address_useraddress"] if a["user_id"] == u["id"])
    return {**_login(u), "p": p, "method": method["code"], "method_name": method["name"],
            "other_method": other["code"], "other_name": other["name"], "line1": address["line1"],
            "postcode": address["postcode"], "allocated_after": p["allocated"] + 1, **_next(state),
            "address": {k: address[k] for k in ("title", "first_name", "last_name", "line1", "line2", "line3", "line4",
                                                 "state", "postcode", "country_id", "phone_number")}}


def write_review(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    u = rng.choice(_customers(state))
    reviewed = {r["product_id"] for r in state["reviews_productreview"] if r["user_id"] == u["id"]}
    # not the socks of the three-for-two offer: the oracle's review form on a sock's page did
    # not submit in the browser at seed 1 (the same POST over HTTP does; cause not found yet)
    socks = {c["id"] for c in state["catalogue_category"] if c["name"] == "Socks"}
    offer = {pc["product_id"] for pc in state["catalogue_productcategory"] if pc["category_id"] in socks}
    candidates = [p for p in state["catalogue_product"] if p["structure"] != "child" and p["id"] not in reviewed
                  and p["id"] not in offer]
    p = rng.choice(candidates)
    title, body = rng.choice(_REVIEWS)
    score = rng.randint(2, 5)
    return {**_login(u), "p": {"id": p["id"], "title": p["title"], "slug": p["slug"]}, "title": title,
            "body": body, "score": score, "wrong_score": score - 1, **_next(state)}


def change_price(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    staff = rng.choice(_staff(state, _CATALOGUE_STAFF))
    p = rng.choice(_buyable(state))
    old = Decimal(p["price"])
    new = (old * Decimal(rng.choice(["0.8", "0.9", "1.1", "1.25"]))).quantize(Decimal("1")) - Decimal("0.01")
    return {**_login(staff), "p": p, "price": _money(new), "wrong": _money(new + 1)}


def change_stock(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    staff = rng.choice(_staff(state, _CATALOGUE_STAFF))
    p = rng.choice(_buyable(state))
    n = rng.choice([0, 15, 25, 40, 60, 100])
    while n == p["stock"]:
        n += 5
    return {**_login(staff), "p": p, "n": n, "wrong": n + 1}


def cancel_order(app: Oscar, rng: random.Random, who: tuple[str, ...] = _ORDER_STAFF) -> dict[str, Any]:
    state = app.state()
    staff = rng.choice(_staff(state, who))
    users = {u["id"]: u for u in state["auth_user"]}
    open_orders = [o for o in state["order_order"] if o["status"] in ("Pending", "Being processed")]
    order = rng.choice(open_orders)
    other = rng.choice([o for o in open_orders if o["id"] != order["id"]])
    cust = users[order["user_id"]]
    rows = [{"status": "Cancelled", "line_status": "Cancelled"} for line in state["order_line"]
            if line["order_id"] == order["id"]]
    return {**_login(staff), "order": order["number"], "oid": order["id"], "old_status": order["status"],
            "other": other["number"], "customer": f"{cust['first_name']} {cust['last_name']}",
            "cancelled_rows": rows, **_next(state)}


def order_total(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A customer's most recent order: its total, as the dashboard shows it (the near miss:
    the total of their previous one)."""
    state = app.state()
    staff = rng.choice(_staff(state, _ORDER_STAFF))
    by_user: dict[int, list[dict[str, Any]]] = {}
    for o in state["order_order"]:
        by_user.setdefault(o["user_id"], []).append(o)
    users = {u["id"]: u for u in state["auth_user"]}
    uid = rng.choice(sorted(k for k, v in by_user.items() if len(v) >= 2))
    orders = sorted(by_user[uid], key=lambda o: str(o["date_placed"]))
    last, prev = orders[-1], orders[-2]
    cust = users[uid]
    name = f"{cust['first_name']} {cust['last_name']}"
    return {**_login(staff), "customer": name, "customer_q": quote_plus(name), "cemail": cust["email"],
            "number": last["number"], "total": _money(last["total_incl_tax"]), "wrong": _money(prev["total_incl_tax"])}


def count_in_category(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """How many products a leaf category lists (browsable: standalone and parent products)."""
    state = app.state()
    cats = state["catalogue_category"]
    leaves = [c for c in cats if not any(o["path"].startswith(c["path"]) and o["depth"] > c["depth"] for o in cats)]
    cat = rng.choice(leaves)
    products = {p["id"]: p for p in state["catalogue_product"]}
    n = len({pc["product_id"] for pc in state["catalogue_productcategory"] if pc["category_id"] == cat["id"]
             and products[pc["product_id"]]["is_public"] and products[pc["product_id"]]["structure"] != "child"})
    return {"category": cat["name"], "cid": cat["id"], "slug": cat["slug"], "n": n, "wrong": n + 1}


def cancel_without_rights(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """The catalogue manager, whose account has no order permissions, is asked to cancel an
    order (the near miss borrows the customer service agent's account)."""
    params = cancel_order(app, rng, ("jpatel",))
    helper = next(u for u in app.state()["auth_user"] if u["username"] == "rkhan")
    return {**params, "helper": helper["email"]}


def _reviews_of(state: dict[str, Any], uid: int) -> list[dict[str, Any]]:
    return [r for r in state["reviews_productreview"] if r["user_id"] == uid]


def delete_review(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A review the superuser deletes (the near miss: the same customer's other review)."""
    state = app.state()
    admin = next(u for u in state["auth_user"] if u["is_superuser"])
    products = {p["id"]: p for p in state["catalogue_product"]}
    users = {u["id"]: u for u in state["auth_user"]}
    uid = rng.choice(sorted({r["user_id"] for r in state["reviews_productreview"]}))
    review, other = rng.sample(_reviews_of(state, uid), 2)
    u = users[uid]
    return {**_login(admin), "rid": review["id"], "other": other["id"], "title": review["title"],
            "pid": review["product_id"],
            "product": products[review["product_id"]]["title"], "customer": f"{u['first_name']} {u['last_name']}",
            "n_left": len(state["reviews_productreview"]) - 1}

