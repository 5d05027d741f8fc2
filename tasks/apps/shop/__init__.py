"""Shop: an online store with ~400 products, a cart, checkout and order history.

Pages: `/` (categories and top-rated picks), `/c/{slug}` and `/search?q=` (listings with
a native <select> sort, a custom div-based brand listbox, price and stock filters,
pagination), `/p/{id}` (product page, quantity, add to cart), `/cart` (quantities,
remove), `/checkout` (saved or new address, shipping method, a saved card chosen
explicitly or a new card, validated), `/orders/{id}` (with a confirmation modal right
after checkout; cancellable until it ships) and `/orders` (history), `/wishlist` (saved
products, each movable to the cart) and `/p/{id}/review` (the customer's one review of a
product: stars, title, text; written once, then edited). Forms post and redirect; input the
shop refuses (an unknown product or order, stars outside 1-5, cancelling a shipped order)
gets a page that says why, with status 404 or 400, and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.i18n import format_day, format_money
from cua.tasks.apps.shop import locale
from cua.tasks.apps.shop.seed import order_number, seed_shop
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE categories (id INTEGER PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL UNIQUE);
CREATE TABLE brands (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    category_id INTEGER NOT NULL REFERENCES categories(id),
    brand_id INTEGER NOT NULL REFERENCES brands(id),
    price_cents INTEGER NOT NULL,
    rating REAL NOT NULL,
    reviews INTEGER NOT NULL,
    stock INTEGER NOT NULL,
    color TEXT NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE cart_items (product_id INTEGER PRIMARY KEY REFERENCES products(id), qty INTEGER NOT NULL CHECK (qty > 0));
CREATE TABLE addresses (id INTEGER PRIMARY KEY, label TEXT NOT NULL, name TEXT NOT NULL, street TEXT NOT NULL,
                        city TEXT NOT NULL, zip TEXT NOT NULL, country TEXT NOT NULL);
CREATE TABLE cards (id INTEGER PRIMARY KEY, brand TEXT NOT NULL, last4 TEXT NOT NULL, holder TEXT NOT NULL,
                    exp TEXT NOT NULL, nickname TEXT NOT NULL);
CREATE TABLE orders (
    id INTEGER PRIMARY KEY,
    number TEXT NOT NULL UNIQUE,
    placed_at TEXT NOT NULL,
    status TEXT NOT NULL,
    ship_name TEXT NOT NULL, ship_street TEXT NOT NULL, ship_city TEXT NOT NULL, ship_zip TEXT NOT NULL,
    ship_country TEXT NOT NULL,
    card_id INTEGER NOT NULL REFERENCES cards(id),
    shipping TEXT NOT NULL,
    subtotal_cents INTEGER NOT NULL, shipping_cents INTEGER NOT NULL, total_cents INTEGER NOT NULL,
    cancelled_at TEXT
);
CREATE TABLE order_items (
    order_id INTEGER NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
    product_id INTEGER NOT NULL REFERENCES products(id),
    qty INTEGER NOT NULL,
    price_cents INTEGER NOT NULL,
    PRIMARY KEY (order_id, product_id)
);
CREATE TABLE order_numbering (n INTEGER PRIMARY KEY, number TEXT NOT NULL UNIQUE);
CREATE TABLE wishlist (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL UNIQUE REFERENCES products(id), added_at TEXT NOT NULL);
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(id),
    author TEXT NOT NULL,
    stars INTEGER NOT NULL CHECK (stars BETWEEN 1 AND 5),
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (product_id, author)
);
"""

PAGE_SIZE = 24
SORTS = [("featured", "Featured"), ("price_asc", "Price: low to high"), ("price_desc", "Price: high to low"),
         ("rating", "Customer rating"), ("name", "Name A–Z")]
SORT_SQL = {"featured": "p.reviews DESC, p.id", "price_asc": "p.price_cents, p.id", "price_desc": "p.price_cents DESC, p.id",
            "rating": "p.rating DESC, p.reviews DESC, p.id", "name": "p.name COLLATE NOCASE, p.id"}
SHIPPING = {"standard": ("Standard (3–5 days)", 599), "express": ("Express (1–2 days)", 1499)}
COUNTRIES = ["United States", "Canada", "United Kingdom", "Germany", "France", "Japan", "Australia"]
FREE_SHIPPING_CENTS = 5000
#: the one signed-in customer, whose reviews the shop stores
CUSTOMER = "Alex Morgan"
#: an order can be cancelled until it leaves the warehouse
CANCELLABLE = ("placed", "processing")


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def luhn_ok(number: str) -> bool:
    digits = [int(c) for c in number][::-1]
    total = sum(d if i % 2 == 0 else (d * 2 - 9 if d * 2 > 9 else d * 2) for i, d in enumerate(digits))
    return total % 10 == 0


def _thumb(p: dict[str, Any], size: int = 120) -> str:
    """A deterministic product picture: no network, stable pixels."""
    hue = (p["id"] * 47) % 360
    initials = "".join(w[0] for w in p["name"].split()[:2])
    return (f'<svg class="thumb" width="{size}" height="{size}" viewBox="0 0 100 100" role="img" aria-label="{esc(p["name"])}">'
            f'<rect width="100" height="100" rx="8" fill="hsl({hue},45%,86%)"/>'
            f'<circle cx="50" cy="44" r="24" fill="hsl({hue},50%,62%)"/>'
            f'<text x="50" y="88" font-size="14" text-anchor="middle" fill="hsl({hue},40%,30%)">{esc(initials)}</text></svg>')


def _stars(rating: float) -> str:
    full = int(round(rating))
    return f'<span class="stars" aria-label="{rating} out of 5">{"★" * full}{"☆" * (5 - full)}</span> <span class="muted">{rating}</span>'


