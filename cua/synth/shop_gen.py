"""Templates for the shop app (tasks/apps/shop), described for the generator core.

A product is drawn among those in stock (five or more) and not in the cart, in a scope of
price, rating or popularity, and found by the store's search. The seed leaves one product in
the cart from an earlier visit (`left`): every cart check names it, so a template that says
nothing of it judges that it stays, and one that removes it judges that it is gone.

Operations: add N of a product; set the leftover line's quantity; remove it; chains of those
(add, then drop the leftover, then change the quantity: a checkpoint per step, the near miss
stops one short); a chain that ends with a question (add, then the cart's subtotal); compare
two products' prices and name the cheaper (and a chain that then adds the cheaper one);
place an order for a product with a saved address or a new one and a shipping method; count
a category's products at or under a price; the price, brand or colour of a product; save a product to
the wishlist, or move a saved one into the cart; write a review with given stars, or change the stars
of one the customer wrote; cancel the order that has not shipped yet (of two, found by an item in it).

Every selector is the hand-written shop suite's (`data-id`, `data-field`, `data-action`,
`data-category`, ids, names and values); no class, position or English UI text: the app has
de-DE and three layouts.
"""

from __future__ import annotations

from typing import Any

from cua.synth.schema import AppSchema, Description, Operation

__all__ = ["DESCRIPTION", "GENERATOR_VERSION", "SCHEMA"]

GENERATOR_VERSION = 3  # 2: judge QA's findings (--count 20 admitted 11): comparisons' progress from the
# pages visited (it fell on each search); the steps an oracle needs (two ran out). 3: the wishlist, reviews
# and order cancellation the app gained (issue 38)

SCOPES: tuple[tuple[str, str], ...] = (
    ("any", ""),
    ("budget", "AND p.price_cents < 2500"),
    ("midrange", "AND p.price_cents BETWEEN 2500 AND 15000"),
    ("premium", "AND p.price_cents > 15000"),
    ("top_rated", "AND p.rating >= 4.5"),
    ("popular", "AND p.reviews >= 100"),
    ("books", "AND p.category_id = (SELECT id FROM categories WHERE slug = 'books')"),
    ("gadgets", "AND p.category_id IN (SELECT id FROM categories WHERE slug IN ('phones', 'headphones', 'laptops'))"),
)

_PRODUCT = ("SELECT p.id, p.name, p.price_cents, printf('%.2f', p.price_cents / 100.0) AS price, b.name AS brand, "
            "p.color, c.name AS category FROM products p JOIN brands b ON b.id = p.brand_id "
            "JOIN categories c ON c.id = p.category_id WHERE p.stock >= 5 "
            "AND p.id NOT IN (SELECT product_id FROM cart_items) {where} ORDER BY p.id")
_LEFT = {"type": "rows", "sql": "SELECT c.product_id AS id, p.name, c.qty, p.price_cents FROM cart_items c "
                                "JOIN products p ON p.id = c.product_id"}


def _product(scope: str, extra: str = "", params: tuple[str, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "rows", "sql": _PRODUCT.replace("{where}", f"{extra} {scope}".strip())}
    if params:
        out["params"] = list(params)
    return out


def _open(p: str) -> list[dict[str, Any]]:
    return [{"fill": {"selector": "input[name=q]", "text": "{" + p + ".name}", "submit": True}},
            {"click": 'article[data-id="{' + p + '.id}"] a[data-field=name]'}]


def _on_page(p: str) -> dict[str, Any]:
    return {"check": "the product is open", "get": {"kind": "url", "part": "path"},
            "expect": {"op": "regex", "pattern": "^/p/{" + p + ".id}(/|$)"}}


_CART_OPEN = {"check": "the cart is open", "get": {"kind": "url", "part": "path"},
              "expect": {"op": "regex", "pattern": "^/cart"}}
_CART_CHANGES = ["cart", "cart_total_cents"]


def _cart_is(rows: list[dict[str, Any]], what: str) -> dict[str, Any]:
    return {"check": what, "get": {"kind": "app_state", "path": "cart"}, "expect": {"op": "table", "rows": rows}}


def _add(p: str, n: str) -> list[dict[str, Any]]:
    return [*_open(p), {"fill": {"selector": "#qty", "text": n}}, {"click": "#add-to-cart"}]


def add_n(scope: str) -> dict[str, Any]:
    """Put N of a product in the cart, next to the leftover; the near miss adds one from the listing."""
    return {
        "phrasings": ['Add {n} of "{p.name}" to my cart.', 'Put {n} × "{p.name}" in the cart, please.',
                      'I want {n} units of "{p.name}": add them to my cart (keep what is already there).'],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 2, "max": 4}},
        "judge": {"subgoals": [_on_page("p"), {"check": "the quantity is set", "get": {"kind": "dom", "selector": "#qty",
                                                                                       "prop": "value"},
                                               "expect": {"op": "text", "value": "{n}"}}],
                  "checks": [_cart_is([{"product_id": "{left.id}", "qty": "{left.qty}"},
                                       {"product_id": "{p.id}", "qty": "{n}"}], "the cart holds N of it beside the rest")],
                  "expected_changes": _CART_CHANGES},
        "oracle": _add("p", "{n}"),
        "near_miss": [_open("p")[0], {"click": 'article[data-id="{p.id}"] button[data-action=add-to-cart]'}],
        "max_steps": 12,
        "tags": {"skills": ["search", "number_input"], "tier": 2},
    }


