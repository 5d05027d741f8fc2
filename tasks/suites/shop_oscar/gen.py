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

__all__ = ["add_address", "add_to_basket", "add_variant", "apply_voucher", "bulk_stock", "cancel_order",
           "cancel_unshipped", "change_price", "change_stock", "checkout", "cheapest_waterproof", "count_shipped",
           "expired_voucher",
           "order_status_answer", "price_without_rights", "rename_category", "ship_order", "unpublish_product",
           "wishlist_add",
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



def _attr_values(state: dict[str, Any], code: str) -> dict[int, dict[str, Any]]:
    """product id -> its value row of the attribute `code` (every class names it alike)."""
    attrs = {a["id"] for a in state["catalogue_productattribute"] if a["code"] == code}
    return {v["product_id"]: v for v in state["catalogue_productattributevalue"] if v["attribute_id"] in attrs}


def _leaf_products(state: dict[str, Any]) -> dict[int, list[dict[str, Any]]]:
    """category id -> the public standalone products it lists, each with its stock record's price."""
    stock = {s["product_id"]: s for s in state["partner_stockrecord"]}
    products = {p["id"]: p for p in state["catalogue_product"]}
    out: dict[int, list[dict[str, Any]]] = {}
    for pc in state["catalogue_productcategory"]:
        p = products[pc["product_id"]]
        if p["structure"] == "standalone" and p["is_public"] and p["id"] in stock:
            s = stock[p["id"]]
            out.setdefault(pc["category_id"], []).append(
                {"id": p["id"], "title": p["title"], "slug": p["slug"], "price": Decimal(str(s["price"])),
                 "sr": s["id"], "sku": s["partner_sku"], "stock": s["num_in_stock"]})
    return out


def cheapest_waterproof(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """The cheapest product a category lists whose Waterproof attribute is yes (the near miss:
    the next cheapest waterproof one; the cheapest of all is not waterproof in every pick)."""
    state = app.state()
    wet = {pid for pid, v in _attr_values(state, "waterproof").items() if v["value_boolean"]}
    cats = {c["id"]: c for c in state["catalogue_category"]}
    picks = []
    for cid, items in _leaf_products(state).items():
        dry = sorted((p for p in items if p["id"] in wet), key=lambda p: p["price"])
        if len(dry) >= 2 and dry[0]["price"] < dry[1]["price"] and min(p["price"] for p in items) < dry[0]["price"]:
            picks.append((cid, dry))
    cid, dry = rng.choice(sorted(picks, key=lambda x: x[0]))
    cat = cats[cid]
    return {"category": cat["name"], "cid": cid, "slug": cat["slug"], "answer": dry[0]["title"],
            "price": _money(dry[0]["price"]), "wrong": dry[1]["title"]}


def add_variant(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A size of a parent product (one of its variants in stock; the near miss: another size)."""
    state = app.state()
    u = rng.choice(_customers(state))
    stock = {s["product_id"]: s for s in state["partner_stockrecord"]}
    sizes = _attr_values(state, "size")
    colours = _attr_values(state, "colour")
    products = {p["id"]: p for p in state["catalogue_product"]}
    children: dict[int, list[dict[str, Any]]] = {}
    for p in state["catalogue_product"]:
        s = stock.get(p["id"])
        if p["structure"] == "child" and s and s["num_in_stock"] - s["num_allocated"] >= 3:
            children.setdefault(p["parent_id"], []).append(p)
    parent_id = rng.choice(sorted(k for k, v in children.items() if len(v) >= 2))
    child, other = rng.sample(children[parent_id], 2)
    parent = products[parent_id]
    return {**_login(u), "parent": {"id": parent_id, "title": parent["title"], "slug": parent["slug"]},
            "child": {"id": child["id"], "slug": child["slug"], "size": sizes[child["id"]]["value_text"],
                      "colour": colours[child["id"]]["value_text"]},
            "other": {"id": other["id"], "slug": other["slug"]}, **_next(state)}


def wishlist_add(app: Oscar, rng: random.Random) -> dict[str, Any]:
    state = app.state()
    u = rng.choice(_customers(state))
    p, other = rng.sample(_buyable(state), 2)
    return {**_login(u), "p": p, "other": other, "max_wishlist": _max(state, "wishlists_wishlist"),
            "next_wishlist": _max(state, "wishlists_wishlist") + 1,
            "max_wline": _max(state, "wishlists_line"), **_next(state)}


_NEW_ADDRESSES = [("Flat 2, 14 Stricklandgate", "Kendal", "LA9 4ND"), ("3 Borrowdale Road", "Keswick", "CA12 5DB"),
                  ("27 Compston Road", "Ambleside", "LA22 9DJ"), ("8 Priestpopple", "Hexham", "NE46 1PS"),
                  ("41 Spring Gardens", "Buxton", "SK17 6BJ"), ("5 Ship Street", "Brecon", "LD3 9AD")]


def add_address(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A second address in a customer's address book (the near miss: a mistyped postcode)."""
    state = app.state()
    u = rng.choice(_customers(state))
    line1, town, postcode = rng.choice(_NEW_ADDRESSES)
    return {**_login(u), "first": u["first_name"], "last": u["last_name"], "line1": line1, "town": town,
            "postcode": postcode, "wrong_postcode": postcode[:-1] + ("X" if postcode[-1] != "X" else "Y"),
            "max_address": _max(state, "address_useraddress"), **_next(state)}


def order_status_answer(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A customer asks what became of one of their orders (the account's order page says)."""
    state = app.state()
    users = {u["id"]: u for u in state["auth_user"]}
    order = rng.choice([o for o in state["order_order"] if o["status"] != "Pending"])
    statuses = ["Pending", "Being processed", "Shipped", "Complete", "Cancelled"]
    wrong = rng.choice([s for s in statuses if s != order["status"]])
    return {**_login(users[order["user_id"]]), "order": order["number"], "status": order["status"], "wrong": wrong,
            **_next(state)}


def ship_order(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """An order being processed goes out: the order staff mark it shipped (the near miss:
    another order being processed)."""
    state = app.state()
    staff = rng.choice(_staff(state, _ORDER_STAFF))
    orders = [o for o in state["order_order"] if o["status"] == "Being processed"]
    order, other = rng.sample(orders, 2)
    rows = [{"status": "Shipped", "line_status": "Shipped"} for line in state["order_line"]
            if line["order_id"] == order["id"]]
    return {**_login(staff), "order": order["number"], "oid": order["id"], "other": other["number"],
            "shipped_rows": rows, **_next(state)}


def price_without_rights(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """The customer service agent, with no catalogue rights, is asked for a price change (the
    near miss borrows the catalogue manager's account)."""
    params = change_price(app, rng)
    state = app.state()
    agent = next(u for u in state["auth_user"] if u["username"] == "rkhan")
    helper = next(u for u in state["auth_user"] if u["username"] == "jpatel")
    return {**params, **_login(agent), "helper": helper["email"]}


def unpublish_product(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A product with open orders is taken off the storefront: hidden, not deleted (deleting
    it would strip the product from its orders' lines: the near miss)."""
    state = app.state()
    staff = rng.choice(_staff(state, _CATALOGUE_STAFF))
    open_orders = {o["id"] for o in state["order_order"] if o["status"] in ("Pending", "Being processed")}
    products = {p["id"]: p for p in state["catalogue_product"]}
    lines: dict[int, list[int]] = {}
    for line in state["order_line"]:
        lines.setdefault(line["product_id"], []).append(line["id"])
    candidates = sorted({line["product_id"] for line in state["order_line"] if line["order_id"] in open_orders
                         and products[line["product_id"]]["structure"] == "standalone"})
    pid = rng.choice(candidates)
    p = products[pid]
    stock = next(s for s in state["partner_stockrecord"] if s["product_id"] == pid)
    return {**_login(staff), "p": {"id": pid, "title": p["title"], "slug": p["slug"], "sku": stock["partner_sku"]},
            "n_lines": len(lines[pid])}


#: The seeded brands (seed_oscar.BRANDS): every product title starts with one.
_BRANDS = ["Cairnline", "Northfell", "Tarnwood", "Scree & Co", "Ridgeway", "Brackenhill", "Lowmoor", "Pikestaff"]


def bulk_stock(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """Every product of one brand in one category gets the counted stock (the near miss: all
    of them but the last)."""
    state = app.state()
    staff = rng.choice(_staff(state, _CATALOGUE_STAFF))
    cats = {c["id"]: c for c in state["catalogue_category"]}
    products = {p["id"]: p for p in state["catalogue_product"]}
    parents = {(pc["category_id"], products[pc["product_id"]]["title"].split(" ")[0])
               for pc in state["catalogue_productcategory"] if products[pc["product_id"]]["structure"] == "parent"}
    groups = []
    for cid, items in sorted(_leaf_products(state).items()):
        by_brand: dict[str, list[dict[str, Any]]] = {}
        for p in items:
            brand = next(b for b in _BRANDS if p["title"].startswith(b + " "))
            by_brand.setdefault(brand, []).append(p)
        # not a brand with variant products there too: "every one of them" would take in their sizes
        groups += [(cid, b, ps) for b, ps in sorted(by_brand.items())
                   if len(ps) == 3 and (cid, b.split(" ")[0]) not in parents]
    cid, brand, ps = rng.choice(groups)
    n = rng.choice([k for k in (10, 24, 30, 45, 60) if all(p["stock"] != k for p in ps)])
    ps = sorted(ps, key=lambda p: p["sr"])
    a, b, c = ({"id": p["id"], "sr": p["sr"], "title": p["title"], "stock": p["stock"]} for p in ps)
    return {**_login(staff), "brand": brand, "category": cats[cid]["name"], "cid": cid, "n": n, "a": a, "b": b, "c": c,
            "rows": [{"id": p["sr"], "num_in_stock": n} for p in ps],
            "near_rows": [{"id": p["sr"], "num_in_stock": n if p is not ps[-1] else p["stock"]} for p in ps]}


def cancel_unshipped(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A customer calls everything off that has not left the warehouse: their pending and
    being-processed orders are cancelled, their shipped and complete ones left alone (the
    near miss cancels only the newest)."""
    state = app.state()
    staff = rng.choice(_staff(state, _ORDER_STAFF))
    users = {u["id"]: u for u in state["auth_user"]}
    by_user: dict[int, list[dict[str, Any]]] = {}
    for o in state["order_order"]:
        by_user.setdefault(o["user_id"], []).append(o)
    picks = [uid for uid, os_ in sorted(by_user.items())
             if len([o for o in os_ if o["status"] in ("Pending", "Being processed")]) == 2
             and any(o["status"] in ("Shipped", "Complete") for o in os_)]
    uid = rng.choice(picks)
    opened = sorted((o for o in by_user[uid] if o["status"] in ("Pending", "Being processed")), key=lambda o: o["id"])
    cust = users[uid]
    name = f"{cust['first_name']} {cust['last_name']}"
    return {**_login(staff), "customer": name, "customer_q": quote_plus(name), "cemail": cust["email"],
            "o1": {"id": opened[0]["id"], "number": opened[0]["number"]},
            "o2": {"id": opened[1]["id"], "number": opened[1]["number"]},
            "changes": [{"order_id": o["id"], "old_status": o["status"], "new_status": "Cancelled"} for o in opened],
            "notes": [{"order_id": o["id"], "user_id": staff["id"], "note_type": "System",
                       "message": f"Order status changed from '{o['status']}' to 'Cancelled'"} for o in opened],
            "cuid": uid, "line_rows": [{"order_id": line["order_id"], "status": "Cancelled"} for line in sorted(
                state["order_line"], key=lambda r: (r["order_id"], r["id"])) if line["order_id"] in {o["id"] for o in opened}],
            **_next(state)}


def count_shipped(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """How many of a customer's orders are on their way (shipped, not yet complete)."""
    state = app.state()
    staff = rng.choice(_staff(state, _ORDER_STAFF))
    users = {u["id"]: u for u in state["auth_user"]}
    counts: dict[int, int] = {u["id"]: 0 for u in _customers(state)}
    for o in state["order_order"]:
        if o["status"] == "Shipped":
            counts[o["user_id"]] += 1
    uid = rng.choice(sorted(k for k, v in counts.items() if v >= 1))
    cust = users[uid]
    name = f"{cust['first_name']} {cust['last_name']}"
    return {**_login(staff), "customer": name, "customer_q": quote_plus(name), "cemail": cust["email"],
            "n": counts[uid], "wrong": counts[uid] + 1}


_CATEGORY_NAMES = {"Water bottles": "Bottles and flasks", "Headtorches": "Head torches", "Navigation": "Maps and compasses",
                   "Stoves": "Camping stoves", "Socks": "Walking socks", "Daypacks": "Day packs",
                   "Base layers": "Baselayers", "Cookware": "Pots and pans"}


def rename_category(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """The catalogue manager renames a category (the near miss renames its sibling)."""
    state = app.state()
    staff = rng.choice(_staff(state, _CATALOGUE_STAFF))
    cats = {c["name"]: c for c in state["catalogue_category"]}
    old = rng.choice(sorted(n for n in _CATEGORY_NAMES if n in cats))
    cat = cats[old]
    siblings = [c for c in state["catalogue_category"] if c["depth"] == cat["depth"] and c["id"] != cat["id"]
                and c["path"][:-4] == cat["path"][:-4]]
    other = rng.choice(siblings)
    return {**_login(staff), "old": old, "cid": cat["id"], "slug": cat["slug"], "new": _CATEGORY_NAMES[old],
            "other": other["id"]}


def expired_voucher(app: Oscar, rng: random.Random) -> dict[str, Any]:
    """A voucher past its end date asked for (infeasible: Oscar refuses it; the near miss
    quietly uses the live code instead)."""
    params = apply_voucher(app, rng)
    return {**params, "code": params["expired"], "live": params["code"]}
