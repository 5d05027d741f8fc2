"""Deterministic shop data: ~400 products in 8 categories, saved addresses and cards, past orders."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

CATEGORIES: list[tuple[str, str, list[str], list[str]]] = [
    # (name, slug, brands, product nouns)
    ("Laptops", "laptops", ["Aperture", "Zentek", "Novabook", "Kestrel"], ["Laptop", "Ultrabook", "Notebook", "Chromebook"]),
    ("Headphones", "headphones", ["Sonique", "Auralis", "Bassline", "Kestrel"], ["Headphones", "Earbuds", "Headset", "Earphones"]),
    ("Kitchen", "kitchen", ["Cookwell", "Ferro", "Maison", "Brisk"], ["Kettle", "Blender", "Toaster", "Coffee Grinder", "Frying Pan", "Knife Set"]),
    ("Books", "books", ["Penwright", "Harbor Press", "Quill & Co", "Lantern"], ["Novel", "Cookbook", "Field Guide", "Atlas", "Biography"]),
    ("Outdoor", "outdoor", ["Trailhead", "Summit", "Ferro", "Northbound"], ["Tent", "Backpack", "Sleeping Bag", "Headlamp", "Water Bottle"]),
    ("Office", "office", ["Deskline", "Zentek", "Penwright", "Ergon"], ["Desk Lamp", "Office Chair", "Notebook Pack", "Monitor Stand", "Stapler"]),
    ("Toys", "toys", ["Playbrite", "Blockworks", "Tinker", "Lantern"], ["Puzzle", "Building Set", "Board Game", "Plush Bear", "Kite"]),
    ("Phones", "phones", ["Zentek", "Aperture", "Pulse", "Novabook"], ["Smartphone", "Phone Case", "Charger", "Power Bank"]),
]
ADJECTIVES = ["Classic", "Pro", "Lite", "Max", "Mini", "Eco", "Plus", "Air", "Ultra", "Essential", "Deluxe", "Compact",
              "Travel", "Studio", "Sport"]
COLORS = ["Black", "White", "Silver", "Navy", "Red", "Green", "Graphite", "Sand"]
BASE_PRICE = {"laptops": (399, 2399), "headphones": (19, 399), "kitchen": (15, 249), "books": (8, 45),
              "outdoor": (12, 499), "office": (6, 399), "toys": (9, 129), "phones": (12, 1199)}
CARDS = [("Visa", "4242", "Alex Morgan", "08/28", "Personal Visa"),
         ("Mastercard", "5454", "Alex Morgan", "11/27", "Work Mastercard"),
         ("Amex", "0005", "Alex Morgan", "03/29", "Travel Amex")]
ADDRESSES = [("Home", "Alex Morgan", "14 Elm Street", "Springfield", "62704", "United States"),
             ("Office", "Alex Morgan", "500 Market Ave, Suite 12", "Springfield", "62701", "United States")]


def seed_shop(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    brand_ids: dict[str, int] = {}
    for cat_id, (name, slug, brands, _) in enumerate(CATEGORIES, start=1):
        db.execute("INSERT INTO categories (id, name, slug) VALUES (?, ?, ?)", (cat_id, name, slug))
        for b in brands:
            if b not in brand_ids:
                brand_ids[b] = db.insert("INSERT INTO brands (name) VALUES (?)", (b,))
    names: set[str] = set()
    for i in range(400):
        cat_id = i % len(CATEGORIES) + 1
        cname, slug, brands, nouns = CATEGORIES[cat_id - 1]
        brand = rng.choice(brands)
        while True:
            name = f"{brand} {rng.choice(ADJECTIVES)} {rng.choice(nouns)}"
            if rng.random() < 0.5:
                name += f" {rng.randint(2, 9)}{rng.choice(['', '0', 'X', 'S'])}"
            if name not in names:
                break
        names.add(name)
        lo, hi = BASE_PRICE[slug]
        price = int(rng.uniform(lo, hi)) * 100 + rng.choice([0, 49, 95, 99])
        stock = 0 if rng.random() < 0.1 else rng.randint(1, 80)
        color = rng.choice(COLORS)
        desc = (f"The {name} in {color.lower()} is a {rng.choice(['best-selling', 'new', 'popular', 'highly rated', 'budget-friendly'])} "
                f"choice in {cname.lower()}. {rng.choice(['Ships in 1-2 days.', 'Free returns within 30 days.', 'Two-year warranty included.'])}")
        db.execute(
            "INSERT INTO products (name, category_id, brand_id, price_cents, rating, reviews, stock, color, description) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (name, cat_id, brand_ids[brand], price, round(rng.uniform(2.5, 5.0), 1), rng.randint(0, 2400), stock, color, desc))
    # A cart left over from an earlier visit: agents must notice it before checking out.
    leftover = rng.choice([r["id"] for r in db.all("SELECT id FROM products WHERE stock >= 5 ORDER BY id")])
    db.execute("INSERT INTO cart_items (product_id, qty) VALUES (?, 1)", (leftover,))
    for label, holder, street, city, zip_code, country in ADDRESSES:
        db.execute("INSERT INTO addresses (label, name, street, city, zip, country) VALUES (?,?,?,?,?,?)",
                   (label, holder, street, city, zip_code, country))
    for brand, last4, holder, exp, nickname in CARDS:
        db.execute("INSERT INTO cards (brand, last4, holder, exp, nickname) VALUES (?,?,?,?,?)", (brand, last4, holder, exp, nickname))
    for n in range(14):
        placed = now - dt.timedelta(days=rng.randint(3, 300), hours=rng.randint(0, 12))
        addr = rng.randint(1, len(ADDRESSES))
        card = rng.randint(1, len(CARDS))
        a = ADDRESSES[addr - 1]
        oid = db.insert(
            "INSERT INTO orders (number, placed_at, status, ship_name, ship_street, ship_city, ship_zip, ship_country, card_id,"
            " shipping, subtotal_cents, shipping_cents, total_cents) VALUES (?,?,?,?,?,?,?,?,?,?,0,0,0)",
            (f"SH-{rng.randint(100000, 999999)}", placed.strftime("%Y-%m-%d %H:%M"),
             "delivered" if placed < now - dt.timedelta(days=10) else "shipped", a[1], a[2], a[3], a[4], a[5], card,
             "standard"))
        for pid in rng.sample(range(1, 401), rng.randint(1, 4)):
            price = db.scalar("SELECT price_cents FROM products WHERE id = ?", (pid,))
            db.execute("INSERT INTO order_items (order_id, product_id, qty, price_cents) VALUES (?,?,?,?)",
                       (oid, pid, rng.choice([1, 1, 1, 2, 3]), price))
        sub = db.scalar("SELECT SUM(qty * price_cents) FROM order_items WHERE order_id = ?", (oid,))
        ship = 0 if sub >= 5000 else 599
        db.execute("UPDATE orders SET subtotal_cents = ?, shipping_cents = ?, total_cents = ? WHERE id = ?", (sub, ship, sub + ship, oid))