def set_qty(scope: str) -> dict[str, Any] | None:
    """Set the leftover line's quantity in the cart; the near miss types it and never updates the cart."""
    if scope:
        return None
    qty = 'tr[data-id="{left.id}"] input[type=number]'
    return {
        "phrasings": ['Change the quantity of "{left.name}" in my cart to {n}.',
                      'In the cart, set "{left.name}" to {n} units.', 'I need {n} of "{left.name}", not one: fix the cart.'],
        "params": {"left": _LEFT, "n": {"type": "int", "min": 2, "max": 5}},
        "judge": {"subgoals": [_CART_OPEN, {"check": "the line holds the quantity",
                                            "get": {"kind": "dom", "selector": qty, "prop": "value"},
                                            "expect": {"op": "text", "value": "{n}"}}],
                  "checks": [_cart_is([{"product_id": "{left.id}", "qty": "{n}"}], "the line has the new quantity")],
                  "expected_changes": _CART_CHANGES},
        "oracle": [{"click": "a[data-action=cart]"}, {"fill": {"selector": qty, "text": "{n}"}}, {"click": "#update-cart"}],
        "near_miss": [{"click": "a[data-action=cart]"}, {"fill": {"selector": qty, "text": "{n}"}}],
        "max_steps": 8,
        "tags": {"skills": ["number_input", "form"], "tier": 2},
    }


def remove(scope: str) -> dict[str, Any] | None:
    """Take the leftover out of the cart; the near miss updates the cart unchanged."""
    if scope:
        return None
    return {
        "phrasings": ['Take "{left.name}" out of my cart.', 'Remove "{left.name}" from the shopping cart.',
                      'I no longer want "{left.name}": delete it from my cart.'],
        "params": {"left": _LEFT},
        "judge": {"subgoals": [_CART_OPEN],
                  "checks": [{"check": "the cart is empty", "get": {"kind": "app_state", "path": "cart"},
                              "expect": {"op": "length", "max": 0}}],
                  "expected_changes": _CART_CHANGES},
        "oracle": [{"click": "a[data-action=cart]"}, {"click": 'tr[data-id="{left.id}"] button[data-action=remove]'}],
        "near_miss": [{"click": "a[data-action=cart]"}, {"click": "#update-cart"}],
        "max_steps": 8,
        "tags": {"skills": ["navigate"], "tier": 2},
    }


def add_and_drop(scope: str) -> dict[str, Any]:
    """A chain: add N of a product, then take the leftover out; the near miss keeps the leftover."""
    return {
        "phrasings": ['Add {n} of "{p.name}" to my cart, then remove "{left.name}" from it.',
                      'My cart should hold only {n} × "{p.name}": add them and take "{left.name}" out.',
                      'Replace "{left.name}" in my cart with {n} of "{p.name}".'],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 2, "max": 4}},
        "judge": {"subgoals": [_on_page("p"), _CART_OPEN],
                  "checks": [_cart_is([{"product_id": "{p.id}", "qty": "{n}"}], "the cart holds N of it and nothing else")],
                  "expected_changes": _CART_CHANGES},
        "oracle": [*_add("p", "{n}"), {"click": 'tr[data-id="{left.id}"] button[data-action=remove]'}],
        "near_miss": _add("p", "{n}"),
        "max_steps": 15,
        "tags": {"skills": ["search", "number_input", "multi_step"], "tier": 3},
    }


def add_drop_set(scope: str) -> dict[str, Any]:
    """A chain of three: add one of a product, remove the leftover, then set the new line's quantity in the
    cart; the near miss stops before the last step."""
    qty = 'tr[data-id="{p.id}"] input[type=number]'
    steps = [*_open("p"), {"click": "#add-to-cart"}, {"click": 'tr[data-id="{left.id}"] button[data-action=remove]'}]
    return {
        "phrasings": ['Add "{p.name}" to my cart, remove "{left.name}", and then change the quantity of "{p.name}" '
                      "in the cart to {n}.",
                      'Three things in the shop: 1. add one "{p.name}" to the cart; 2. take "{left.name}" out; '
                      '3. make it {n} of "{p.name}" on the cart page.',
                      'Put "{p.name}" in my cart, drop "{left.name}", then update the cart to {n} of "{p.name}".'],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 2, "max": 4}},
        "judge": {"subgoals": [_on_page("p"), _CART_OPEN,
                               {"check": "the line holds the quantity", "get": {"kind": "dom", "selector": qty,
                                                                                "prop": "value"},
                                "expect": {"op": "text", "value": "{n}"}}],
                  "checks": [_cart_is([{"product_id": "{p.id}", "qty": "{n}"}], "the cart holds N of it and nothing else")],
                  "expected_changes": _CART_CHANGES},
        "oracle": [*steps, {"fill": {"selector": qty, "text": "{n}"}}, {"click": "#update-cart"}],
        "near_miss": steps,
        "max_steps": 18,
        "tags": {"skills": ["search", "number_input", "form", "multi_step"], "tier": 4},
    }