class ShopApp(WebApp):
    name = "shop"
    title = "Shop"
    schema = SCHEMA
    derived = {"orders.card_brand": ("orders.card_id",), "orders.card_last4": ("orders.card_id",),
               "orders.items": ("order_items.product_id", "order_items.qty"), "orders.total": ("orders.total_cents",),
               "products.brand": ("products.brand_id",), "products.category": ("products.category_id",),
               "products.stock": ("order_items.qty",),  # an order takes its items from stock
               "cart_total_cents": ("cart_items.product_id", "cart_items.qty")}
    records = {"cart": ("product_id", "qty")}  # a line's name and prices are its product's
    state_keys = {"cart_items": "cart"}
    assigned = {"products": ("stock",), "cards": ("brand", "nickname"), "orders": ("number", "status", "total_cents", "subtotal_cents", "shipping_cents"),
                "order_items": ("price_cents",), "reviews": ("author",)}
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    query_params = {
        "q": QueryRule(strip=True),
        "sort": QueryRule(default="featured", choices=tuple(SORT_SQL)),
        "brand": QueryRule(),
        "min": QueryRule(strip=True),
        "max": QueryRule(strip=True),
        "in_stock": QueryRule(flag=True),
        "page": QueryRule(default="1", integer=True, minimum=1),
        "placed": QueryRule(flag=True),
    }

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_shop(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        items: dict[int, list[dict[str, Any]]] = {}
        for it in self.db.all("SELECT oi.*, p.name FROM order_items oi JOIN products p ON p.id = oi.product_id "
                              "ORDER BY oi.order_id, p.name"):
            items.setdefault(it["order_id"], []).append(
                {"product_id": it["product_id"], "name": it["name"], "qty": it["qty"], "price_cents": it["price_cents"]})
        orders = [{**o, "total": o["total_cents"] / 100, "items": items.get(o["id"], [])}
                  for o in self.db.all("SELECT o.*, c.last4 AS card_last4, c.brand AS card_brand FROM orders o "
                                       "JOIN cards c ON c.id = o.card_id ORDER BY o.id")]
        cart = self.db.all("SELECT c.product_id, p.name, c.qty, p.price_cents, c.qty * p.price_cents AS line_cents "
                           "FROM cart_items c JOIN products p ON p.id = c.product_id ORDER BY c.rowid")
        return {
            "cart": cart,
            "cart_total_cents": sum(c["line_cents"] for c in cart),
            "orders": orders,
            "cards": self.db.all("SELECT * FROM cards ORDER BY id"),
            "wishlist": self.db.all("SELECT * FROM wishlist ORDER BY id"),
            "reviews": self.db.all("SELECT * FROM reviews ORDER BY id"),
            "addresses": self.db.all("SELECT * FROM addresses ORDER BY id"),
            "products": self.db.all(
                "SELECT p.id, p.name, c.name AS category, b.name AS brand, p.price_cents, p.rating, p.reviews, p.stock, p.color "
                "FROM products p JOIN categories c ON c.id = p.category_id JOIN brands b ON b.id = p.brand_id ORDER BY p.id"),
        }

    def irreversible(self, change: Change) -> str | None:
        """An order placed is paid for: cancelling it afterwards does not undo the payment."""
        return "order" if added_row(change, "orders") is not None else None

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", self.home),
            Route("/c/{slug}", self.category),
            Route("/search", self.search),
            Route("/p/{pid:int}", self.product),
            Route("/cart", self.cart),
            Route("/cart/add", self.cart_add, methods=["POST"]),
            Route("/cart/update", self.cart_update, methods=["POST"]),
            Route("/cart/remove/{pid:int}", self.cart_remove, methods=["POST"]),
            Route("/checkout", self.checkout, methods=["GET", "POST"]),
            Route("/orders", self.orders),
            Route("/orders/{oid:int}", self.order),
            Route("/orders/{oid:int}/cancel", self.order_cancel, methods=["POST"]),
            Route("/wishlist", self.wishlist),
            Route("/wishlist/add", self.wishlist_add, methods=["POST"]),
            Route("/wishlist/remove/{pid:int}", self.wishlist_remove, methods=["POST"]),
            Route("/wishlist/move/{pid:int}", self.wishlist_move, methods=["POST"]),
            Route("/p/{pid:int}/review", self.review, methods=["GET", "POST"]),
        ]

    def t(self, text: str) -> str:
        """`text` in the variant's locale: the shop's own catalogue, then the shared one."""
        if self.variant.locale == "de-DE" and text in locale.DE:
            return locale.DE[text]
        return super().t(text)

    def _refused(self, status: int, reason: str) -> Response:
        """A refusal the customer reads (a typed page: 404 for what does not exist, 400 for what the shop's
        rules do not allow); nothing changed."""
        return self._page(self.t("Cannot do that"), f'<div class="error" role="alert" data-error="{status}">{esc(self.t(reason))}</div>'
                                                    f'<p><a href="/" data-action="back">{self.t("Back to the shop")}</a></p>', status=status)

    def _status(self, status: str) -> str:
        return f'<span class="status status-{esc(status)}" data-status="{esc(status)}">{esc(self.t(status))}</span>'

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def _money(self, cents: int) -> str:
        """An amount as the variant's locale writes it (en-US: `$1,095.99`)."""
        return format_money(cents, self.variant.locale)

    def _day(self, iso: str) -> str:
        """A date as the variant's locale writes it (en-US keeps the ISO date its tasks were written against)."""
        if self.variant.locale == "en-US":
            return iso
        return format_day(dt.date.fromisoformat(iso), self.variant.locale, with_year=True)

    def _page(self, title: str, body: str, *, status: int = 200) -> Response:
        count = self.db.scalar("SELECT COALESCE(SUM(qty), 0) FROM cart_items")
        cats = "".join(f'<a href="/c/{c["slug"]}" data-category="{esc(c["name"])}">{esc(c["name"])}</a>' for c in self.db.all("SELECT * FROM categories ORDER BY id"))
        top = ('<div class="shopbar"><form method="get" action="/search" class="row" role="search">'
               f'<input type="search" name="q" aria-label="{self.t("Search products")}" placeholder="{self.t("Search products")}">'
               f'<button type="submit" data-action="search">{self.t("Search")}</button></form>'
               f'<a class="cart-link" href="/cart" data-action="cart" aria-label="{self.t("Cart")}, {count} {self.t("items")}">'
               f'{self.t("Cart")} <span class="badge">{count}</span></a></div>'
               f'<nav class="catbar">{cats}</nav>')
        page = html_page(self, title, top + body, nav=[("Home", "/"), ("Orders", "/orders"), ("Wishlist", "/wishlist"), ("Cart", "/cart")],
                         scripts=["/static/cua/modal.js", "/static/cua/listbox.js", "/static/app/shop.js"])
        page.status_code = status
        return page

    def _cards(self, products: list[dict[str, Any]]) -> str:
        return '<div class="grid">' + "".join(
            f'<article class="product card" data-id="{p["id"]}" data-name="{esc(p["name"])}">'
            f'<a href="/p/{p["id"]}" class="pimg">{_thumb(p)}</a>'
            f'<a href="/p/{p["id"]}" class="pname" data-field="name">{esc(p["name"])}</a>'
            f'<div class="pbrand muted">{esc(p["brand"])}</div><div>{_stars(p["rating"])} <span class="muted">({p["reviews"]})</span></div>'
            f'<div class="price">{self._money(p["price_cents"])}</div>'
            + (f'<div class="oos">{self.t("Out of stock")}</div>' if p["stock"] == 0 else
               f'<form method="post" action="/cart/add"><input type="hidden" name="product_id" value="{p["id"]}">'
               f'<input type="hidden" name="qty" value="1"><button type="submit" class="add" data-action="add-to-cart" '
               f'aria-label="{self.t("Add to cart")}: {esc(p["name"])}">{self.t("Add to cart")}</button></form>')
            + "</article>" for p in products) + "</div>"

    async def home(self, request: Request) -> Response:
        cats = self.db.all("SELECT c.*, COUNT(p.id) AS n FROM categories c JOIN products p ON p.category_id = c.id GROUP BY c.id ORDER BY c.id")
        tiles = "".join(f'<a class="card cat-tile" href="/c/{c["slug"]}"><strong>{esc(c["name"])}</strong><span class="muted">{c["n"]} {self.t("products")}</span></a>'
                        for c in cats)
        top = self.db.all("SELECT p.*, b.name AS brand FROM products p JOIN brands b ON b.id = p.brand_id "
                          "WHERE p.stock > 0 ORDER BY p.rating DESC, p.reviews DESC, p.id LIMIT 8")
        return self._page(self.t("Home"), f"<h1>{self.t('Shop by category')}</h1><div class='cats'>{tiles}</div>"
                                          f"<h2>{self.t('Top rated')}</h2>{self._cards(top)}")

    def _listing(self, request: Request, title: str, base_where: str, base_params: list[Any], *, extra_hidden: str = "") -> Response:
        read = self.query(request)
        sort = str(read["sort"])
        where, params = [base_where], list(base_params)
        brand = read["brand"] or ""
        if brand:
            where.append("b.name = ?"); params.append(brand)
        price_err = ""
        for key, op in (("min", ">="), ("max", "<=")):
            raw = read[key] or ""
            if raw:
                try:
                    where.append(f"p.price_cents {op} ?"); params.append(int(round(float(raw) * 100)))
                except ValueError:
                    where.pop(); price_err = "<div class='error'>Prices must be numbers.</div>"
        if read["in_stock"]:
            where.append("p.stock > 0")
        where_sql = " AND ".join(where)
        total = self.db.scalar(f"SELECT COUNT(*) FROM products p JOIN brands b ON b.id = p.brand_id WHERE {where_sql}", params)
        pages = max(1, (total + PAGE_SIZE - 1) // PAGE_SIZE)
        page = min(pages, int(read["page"]))
        products = self.db.all(f"SELECT p.*, b.name AS brand FROM products p JOIN brands b ON b.id = p.brand_id WHERE {where_sql} "
                               f"ORDER BY {SORT_SQL[sort]} LIMIT ? OFFSET ?", [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE])
        brands = [r["name"] for r in self.db.all(
            f"SELECT DISTINCT b.name FROM products p JOIN brands b ON b.id = p.brand_id WHERE {base_where} ORDER BY b.name", base_params)]
        options = [("", "All brands")] + [(b, b) for b in brands]
        current = dict(options).get(brand, "All brands")
        lb_opts = "".join(
            f'<li role="option" id="brand-opt-{i}" data-value="{esc(v)}" aria-selected="{"true" if v == brand else "false"}">{esc(label)}</li>'
            for i, (v, label) in enumerate(options))
        brand_box = (
            '<div class="listbox" data-name="brand" data-autosubmit="1">'
            '<span class="lb-label" id="brand-label">Brand</span>'
            f'<input type="hidden" name="brand" value="{esc(brand)}">'
            f'<button type="button" class="lb-button" aria-haspopup="listbox" aria-expanded="false" aria-labelledby="brand-label brand-value">'
            f'<span id="brand-value" class="lb-value">{esc(current)}</span><span class="lb-caret">▾</span></button>'
            f'<ul class="lb-options" role="listbox" aria-labelledby="brand-label" tabindex="-1" hidden>{lb_opts}</ul></div>')
        sort_sel = "".join(f'<option value="{k}"{" selected" if k == sort else ""}>{self.t(label)}</option>' for k, label in SORTS)
        filters = (
            f'<form class="filters card" method="get" id="filters">{extra_hidden}{brand_box}'
            f'<label>{self.t("Sort by")} <select name="sort" id="sort" data-autosubmit="1">{sort_sel}</select></label>'
            f'<label>Min $ <input type="number" name="min" min="0" step="1" value="{esc(read["min"] or "")}" class="price-in"></label>'
            f'<label>Max $ <input type="number" name="max" min="0" step="1" value="{esc(read["max"] or "")}" class="price-in"></label>'
            f'<label><input type="checkbox" name="in_stock" value="1"{" checked" if read["in_stock"] else ""}> {self.t("In stock only")}</label>'
            f'<button type="submit" data-action="apply">{self.t("Apply")}</button></form>')
        qs = {k: v for k, v in read.items() if k not in ("page", "placed") and v is not None and v != self.query_params[k].default}
        pager = "".join(
            f'<a class="page{" active" if n == page else ""}" href="?{urlencode({**qs, "page": n})}"'
            f'{" aria-current=page" if n == page else ""}>{n}</a>' for n in range(1, pages + 1))
        body = (f"<h1>{esc(title)}</h1>{price_err}{filters}<p class='muted'>{total} {self.t('products')}</p>"
                f"{self._cards(products) if products else '<p class=empty>No products match.</p>'}"
                f"<nav class='pager' aria-label='Pages'>{pager}</nav>")
        return self._page(title, body)

    async def category(self, request: Request) -> Response:
        cat = self.db.one("SELECT * FROM categories WHERE slug = ?", (request.path_params["slug"],))
        if cat is None:
            return self._page("Not found", "<div class='error'>No such category.</div>")
        return self._listing(request, cat["name"], "p.category_id = ?", [cat["id"]])

    async def search(self, request: Request) -> Response:
        q = self.query(request)["q"] or ""
        like = f"%{q}%"
        return self._listing(request, f"Results for “{q}”" if q else "All products",
                             "(p.name LIKE ? OR b.name LIKE ? OR p.description LIKE ?)", [like, like, like],
                             extra_hidden=f'<input type="hidden" name="q" value="{esc(q)}">')

    async def product(self, request: Request) -> Response:
        p = self.db.one("SELECT p.*, b.name AS brand, c.name AS category, c.slug FROM products p JOIN brands b ON b.id = p.brand_id "
                        "JOIN categories c ON c.id = p.category_id WHERE p.id = ?", (request.path_params["pid"],))
        if p is None:
            return self._refused(404, "No such product.")
        in_cart = self.db.scalar("SELECT qty FROM cart_items WHERE product_id = ?", (p["id"],))
        buy = ("<p class='oos'>Out of stock</p>" if p["stock"] == 0 else
               f'<form method="post" action="/cart/add" class="row buy"><input type="hidden" name="product_id" value="{p["id"]}">'
               f'<label>{self.t("Quantity")} <input type="number" name="qty" value="1" min="1" max="{min(p["stock"], 10)}" id="qty"></label>'
               f'<button type="submit" class="primary" id="add-to-cart">{self.t("Add to cart")}</button></form>'
               f'<p class="muted">{p["stock"]} in stock</p>')
        note = f"<div class='flash'>In your cart: {in_cart}</div>" if in_cart else ""
        body = (f'<p class="crumbs"><a href="/c/{p["slug"]}">{esc(p["category"])}</a> › {esc(p["name"])}</p>'
                f'<div class="pdp card" data-id="{p["id"]}">{_thumb(p, 280)}<div class="pinfo">'
                f'<h1 class="pname">{esc(p["name"])}</h1><p>by <strong>{esc(p["brand"])}</strong></p>'
                f'<p>{_stars(p["rating"])} · {p["reviews"]} reviews</p><p class="price big">{self._money(p["price_cents"])}</p>'
                f'<table class="specs"><tr><th>Color</th><td>{esc(p["color"])}</td></tr><tr><th>Category</th><td>{esc(p["category"])}</td></tr>'
                f'<tr><th>Item number</th><td>{p["id"]:05d}</td></tr></table>'
                f'<p>{esc(p["description"])}</p>{note}{buy}{self._wish_button(p)}</div></div>{self._reviews(p)}')
        return self._page(p["name"], body)

    def _wish_button(self, p: dict[str, Any]) -> str:
        """The product page's wishlist toggle: a form each way, the button's name saying which it does."""
        name = esc(p["name"])
        if self.db.scalar("SELECT 1 FROM wishlist WHERE product_id = ?", (p["id"],)):
            return (f'<form method="post" action="/wishlist/remove/{p["id"]}" class="wish on"><span class="muted">♥ {self.t("On your wishlist")}</span> '
                    f'<button type="submit" class="link" id="wishlist-toggle" data-action="wishlist-remove" aria-pressed="true" '
                    f'aria-label="{self.t("Remove from wishlist")}: {name}">{self.t("Remove from wishlist")}</button></form>')
        return (f'<form method="post" action="/wishlist/add" class="wish"><input type="hidden" name="product_id" value="{p["id"]}">'
                f'<button type="submit" id="wishlist-toggle" data-action="wishlist-add" aria-pressed="false" '
                f'aria-label="{self.t("Add to wishlist")}: {name}">♡ {self.t("Add to wishlist")}</button></form>')

    def _reviews(self, p: dict[str, Any]) -> str:
        """The product's reviews: the store's aggregate with the customer's own stars counted in, then the
        customer's review (or a link to write one)."""
        mine = self.db.one("SELECT * FROM reviews WHERE product_id = ? AND author = ?", (p["id"], CUSTOMER))
        count = p["reviews"] + (1 if mine else 0)
        avg = round((p["rating"] * p["reviews"] + (mine["stars"] if mine else 0)) / count, 1)
        avg_text = self.t("{avg} out of 5 · {count} ratings").format(avg=f"{avg:.1f}".replace(".", "," if self.variant.locale == "de-DE" else "."),
                                                                     count=count)
        if mine:
            own = (f'<article class="review mine" data-review-id="{mine["id"]}" data-stars="{mine["stars"]}" aria-labelledby="my-review-title">'
                   f'<h3 id="my-review-title">{self.t("Your review")}</h3>'
                   f'<p><span class="stars" role="img" aria-label="{self.t("{n} of 5 stars").format(n=mine["stars"])}">'
                   f'{"★" * mine["stars"]}{"☆" * (5 - mine["stars"])}</span> <strong data-field="title">{esc(mine["title"])}</strong></p>'
                   f'<p data-field="body">{esc(mine["body"])}</p>'
                   f'<p class="muted">{self.t("Updated {day}").format(day=esc(self._day(mine["updated_at"][:10])))}</p>'
                   f'<a class="button" href="/p/{p["id"]}/review" data-action="edit-review">{self.t("Edit your review")}</a></article>')
        else:
            own = f'<a class="button primary" href="/p/{p["id"]}/review" data-action="write-review">{self.t("Write a review")}</a>'
        return (f'<section class="card reviews" id="reviews" aria-labelledby="reviews-title" data-average="{avg}" data-count="{count}">'
                f'<h2 id="reviews-title">{self.t("Customer reviews")}</h2><p class="avg">{_stars(avg)} · {avg_text}</p>{own}</section>')

    async def cart_add(self, request: Request) -> Response:
        form = await request.form()
        pid = str(form.get("product_id", ""))
        qty_raw = str(form.get("qty", "1"))
        qty = int(qty_raw) if qty_raw.isdigit() else 1
        p = self.db.one("SELECT id, stock FROM products WHERE id = ?", (int(pid),)) if pid.isdigit() else None
        if p is not None and p["stock"] > 0 and qty > 0:
            self.db.execute("INSERT INTO cart_items (product_id, qty) VALUES (?, ?) "
                            "ON CONFLICT(product_id) DO UPDATE SET qty = MIN(qty + excluded.qty, ?)", (p["id"], min(qty, p["stock"]), p["stock"]))
        return RedirectResponse("/cart", status_code=303)

    async def cart_update(self, request: Request) -> Response:
        form = await request.form()
        for key, value in form.multi_items():
            m = re.fullmatch(r"qty_(\d+)", key)
            if not m:
                continue
            pid, raw = int(m.group(1)), str(value).strip()
            if raw.isdigit() and int(raw) == 0:
                self.db.execute("DELETE FROM cart_items WHERE product_id = ?", (pid,))
            elif raw.isdigit():
                stock = self.db.scalar("SELECT stock FROM products WHERE id = ?", (pid,)) or 0
                self.db.execute("UPDATE cart_items SET qty = ? WHERE product_id = ?", (max(1, min(int(raw), stock)), pid))
        if form.get("go") == "checkout":
            return RedirectResponse("/checkout", status_code=303)
        return RedirectResponse("/cart", status_code=303)

    async def cart_remove(self, request: Request) -> Response:
        self.db.execute("DELETE FROM cart_items WHERE product_id = ?", (request.path_params["pid"],))
        return RedirectResponse("/cart", status_code=303)

    def _cart_lines(self) -> list[dict[str, Any]]:
        return self.db.all("SELECT c.product_id, c.qty, p.name, p.price_cents, p.stock, p.id FROM cart_items c "
                           "JOIN products p ON p.id = c.product_id ORDER BY c.rowid")

    async def cart(self, request: Request) -> Response:
        lines = self._cart_lines()
        if not lines:
            return self._page(self.t("Cart"), f"<h1>{self.t('Your cart')}</h1><p class='empty card'>{self.t('Your cart is empty.')} "
                                              f"<a href='/'>{self.t('Continue shopping')}</a></p>")
        rows = "".join(
            f'<tr class="cart-line" data-id="{l["product_id"]}" data-name="{esc(l["name"])}"><td><a href="/p/{l["product_id"]}">{esc(l["name"])}</a></td>'
            f'<td>{self._money(l["price_cents"])}</td>'
            f'<td><input type="number" name="qty_{l["product_id"]}" value="{l["qty"]}" min="0" max="{l["stock"]}" class="qty" '
            f'aria-label="{self.t("Quantity")}: {esc(l["name"])}"></td><td class="line">{self._money(l["qty"] * l["price_cents"])}</td>'
            f'<td><button type="submit" formaction="/cart/remove/{l["product_id"]}" class="link" data-action="remove" '
            f'aria-label="{self.t("Remove")}: {esc(l["name"])}">{self.t("Remove")}</button></td></tr>'
            for l in lines)
        sub = sum(l["qty"] * l["price_cents"] for l in lines)
        t = self.t
        body = (f"<h1>{t('Your cart')}</h1><form method='post' action='/cart/update' class='cart'>"
                f"<table><thead><tr><th>{t('Product')}</th><th>{t('Price')}</th><th>{t('Quantity')}</th><th>{t('Total')}</th>"
                f"<th></th></tr></thead><tbody>{rows}</tbody>"
                f"<tfoot><tr><th colspan=3>{t('Subtotal')}</th><th id='subtotal'>{self._money(sub)}</th><th></th></tr></tfoot></table>"
                f"<p class='muted'>{'Free shipping on this order.' if sub >= FREE_SHIPPING_CENTS else f'Free standard shipping on orders over {self._money(FREE_SHIPPING_CENTS)}.'}</p>"
                f"<p class='row'><button type='submit' id='update-cart'>{t('Update cart')}</button>"
                f"<button type='submit' class='primary' name='go' value='checkout' id='to-checkout'>{t('Proceed to checkout')}</button>"
                "</p></form>")
        return self._page(t("Cart"), body)

    def _checkout_form(self, lines: list[dict[str, Any]], values: dict[str, str], errors: list[str]) -> Response:
        addrs = self.db.all("SELECT * FROM addresses ORDER BY id")
        cards = self.db.all("SELECT * FROM cards ORDER BY id")
        addr_choice = values.get("address", str(addrs[0]["id"]) if addrs else "new")
        addr_html = "".join(
            f'<label class="choice"><input type="radio" name="address" value="{a["id"]}"{" checked" if addr_choice == str(a["id"]) else ""}>'
            f' <strong>{esc(a["label"])}</strong>: {esc(a["name"])}, {esc(a["street"])}, {esc(a["city"])} {esc(a["zip"])}, {esc(a["country"])}</label>'
            for a in addrs)
        countries = "".join(f'<option{" selected" if c == values.get("country", "United States") else ""}>{c}</option>' for c in COUNTRIES)
        addr_html += (
            f'<label class="choice"><input type="radio" name="address" value="new"{" checked" if addr_choice == "new" else ""}> A new address</label>'
            '<fieldset class="new-address" id="new-address"><legend>New address</legend>'
            f'<label>Full name <input type="text" name="name" value="{esc(values.get("name", ""))}"></label>'
            f'<label>Street <input type="text" name="street" value="{esc(values.get("street", ""))}"></label>'
            f'<label>City <input type="text" name="city" value="{esc(values.get("city", ""))}"></label>'
            f'<label>ZIP <input type="text" name="zip" value="{esc(values.get("zip", ""))}" size="8"></label>'
            f'<label>Country <select name="country">{countries}</select></label>'
            '<label><input type="checkbox" name="save_address" value="1"> Save this address</label></fieldset>')
        ship_choice = values.get("shipping", "standard")
        sub = sum(l["qty"] * l["price_cents"] for l in lines)
        ship_html = "".join(
            f'<label class="choice"><input type="radio" name="shipping" value="{k}"{" checked" if k == ship_choice else ""}> {label} — '
            f'{"Free" if k == "standard" and sub >= FREE_SHIPPING_CENTS else self._money(cost)}</label>' for k, (label, cost) in SHIPPING.items())
        card_choice = values.get("card", "")
        card_html = "".join(
            f'<label class="choice"><input type="radio" name="card" value="{c["id"]}"{" checked" if card_choice == str(c["id"]) else ""}>'
            f' {esc(c["nickname"])}: {esc(c["brand"])} ending in {esc(c["last4"])} <span class="muted">exp {esc(c["exp"])}</span></label>'
            for c in cards)
        card_html += (
            f'<label class="choice"><input type="radio" name="card" value="new"{" checked" if card_choice == "new" else ""}> A new card</label>'
            '<fieldset class="new-card" id="new-card"><legend>New card</legend>'
            f'<label>Card number <input type="text" name="card_number" inputmode="numeric" autocomplete="off" value="{esc(values.get("card_number", ""))}"></label>'
            f'<label>Name on card <input type="text" name="card_holder" value="{esc(values.get("card_holder", ""))}"></label>'
            f'<label>Expiry (MM/YY) <input type="text" name="card_exp" size="6" value="{esc(values.get("card_exp", ""))}"></label>'
            '<label>CVC <input type="text" name="card_cvc" size="4" autocomplete="off"></label></fieldset>')
        summary = "".join(f'<tr><td>{esc(l["name"])} × {l["qty"]}</td><td>{self._money(l["qty"] * l["price_cents"])}</td></tr>' for l in lines)
        err = "".join(f"<div class='error' role='alert'>{esc(x)}</div>" for x in errors)
        t = self.t
        body = (f"<h1>{t('Checkout')}</h1>{err}<form method='post' action='/checkout' class='checkout' id='checkout-form'>"
                f"<div class='cols'><div><section class='card'><h2>{t('Shipping address')}</h2>{addr_html}</section>"
                f"<section class='card'><h2>{t('Delivery')}</h2>{ship_html}</section>"
                f"<section class='card'><h2>{t('Payment')}</h2>{card_html}</section></div>"
                f"<aside class='card summary'><h2>{t('Order summary')}</h2><table>{summary}"
                f"<tr><th>{t('Subtotal')}</th><th>{self._money(sub)}</th></tr></table>"
                f"<button type='submit' class='primary' id='place-order'>{t('Place order')}</button></aside></div></form>")
        return self._page(t("Checkout"), body)

    async def checkout(self, request: Request) -> Response:
        lines = self._cart_lines()
        if not lines:
            return RedirectResponse("/cart", status_code=303)
        if request.method == "GET":
            return self._checkout_form(lines, {}, [])
        form = await request.form()
        values = {k: str(v).strip() for k, v in form.items()}
        errors: list[str] = []
        addr = values.get("address", "")
        if addr == "new":
            missing = [k for k in ("name", "street", "city", "zip") if not values.get(k)]
            if missing:
                errors.append("Please fill in the new address: " + ", ".join(missing) + ".")
            if values.get("country") not in COUNTRIES:
                errors.append("Choose a country.")
            ship_to = (values.get("name", ""), values.get("street", ""), values.get("city", ""), values.get("zip", ""), values.get("country", ""))
        else:
            a = self.db.one("SELECT * FROM addresses WHERE id = ?", (int(addr),)) if addr.isdigit() else None
            if a is None:
                errors.append("Choose a shipping address.")
                ship_to = ("", "", "", "", "")
            else:
                ship_to = (a["name"], a["street"], a["city"], a["zip"], a["country"])
        shipping = values.get("shipping", "")
        if shipping not in SHIPPING:
            errors.append("Choose a delivery option.")
        card_choice = values.get("card", "")
        card_id: int | None = None
        if card_choice == "new":
            number = re.sub(r"[\s-]", "", values.get("card_number", ""))
            if not (number.isdigit() and 13 <= len(number) <= 19 and luhn_ok(number)):
                errors.append("The card number is not valid.")
            if not re.fullmatch(r"(0[1-9]|1[0-2])/\d\d", values.get("card_exp", "")):
                errors.append("Expiry must be MM/YY.")
            if not re.fullmatch(r"\d{3,4}", values.get("card_cvc", "")):
                errors.append("CVC must be 3 or 4 digits.")
            if not values.get("card_holder"):
                errors.append("Enter the name on the card.")
        elif card_choice.isdigit() and self.db.one("SELECT id FROM cards WHERE id = ?", (int(card_choice),)):
            card_id = int(card_choice)
        else:
            errors.append("Choose a payment method.")
        short = [l["name"] for l in lines if l["qty"] > l["stock"]]
        if short:
            errors.append("Not enough stock for: " + ", ".join(short))
        if errors:
            values.pop("card_cvc", None)
            return self._checkout_form(lines, values, errors)
        if card_choice == "new":
            number = re.sub(r"[\s-]", "", values["card_number"])
            brand = {"4": "Visa", "5": "Mastercard", "3": "Amex"}.get(number[0], "Card")
            card_id = self.db.insert("INSERT INTO cards (brand, last4, holder, exp, nickname) VALUES (?,?,?,?,?)",
                                      (brand, number[-4:], values["card_holder"], values["card_exp"], f"{brand} {number[-4:]}"))
        if addr == "new" and values.get("save_address"):
            self.db.execute("INSERT INTO addresses (label, name, street, city, zip, country) VALUES (?,?,?,?,?,?)",
                            ("Saved", *ship_to))
        sub = sum(l["qty"] * l["price_cents"] for l in lines)
        ship_cost = 0 if shipping == "standard" and sub >= FREE_SHIPPING_CENTS else SHIPPING[shipping][1]
        number = self._next_number()
        oid = self.db.insert(
            "INSERT INTO orders (number, placed_at, status, ship_name, ship_street, ship_city, ship_zip, ship_country, card_id,"
            " shipping, subtotal_cents, shipping_cents, total_cents) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (number, self.now().strftime("%Y-%m-%d %H:%M"), "placed", *ship_to, card_id, shipping, sub, ship_cost, sub + ship_cost))
        for l in lines:
            self.db.execute("INSERT INTO order_items (order_id, product_id, qty, price_cents) VALUES (?,?,?,?)",
                            (oid, l["product_id"], l["qty"], l["price_cents"]))
            self.db.execute("UPDATE products SET stock = stock - ? WHERE id = ?", (l["qty"], l["product_id"]))
        self.db.execute("DELETE FROM cart_items")
        return RedirectResponse(f"/orders/{oid}?placed=1", status_code=303)

    async def orders(self, request: Request) -> Response:
        rows = self.db.all("SELECT o.*, (SELECT SUM(qty) FROM order_items WHERE order_id = o.id) AS n FROM orders o "
                           "ORDER BY o.placed_at DESC, o.id DESC")
        trs = "".join(f'<tr data-number="{esc(o["number"])}"><td><a href="/orders/{o["id"]}" data-order="{esc(o["number"])}">'
                      f'{esc(o["number"])}</a></td><td>{esc(self._day(o["placed_at"][:10]))}</td>'
                      f'<td>{o["n"]} item(s)</td><td>{self._money(o["total_cents"])}</td><td>{self._status(o["status"])}</td></tr>' for o in rows)
        t = self.t
        return self._page(t("Orders"), f"<h1>{t('Your orders')}</h1><table class='orders'><thead><tr><th>{t('Order')}</th>"
                                       f"<th>{t('Placed')}</th><th>{t('Items')}</th><th>{t('Total')}</th><th>{t('Status')}</th>"
                                       f"</tr></thead><tbody>{trs}</tbody></table>")

    async def order(self, request: Request) -> Response:
        o = self.db.one("SELECT o.*, c.brand, c.last4 FROM orders o JOIN cards c ON c.id = o.card_id WHERE o.id = ?",
                        (request.path_params["oid"],))
        if o is None:
            return self._refused(404, "No such order.")
        items = self.db.all("SELECT oi.*, p.name FROM order_items oi JOIN products p ON p.id = oi.product_id WHERE oi.order_id = ?", (o["id"],))
        trs = "".join(f'<tr><td><a href="/p/{i["product_id"]}">{esc(i["name"])}</a></td><td>{i["qty"]}</td><td>{self._money(i["qty"] * i["price_cents"])}</td></tr>'
                      for i in items)
        modal = ""
        if self.query(request)["placed"]:
            modal = (f'<div class="modal-backdrop" id="placed-modal"><div class="modal" role="dialog" aria-modal="true" aria-labelledby="placed-title">'
                     f'<h2 id="placed-title">Thank you! Your order is placed.</h2><p>Order number <strong id="order-number">{esc(o["number"])}</strong>, '
                     f'total {self._money(o["total_cents"])}, paid with {esc(o["brand"])} ending in {esc(o["last4"])}.</p>'
                     '<p class="row"><button type="button" class="primary" data-close="placed-modal" id="placed-ok">OK</button>'
                     '<a class="button" href="/">Continue shopping</a></p></div></div>')
        if o["status"] in CANCELLABLE:
            action = (f'<form method="post" action="/orders/{o["id"]}/cancel" class="cancel-order">'
                      f'<button type="submit" class="danger" data-action="cancel-order" aria-label="{self.t("Cancel order")} {esc(o["number"])}">'
                      f'{self.t("Cancel order")}</button></form>')
        elif o["status"] == "cancelled":
            action = f'<div class="notice cancelled" role="status">{self.t("This order was cancelled.")}</div>'
        else:
            action = ""
        body = (f'<h1>Order {esc(o["number"])}</h1>{action}<div class="card order" data-number="{esc(o["number"])}" data-status="{esc(o["status"])}">'
                f'<p>Placed {esc(o["placed_at"])} · <strong>{self._status(o["status"])}</strong></p><p>Ship to: {esc(o["ship_name"])}, {esc(o["ship_street"])}, {esc(o["ship_city"])} '
                f'{esc(o["ship_zip"])}, {esc(o["ship_country"])}</p><p>Paid with {esc(o["brand"])} ending in {esc(o["last4"])} · '
                f'{esc(SHIPPING[o["shipping"]][0])}</p><table><thead><tr><th>Product</th><th>Qty</th><th>Total</th></tr></thead>'
                f'<tbody>{trs}</tbody><tfoot><tr><th colspan=2>Shipping</th><td>{self._money(o["shipping_cents"])}</td></tr>'
                f'<tr><th colspan=2>Total</th><th>{self._money(o["total_cents"])}</th></tr></tfoot></table></div>{modal}')
        return self._page(f"Order {o['number']}", body)


    # --- numbers, cancellation, wishlist, reviews ---

    def _next_number(self) -> str:
        """The next order's number: the seed's drawn number at the order count plus one (a task reads it the
        same way); the next free one should a number somehow be taken already."""
        n = self.db.scalar("SELECT COUNT(*) FROM orders") + 1
        while self.db.scalar("SELECT 1 FROM orders WHERE number = ?", (order_number(self.db, n),)):
            n += 1
        return order_number(self.db, n)

    async def order_cancel(self, request: Request) -> Response:
        o = self.db.one("SELECT id, status FROM orders WHERE id = ?", (request.path_params["oid"],))
        if o is None:
            return self._refused(404, "No such order.")
        if o["status"] == "cancelled":
            return self._refused(400, "This order is already cancelled.")
        if o["status"] not in CANCELLABLE:
            return self._refused(400, "This order has already shipped and can no longer be cancelled.")
        self.db.execute("UPDATE orders SET status = 'cancelled', cancelled_at = ? WHERE id = ?", (self._stamp(), o["id"]))
        return RedirectResponse(f"/orders/{o['id']}", status_code=303)

    def _product_id(self, raw: object) -> int | None:
        text = str(raw or "")
        return int(text) if text.isdigit() and self.db.scalar("SELECT 1 FROM products WHERE id = ?", (int(text),)) else None

    async def wishlist(self, request: Request) -> Response:
        rows = self.db.all("SELECT w.product_id, w.added_at, p.* FROM wishlist w JOIN products p ON p.id = w.product_id "
                           "ORDER BY w.added_at DESC, w.product_id")
        t = self.t
        items = "".join(
            f'<li class="wish-item card" data-id="{r["id"]}" data-name="{esc(r["name"])}">'
            f'<a href="/p/{r["id"]}" class="pimg">{_thumb(r, 72)}</a><div class="wish-main">'
            f'<a href="/p/{r["id"]}" class="pname" data-field="name">{esc(r["name"])}</a>'
            f'<div class="price">{self._money(r["price_cents"])}</div>'
            f'<div class="muted">{t("Added {day}").format(day=esc(self._day(r["added_at"][:10])))}</div></div>'
            f'<div class="row wish-actions">'
            + (f'<span class="oos">{t("Out of stock")}</span>' if r["stock"] == 0 else
               f'<form method="post" action="/wishlist/move/{r["id"]}"><button type="submit" class="primary" data-action="move-to-cart" '
               f'aria-label="{t("Move to cart")}: {esc(r["name"])}">{t("Move to cart")}</button></form>')
            + f'<form method="post" action="/wishlist/remove/{r["id"]}"><button type="submit" class="link" data-action="wishlist-remove" '
              f'aria-label="{t("Remove from wishlist")}: {esc(r["name"])}">{t("Remove")}</button></form></div></li>'
            for r in rows)
        body = (f'<h1>{t("Your wishlist")}</h1>' + (f'<ul class="wishlist" aria-label="{t("Wishlist")}">{items}</ul>' if rows else
                                                    f"<p class='empty card'>{t('Your wishlist is empty.')} <a href='/'>{t('Continue shopping')}</a></p>"))
        return self._page(t("Wishlist"), body)

    async def wishlist_add(self, request: Request) -> Response:
        pid = self._product_id((await request.form()).get("product_id"))
        if pid is None:
            return self._refused(404, "No such product.")
        self.db.execute("INSERT OR IGNORE INTO wishlist (product_id, added_at) VALUES (?, ?)", (pid, self._stamp()))
        return RedirectResponse(f"/p/{pid}", status_code=303)

    async def wishlist_remove(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        if self._product_id(pid) is None:
            return self._refused(404, "No such product.")
        on_product = "/p/" in request.headers.get("referer", "")
        self.db.execute("DELETE FROM wishlist WHERE product_id = ?", (pid,))
        return RedirectResponse(f"/p/{pid}" if on_product else "/wishlist", status_code=303)

    async def wishlist_move(self, request: Request) -> Response:
        """One of a wished product into the cart (beside what is there), and off the wishlist."""
        pid = request.path_params["pid"]
        if self._product_id(pid) is None:
            return self._refused(404, "No such product.")
        if not self.db.scalar("SELECT 1 FROM wishlist WHERE product_id = ?", (pid,)):
            return self._refused(404, "That product is not on your wishlist.")
        stock = self.db.scalar("SELECT stock FROM products WHERE id = ?", (pid,))
        if stock <= 0:
            return self._refused(400, "This product is out of stock.")
        self.db.execute("INSERT INTO cart_items (product_id, qty) VALUES (?, 1) "
                        "ON CONFLICT(product_id) DO UPDATE SET qty = MIN(qty + 1, ?)", (pid, stock))
        self.db.execute("DELETE FROM wishlist WHERE product_id = ?", (pid,))
        return RedirectResponse("/wishlist", status_code=303)

    def _review_form(self, p: dict[str, Any], values: dict[str, str], error: str, *, editing: bool, status: int = 200) -> Response:
        t = self.t
        chosen = values.get("stars", "")
        stars = "".join(
            f'<label class="star-choice" data-stars="{n}"><input type="radio" name="stars" value="{n}" required'
            f'{" checked" if chosen == str(n) else ""}> <span aria-hidden="true">{"★" * n}</span> {t(f"{n} star" if n == 1 else f"{n} stars")}</label>'
            for n in range(1, 6))
        err = f"<div class='error' role='alert' data-error='{status}'>{esc(t(error))}</div>" if error else ""
        body = (f'<p class="crumbs"><a href="/p/{p["id"]}">{esc(p["name"])}</a></p>'
                f'<h1>{t("Edit your review") if editing else t("Write a review")}</h1>{err}'
                f'<form method="post" action="/p/{p["id"]}/review" class="card review-form" aria-label="{esc(t("Review of {name}").format(name=p["name"]))}">'
                f'<fieldset class="stars-input"><legend>{t("Your rating")}</legend>{stars}</fieldset>'
                f'<label>{t("Title")} <input type="text" name="title" maxlength="120" required value="{esc(values.get("title", ""))}"></label>'
                f'<label>{t("Review")} <textarea name="body" rows="5" maxlength="4000" required>{esc(values.get("body", ""))}</textarea></label>'
                f'<p class="row"><button type="submit" class="primary" data-action="submit-review">'
                f'{t("Save changes") if editing else t("Submit review")}</button></p></form>')
        return self._page(t("Edit your review") if editing else t("Write a review"), body, status=status)

    async def review(self, request: Request) -> Response:
        """The customer's one review of a product: the form (prefilled once written), and saving it."""
        p = self.db.one("SELECT id, name FROM products WHERE id = ?", (request.path_params["pid"],))
        if p is None:
            return self._refused(404, "No such product.")
        mine = self.db.one("SELECT * FROM reviews WHERE product_id = ? AND author = ?", (p["id"], CUSTOMER))
        if request.method == "GET":
            values = {"stars": str(mine["stars"]), "title": mine["title"], "body": mine["body"]} if mine else {}
            return self._review_form(p, values, "", editing=mine is not None)
        form = await request.form()
        values = {k: str(form.get(k, "")).strip() for k in ("stars", "title", "body")}
        error = ("Choose 1 to 5 stars." if values["stars"] not in ("1", "2", "3", "4", "5") else
                 "Give a title." if not values["title"] else "Write a few words." if not values["body"] else "")
        if error:
            return self._review_form(p, values, error, editing=mine is not None, status=400)
        if mine:
            self.db.execute("UPDATE reviews SET stars = ?, title = ?, body = ?, updated_at = ? WHERE id = ?",
                            (int(values["stars"]), values["title"][:120], values["body"][:4000], self._stamp(), mine["id"]))
        else:
            self.db.execute("INSERT INTO reviews (product_id, author, stars, title, body, created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
                            (p["id"], CUSTOMER, int(values["stars"]), values["title"][:120], values["body"][:4000], self._stamp(), self._stamp()))
        return RedirectResponse(f"/p/{p['id']}#reviews", status_code=303)


APP = ShopApp