def add_then_subtotal(scope: str) -> dict[str, Any]:
    """A chain that ends with a question read from state: add N of a product, then the cart's subtotal; the
    near miss adds them and answers their price alone (the leftover forgotten)."""
    return {
        "phrasings": ['Add {n} of "{p.name}" to my cart, then tell me the cart\'s subtotal. Answer with the amount.',
                      'Put {n} × "{p.name}" in the cart and report what the cart comes to now (subtotal only).',
                      'After adding {n} "{p.name}" to my cart, what is its subtotal? Reply with the amount.'],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 2, "max": 4},
                   "sum": {"type": "rows", "sql": "SELECT printf('%.2f', (CAST(? AS INTEGER) * CAST(? AS INTEGER) + "
                                                  "CAST(? AS INTEGER) * CAST(? AS INTEGER)) / 100.0) AS total, "
                                                  "printf('%.2f', CAST(? AS INTEGER) * CAST(? AS INTEGER) / 100.0) AS mine",
                           "params": ["{left.qty}", "{left.price_cents}", "{n}", "{p.price_cents}", "{n}",
                                      "{p.price_cents}"]}},
        "judge": {"subgoals": [_on_page("p"), _CART_OPEN],
                  "checks": [_cart_is([{"product_id": "{left.id}", "qty": "{left.qty}"},
                                       {"product_id": "{p.id}", "qty": "{n}"}], "the cart holds N of it beside the rest"),
                             {"check": "the answer is the subtotal", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{sum.total}", "abs": 0.005}}],
                  "expected_changes": _CART_CHANGES},
        "oracle": [*_add("p", "{n}"), {"wait_for": "#subtotal"}, {"done": {"answer": "${sum.total}"}}],
        "near_miss": [*_add("p", "{n}"), {"wait_for": "#subtotal"}, {"done": {"answer": "${sum.mine}"}}],
        "max_steps": 15,
        "tags": {"skills": ["search", "number_input", "read", "answer", "multi_step"], "tier": 3},
    }


def _pair(scope: str) -> dict[str, Any]:
    return {"a": _product(scope),
            "b": _product(scope, "AND p.id != ? AND p.price_cents != ? AND p.category_id = (SELECT category_id FROM "
                                 "products WHERE id = ?)", ("{a.id}", "{a.price_cents}", "{a.id}")),
            # the cheaper one and the dearer one, by id and name
            "x": {"type": "rows", "sql": "SELECT CASE WHEN a < b THEN ida ELSE idb END AS cheap_id, CASE WHEN a < b "
                                         "THEN na ELSE nb END AS cheap, CASE WHEN a < b THEN idb ELSE ida END AS dear_id, "
                                         "CASE WHEN a < b THEN nb ELSE na END AS dear FROM (SELECT CAST(? AS INTEGER) AS "
                                         "a, CAST(? AS INTEGER) AS b, ? AS ida, ? AS idb, ? AS na, ? AS nb)",
                  "params": ["{a.price_cents}", "{b.price_cents}", "{a.id}", "{b.id}", "{a.name}", "{b.name}"]}}


def compare(scope: str) -> dict[str, Any]:
    """Compare two products' prices (of one category) and name the cheaper; the near miss names the other."""
    return {
        "phrasings": ['Which is cheaper, "{a.name}" or "{b.name}"? Answer with the product\'s name only.',
                      'Compare the prices of "{a.name}" and "{b.name}" and tell me which one costs less.',
                      'Of "{a.name}" and "{b.name}", name the one with the lower price.'],
        "params": _pair(scope),
        "judge": {"subgoals": _VISITED,
                  "checks": [{"check": "the answer is the cheaper product", "get": {"kind": "answer"},
                              "expect": {"op": "text", "value": "{x.cheap}"}}],
                  "expected_changes": []},
        "oracle": [*_open("a"), *_open("b"), {"done": {"answer": "{x.cheap}"}}],
        "near_miss": [*_open("a"), *_open("b"), {"done": {"answer": "{x.dear}"}}],
        "max_steps": 12,
        "tags": {"skills": ["search", "read", "compare", "answer"], "tier": 3},
    }


#: both products' pages seen (the history keeps them: the page open now is a search, then the other product)
_VISITED = [{"check": f"the page of {x} was opened", "get": {"kind": "navigation", "url_path": "/p/{" + x + ".id}"},
             "expect": {"op": "length", "min": 1}} for x in ("a", "b")]


def _pick(which: str) -> list[dict[str, Any]]:
    return [{"fill": {"selector": "input[name=q]", "text": "{x." + which + "}", "submit": True}},
            {"click": 'article[data-id="{x.' + which + '_id}"] a[data-field=name]'}]


def compare_then_add(scope: str) -> dict[str, Any]:
    """A chain: compare two products and add the cheaper one to the cart; the near miss adds the dearer one."""
    return {
        "phrasings": ['Of "{a.name}" and "{b.name}", add the cheaper one to my cart (one unit).',
                      'Compare "{a.name}" with "{b.name}" and put whichever costs less in the cart.',
                      'Add one of the lower-priced product to my cart: "{a.name}" or "{b.name}".'],
        "params": {**_pair(scope), "left": _LEFT},
        "judge": {"subgoals": _VISITED,
                  "checks": [_cart_is([{"product_id": "{left.id}", "qty": "{left.qty}"},
                                       {"product_id": "{x.cheap_id}", "qty": 1}], "the cheaper one is in the cart")],
                  "expected_changes": _CART_CHANGES},
        "oracle": [*_open("a"), *_open("b"), *_pick("cheap"), {"click": "#add-to-cart"}],
        "near_miss": [*_open("a"), *_open("b"), *_pick("dear"), {"click": "#add-to-cart"}],
        "max_steps": 30,  # three searches (version 1: the oracle ran out of 15)
        "tags": {"skills": ["search", "compare", "multi_step"], "tier": 3},
    }


_ORDER_ROW = ("SELECT o.card_id, o.shipping, o.ship_name, o.ship_street, o.ship_city, o.ship_zip, o.ship_country, "
              "oi.product_id, oi.qty, (SELECT COUNT(*) FROM order_items x WHERE x.order_id = o.id) AS lines "
              "FROM orders o JOIN order_items oi ON oi.order_id = o.id WHERE o.status = 'placed'")
_ORDER_CHANGES = ["orders[status=placed]", "cart", "cart_total_cents", "products[id={p.id}].stock"]
_NORM = {"ship_street": "address", "ship_city": "text", "ship_name": "text", "ship_country": "text"}


def _checkout(p: str) -> list[dict[str, Any]]:
    return [*_add(p, "{n}"), {"click": 'tr[data-id="{left.id}"] button[data-action=remove]'}, {"click": "#to-checkout"}]


def order_saved(scope: str) -> dict[str, Any]:
    """Order N of a product alone, to a saved address with a shipping method and a card; the near miss keeps
    the default delivery."""
    return {
        "phrasings": ['Order {n} × "{p.name}" and nothing else, shipped {ship} to my {addr.label} address, paid with '
                      "the card ending in {card.last4}.",
                      'Buy {n} of "{p.name}" (only that: take anything else out of the cart). Delivery: {ship}, to '
                      "the {addr.label} address. Pay with the card ending {card.last4}.",
                      'Check out {n} "{p.name}" by itself, with {ship} shipping to {addr.label} and the card ending in '
                      "{card.last4}."],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 1, "max": 3},
                   "addr": {"type": "rows", "sql": "SELECT id, label, name, street, city, zip, country FROM addresses "
                                                   "ORDER BY id"},
                   "ship": {"type": "choice", "values": ["standard", "express"]},
                   "wrong": {"type": "rows", "sql": "SELECT CASE WHEN ? = 'express' THEN 'standard' ELSE 'express' END AS s",
                             "params": ["{ship}"]},
                   "card": {"type": "rows", "sql": "SELECT id, last4 FROM cards ORDER BY id"}},
        "judge": {"subgoals": [_on_page("p"), _CART_OPEN,
                               {"check": "the checkout is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/checkout"}}],
                  "checks": [{"check": "one order of it alone, to that address, with that shipping and card",
                              "get": {"kind": "sql", "query": _ORDER_ROW},
                              "expect": {"op": "table", "normalize": _NORM, "rows": [
                                  {"card_id": "{card.id}", "shipping": "{ship}", "ship_name": "{addr.name}",
                                   "ship_street": "{addr.street}", "ship_city": "{addr.city}", "ship_zip": "{addr.zip}",
                                   "ship_country": "{addr.country}", "product_id": "{p.id}", "qty": "{n}", "lines": 1}]}},
                             {"check": "the cart is empty", "get": {"kind": "app_state", "path": "cart"},
                              "expect": {"op": "length", "max": 0}}],
                  "expected_changes": _ORDER_CHANGES},
        "oracle": [*_checkout("p"), {"click": 'input[name=address][value="{addr.id}"]'},
                   {"click": "input[name=shipping][value={ship}]"}, {"click": 'input[name=card][value="{card.id}"]'},
                   {"click": "#place-order"}, {"wait_for": "#placed-modal"}],
        "near_miss": [*_checkout("p"), {"click": 'input[name=address][value="{addr.id}"]'},
                      {"click": "input[name=shipping][value={wrong.s}]"}, {"click": 'input[name=card][value="{card.id}"]'},
                      {"click": "#place-order"}, {"wait_for": "#placed-modal"}],
        "max_steps": 25,
        "tags": {"skills": ["search", "number_input", "checkout", "radio"], "tier": 4},
    }


_NEW_ADDRESSES = [("Jordan Lee", "221 Harbor Road", "Portland", "97201", "United States"),
                  ("Sam Rivera", "8 Maple Crescent", "Toronto", "M5V 2T6", "Canada"),
                  ("Robin Clarke", "47 King's Parade", "Cambridge", "CB2 1ST", "United Kingdom"),
                  ("Mia Wagner", "Lindenstrasse 12", "Berlin", "10969", "Germany")]
_NEW_SQL = "SELECT * FROM (VALUES " + ", ".join(
    "(" + ", ".join("'" + v.replace("'", "''") + "'" for v in a) + ")" for a in _NEW_ADDRESSES) + ")"


def order_new_address(scope: str) -> dict[str, Any]:
    """Order one product alone, to a new address typed in (not saved), with a shipping method and a saved card;
    the near miss ships it to the first saved address."""
    fill = [{"click": "input[name=address][value=new]"},
            {"fill": {"selector": "input[name=name]", "text": "{a.column1}"}},
            {"fill": {"selector": "input[name=street]", "text": "{a.column2}"}},
            {"fill": {"selector": "input[name=city]", "text": "{a.column3}"}},
            {"fill": {"selector": "input[name=zip]", "text": "{a.column4}"}},
            {"select": {"selector": "select[name=country]", "option": "{a.column5}"}}]
    tail = [{"click": "input[name=shipping][value={ship}]"}, {"click": 'input[name=card][value="{card.id}"]'},
            {"click": "#place-order"}, {"wait_for": "#placed-modal"}]
    return {
        "phrasings": ['Order {n} × "{p.name}" (nothing else) as a gift to {a.column1}, {a.column2}, {a.column3} '
                      "{a.column4}, {a.column5}, with {ship} shipping and the card ending in {card.last4}. Do not save "
                      "the address.",
                      'Send {n} of "{p.name}" to a new address -- {a.column1}, {a.column2}, {a.column3} {a.column4}, '
                      "{a.column5} -- shipped {ship}, paid with the card ending {card.last4}; only that product.",
                      'Buy {n} "{p.name}" alone and ship it ({ship}) to {a.column1} at {a.column2}, {a.column3} '
                      "{a.column4}, {a.column5}. Card: the one ending in {card.last4}."],
        "params": {"p": _product(scope), "left": _LEFT, "n": {"type": "int", "min": 1, "max": 2},
                   "a": {"type": "rows", "sql": _NEW_SQL},
                   "ship": {"type": "choice", "values": ["standard", "express"]},
                   "card": {"type": "rows", "sql": "SELECT id, last4 FROM cards ORDER BY id"}},
        "judge": {"subgoals": [_on_page("p"), _CART_OPEN,
                               {"check": "the checkout is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/checkout"}}],
                  "checks": [{"check": "one order of it alone, to the new address, with that shipping and card",
                              "get": {"kind": "sql", "query": _ORDER_ROW},
                              "expect": {"op": "table", "normalize": {**_NORM, "ship_zip": "text"}, "rows": [
                                  {"card_id": "{card.id}", "shipping": "{ship}", "ship_name": "{a.column1}",
                                   "ship_street": "{a.column2}", "ship_city": "{a.column3}", "ship_zip": "{a.column4}",
                                   "ship_country": "{a.column5}", "product_id": "{p.id}", "qty": "{n}", "lines": 1}]}},
                             {"check": "the cart is empty", "get": {"kind": "app_state", "path": "cart"},
                              "expect": {"op": "length", "max": 0}},
                             {"check": "no address was saved", "get": {"kind": "app_state", "path": "addresses"},
                              "expect": {"op": "length", "max": 2}}],
                  "expected_changes": _ORDER_CHANGES},
        "oracle": [*_checkout("p"), *fill, *tail],
        "near_miss": [*_checkout("p"), {"click": 'input[name=address][value="1"]'}, *tail],
        "max_steps": 50,  # five fields and a country (version 1: the oracle ran out of 30)
        "tags": {"skills": ["search", "checkout", "form", "radio"], "tier": 4},
    }


def count_under(scope: str) -> dict[str, Any] | None:
    """How many products of a category cost at most a price (in stock, for the in-stock variant); the near
    miss counts the whole category."""
    if scope not in ("", "AND p.stock > 0"):
        return None
    stock = scope == "AND p.stock > 0"
    what = "in-stock " if stock else ""
    n = f"(SELECT COUNT(*) FROM products p WHERE p.category_id = c.id {scope}"
    steps: list[dict[str, Any]] = [{"click": 'a[data-category="{x.name}"]'},
                                   {"fill": {"selector": "input[name=max]", "text": "{x.max}"}}]
    if stock:
        steps.append({"click": "input[name=in_stock]"})
    steps.append({"click": "#filters button[data-action=apply]"})
    return {
        "phrasings": [f"How many {what}products in the {{x.name}} category cost ${{x.max}} or less? Answer with just "
                      "the number.",
                      f"Count the {what}{{x.name}} products priced at most ${{x.max}}; reply with the number.",
                      f"In {{x.name}}, what is the number of {what}products at or under ${{x.max}}? A number only."],
        "params": {"x": {"type": "rows",
                         "sql": f"SELECT c.id, c.name, v.column1 AS max, {n} AND p.price_cents <= v.column1 * 100) AS n, "
                                f"{n}) AS n_all FROM categories c, (VALUES (15), (25), (40), (60), (100), (250), (500), "
                                "(1000)) v WHERE n >= 1 AND n < n_all ORDER BY c.id, v.column1"}},
        "judge": {"subgoals": [{"check": "the category is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/c/"}},
                               {"check": "the price filter is on", "get": {"kind": "url", "part": "query"},
                                "expect": {"op": "regex", "pattern": "max="}}],
                  "checks": [{"check": "the answer is the count", "get": {"kind": "answer"},
                              "expect": {"op": "number", "value": "{x.n}"}}],
                  "expected_changes": []},
        "oracle": [*steps, {"done": {"answer": "{x.n}"}}],
        "near_miss": [{"click": 'a[data-category="{x.name}"]'}, {"done": {"answer": "{x.n_all}"}}],
        "max_steps": 12,
        "tags": {"skills": ["navigate", "filter", "count", "answer"], "tier": 3},
    }


#: find: (the words, the drawn product's column the answer is, the column it differs in from another
#: product's (its SQL and its name in the drawn row), the comparator, the answer as the oracle gives it)
_FINDS = {"price": ("price", "price", "p.price_cents", "price_cents", "number", "${p.price}"),
          "brand": ("brand", "brand", "b.name", "brand", "text", "{p.brand}"),
          "color": ("colour", "color", "p.color", "color", "text", "{p.color}")}


def find(field: str) -> Operation:
    """A question: a product's price, brand or colour; the near miss answers another product's."""
    words, col, sql, key, cmp, said = _FINDS[field]

    def op(scope: str) -> dict[str, Any]:
        expect: dict[str, Any] = {"op": cmp, "value": "{p." + col + "}"}
        if cmp == "number":
            expect["abs"] = 0.005
        return {
            "phrasings": [f'What is the {words} of "{{p.name}}"? Answer with just the value.',
                          f'Look up "{{p.name}}" in the shop and tell me its {words}.',
                          f'Find the product "{{p.name}}"; reply with its {words} and nothing else.'],
            "params": {"p": _product(scope),
                       "o": _product("", f"AND p.id != ? AND {sql} != ?", ("{p.id}", "{p." + key + "}"))},
            "judge": {"subgoals": [_on_page("p")],
                      "checks": [{"check": f"the answer is the {words}", "get": {"kind": "answer"}, "expect": expect}],
                      "expected_changes": []},
            "oracle": [*_open("p"), {"done": {"answer": said}}],
            "near_miss": [*_open("p"), {"done": {"answer": said.replace("{p.", "{o.")}}],
            "max_steps": 10,
            "tags": {"skills": ["search", "read", "answer"], "tier": 2},
        }
    return op


_WISHED = {"type": "rows", "sql": "SELECT w.product_id AS id, p.name FROM wishlist w JOIN products p ON p.id = w.product_id "
                                  "WHERE p.stock >= 1 ORDER BY w.product_id"}


def _wish_row(pid: str) -> dict[str, Any]:
    return {"kind": "sql", "query": "SELECT product_id FROM wishlist WHERE product_id = ?", "params": [pid]}


def wish_add(scope: str) -> dict[str, Any]:
    """Save a product to the wishlist from its page; the near miss puts it in the cart instead."""
    return {
        "phrasings": ['Save "{p.name}" to my wishlist.', 'Put "{p.name}" on my wishlist for later (do not buy it).',
                      'I might buy "{p.name}" some day: add it to my wishlist.'],
        "params": {"p": _product(scope, "AND p.id NOT IN (SELECT product_id FROM wishlist)")},
        "judge": {"subgoals": [_on_page("p")],
                  "checks": [{"check": "the product is on the wishlist", "get": _wish_row("{p.id}"),
                              "expect": {"op": "table", "rows": [{"product_id": "{p.id}"}]}}],
                  "expected_changes": ["wishlist[product_id={p.id}]"]},
        "oracle": [*_open("p"), {"click": "button[data-action=wishlist-add]"}],
        "near_miss": [*_open("p"), {"click": "#add-to-cart"}],
        "max_steps": 10,
        "tags": {"skills": ["search", "wishlist"], "tier": 2},
    }


def wish_move(scope: str) -> dict[str, Any] | None:
    """Move a saved product from the wishlist into the cart; the near miss removes it from the wishlist."""
    if scope:
        return None
    row = 'li[data-id="{w.id}"] '
    return {
        "phrasings": ['Move "{w.name}" from my wishlist into my cart.',
                      'I want to buy "{w.name}" now: it is on my wishlist; put it in the cart from there.',
                      'Take "{w.name}" off my wishlist by moving it to the shopping cart.'],
        "params": {"w": _WISHED, "left": _LEFT},
        "judge": {"subgoals": [{"check": "the wishlist is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/wishlist"}}],
                  "checks": [_cart_is([{"product_id": "{left.id}", "qty": "{left.qty}"}, {"product_id": "{w.id}", "qty": 1}],
                                      "the cart holds one of it beside the rest"),
                             {"check": "it is off the wishlist", "get": _wish_row("{w.id}"),
                              "expect": {"op": "length", "max": 0}}],
                  "expected_changes": ["wishlist[product_id={w.id}]", *_CART_CHANGES]},
        "oracle": [{"click": 'a[data-nav="/wishlist"]'}, {"click": row + "button[data-action=move-to-cart]"}],
        "near_miss": [{"click": 'a[data-nav="/wishlist"]'}, {"click": row + "button[data-action=wishlist-remove]"}],
        "max_steps": 8,
        "tags": {"skills": ["navigate", "wishlist"], "tier": 2},
    }


_TITLES = {"type": "string",
           "values": ["Does what it says", "Better than expected", "Not worth the price", "Solid everyday pick"]}
_BODIES = {"type": "string", "values": ["Arrived on time and works well.", "I use it most days; no complaints so far.",
                                        "The quality is uneven for what it costs."]}


def _stars_steps(n: str) -> list[dict[str, Any]]:
    return [{"click": 'label[data-stars="' + n + '"] input'}]


def review(scope: str) -> dict[str, Any]:
    """Write a review of a product with given stars, title and text; the near miss gives one star more."""
    def steps(n: str) -> list[dict[str, Any]]:
        return [*_open("p"), {"click": "a[data-action=write-review]"}, *_stars_steps(n),
                {"fill": {"selector": "input[name=title]", "text": "{title}"}},
                {"fill": {"selector": "textarea[name=body]", "text": "{body}"}},
                {"click": "button[data-action=submit-review]"}]
    return {
        "phrasings": ['Review "{p.name}": {n} stars, titled "{title}", with the text "{body}".',
                      'Write a {n}-star review of "{p.name}". Title: "{title}". Text: "{body}"',
                      'Leave a review on "{p.name}" giving it {n} out of 5 stars, the title "{title}" and the words '
                      '"{body}".'],
        "params": {"p": _product(scope, "AND p.id NOT IN (SELECT product_id FROM reviews)"),
                   "m": {"type": "rows", "sql": "SELECT COALESCE(MAX(id), 0) AS max FROM reviews"},
                   "n": {"type": "int", "min": 1, "max": 5},
                   "wrong": {"type": "rows", "sql": "SELECT CAST(? AS INTEGER) % 5 + 1 AS n", "params": ["{n}"]},
                   "title": _TITLES, "body": _BODIES},
        "judge": {"subgoals": [_on_page("p"), {"check": "the review form is open", "get": {"kind": "url", "part": "path"},
                                               "expect": {"op": "regex", "pattern": "^/p/{p.id}/review"}}],
                  "checks": [{"check": "one new review of it with those stars, title and text",
                              "get": {"kind": "sql", "query": "SELECT product_id, stars, title, body FROM reviews WHERE id > ?",
                                      "params": ["{m.max}"]},
                              "expect": {"op": "table", "normalize": {"title": "text", "body": "text"},
                                         "rows": [{"product_id": "{p.id}", "stars": "{n}", "title": "{title}",
                                                   "body": "{body}"}]}}],
                  "expected_changes": ["reviews[id>{m.max}]"]},
        "oracle": steps("{n}"),
        "near_miss": steps("{wrong.n}"),
        "max_steps": 16,
        "tags": {"skills": ["search", "form", "radio", "review"], "tier": 3},
    }


def review_edit(scope: str) -> dict[str, Any] | None:
    """Change the stars of a review the customer wrote (its words kept); the near miss gives other stars."""
    if scope:
        return None
    stars = "SELECT column1 AS v FROM (VALUES (1), (2), (3), (4), (5)) WHERE column1 NOT IN (?, ?)"

    def steps(n: str) -> list[dict[str, Any]]:
        return [{"fill": {"selector": "input[name=q]", "text": "{r.name}", "submit": True}},
                {"click": 'article[data-id="{r.pid}"] a[data-field=name]'}, {"click": "a[data-action=edit-review]"},
                *_stars_steps(n), {"click": "button[data-action=submit-review]"}]
    return {
        "phrasings": ['Change my review of "{r.name}" to {n.v} stars; leave its title and text as they are.',
                      'I rated "{r.name}" {r.stars} stars. Edit that review so it gives {n.v} stars instead.',
                      'Update the star rating of my "{r.name}" review to {n.v} out of 5 (words unchanged).'],
        "params": {"r": {"type": "rows", "sql": "SELECT r.id, r.stars, r.title, r.body, p.id AS pid, p.name FROM reviews r "
                                                "JOIN products p ON p.id = r.product_id ORDER BY r.id"},
                   "n": {"type": "rows", "sql": stars, "params": ["{r.stars}", "{r.stars}"]},
                   "wrong": {"type": "rows", "sql": stars, "params": ["{r.stars}", "{n.v}"]}},
        "judge": {"subgoals": [{"check": "the product is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/p/{r.pid}(/|$)"}},
                               {"check": "the review form is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/p/{r.pid}/review"}}],
                  "checks": [{"check": "the review gives the new stars and keeps its words",
                              "get": {"kind": "sql", "query": "SELECT stars, title, body FROM reviews WHERE id = ?",
                                      "params": ["{r.id}"]},
                              "expect": {"op": "table", "normalize": {"title": "text", "body": "text"},
                                         "rows": [{"stars": "{n.v}", "title": "{r.title}", "body": "{r.body}"}]}}],
                  "expected_changes": ["reviews[id={r.id}].stars", "reviews[id={r.id}].updated_at"]},
        "oracle": steps("{n.v}"),
        "near_miss": steps("{wrong.v}"),
        "max_steps": 12,
        "tags": {"skills": ["search", "form", "radio", "review", "edit"], "tier": 3},
    }


def cancel(scope: str) -> dict[str, Any] | None:
    """Cancel the unshipped order that holds a named item (of the two not shipped yet); the near miss cancels
    the other one."""
    if scope:
        return None

    def steps(number: str) -> list[dict[str, Any]]:
        return [{"click": 'a[data-nav="/orders"]'}, {"click": 'a[data-order="' + number + '"]'},
                {"click": "button[data-action=cancel-order]"}, {"wait_for": "[data-status=cancelled]"}]
    return {
        "phrasings": ['Cancel my order with "{o.item}" in it; it has not shipped yet.',
                      'I no longer need "{o.item}": cancel the (not yet shipped) order it is in.',
                      'One unshipped order of mine contains "{o.item}". Cancel that order, and only that one.'],
        "params": {"o": {"type": "rows", "sql": "SELECT o.id, o.number, p.name AS item FROM orders o JOIN order_items oi "
                                                "ON oi.order_id = o.id JOIN products p ON p.id = oi.product_id WHERE "
                                                "o.status = 'processing' AND oi.product_id NOT IN (SELECT product_id FROM "
                                                "order_items WHERE order_id != o.id) ORDER BY o.id, p.id"},
                   "other": {"type": "rows", "sql": "SELECT number FROM orders WHERE status = 'processing' AND id != ? "
                                                    "ORDER BY id", "params": ["{o.id}"]}},
        "judge": {"subgoals": [{"check": "an order is open", "get": {"kind": "url", "part": "path"},
                                "expect": {"op": "regex", "pattern": "^/orders/\\d+"}}],
                  "checks": [{"check": "that order, and only it, is cancelled",
                              "get": {"kind": "sql", "query": "SELECT id FROM orders WHERE status = 'cancelled'"},
                              "expect": {"op": "table", "rows": [{"id": "{o.id}"}]}}],
                  "expected_changes": ["orders[id={o.id}].status", "orders[id={o.id}].cancelled_at"]},
        "oracle": steps("{o.number}"),
        "near_miss": steps("{other.number}"),
        "max_steps": 14,
        "tags": {"skills": ["navigate", "read", "cancel"], "tier": 3},
    }


def _drawing(op: Operation) -> Operation:
    """An operation on a drawn product: in the scopes on products only (a product drawn is in stock already:
    the in-stock scope, a count's, would draw what "any" does)."""
    scopes = {sql for _, sql in SCOPES}

    def scoped(scope: str) -> dict[str, Any] | None:
        return op(scope) if scope in scopes else None
    return scoped


OPERATIONS: dict[str, Operation] = {
    "add": _drawing(add_n), "set_qty": set_qty, "remove": remove, "add+remove": _drawing(add_and_drop),
    "add+remove+set_qty": _drawing(add_drop_set), "add>ask:subtotal": _drawing(add_then_subtotal),
    "compare:cheaper": _drawing(compare), "compare>add": _drawing(compare_then_add),
    "order:saved_address": _drawing(order_saved), "order:new_address": _drawing(order_new_address),
    "count:under_price": count_under, "find:price": _drawing(find("price")), "find:brand": _drawing(find("brand")),
    "find:color": _drawing(find("color")),
    "wishlist:add": _drawing(wish_add), "wishlist:move": wish_move, "review": _drawing(review),
    "review:edit": review_edit, "cancel:unshipped": cancel,
}

DESCRIPTION = Description(app="shop", version=GENERATOR_VERSION, scopes=(*SCOPES, ("in_stock", "AND p.stock > 0")),
                          entities=(), extra=OPERATIONS,
                          test_chains=frozenset({"add+remove+set_qty", "compare>add", "order:new_address"}))
SCHEMA: AppSchema = DESCRIPTION.schema()
