"""Deterministic shop data: ~400 products in 8 categories of uneven size, saved addresses and cards, past orders.

Each category sells a few product kinds, each kind with its own brands, name pattern and price band, so a
power bank costs tens of dollars and a laptop hundreds to a couple of thousand. Prices are skewed toward the
cheap end of their band and end in .99/.95/.49 as store prices do; review counts are long-tailed (most
products have a few dozen, a handful thousands) and ratings cluster around 4.3 with a thin low tail.
"""

from __future__ import annotations

import datetime as dt
import math
import random

from cua.tasks.apps.base import AppDB

#: (product noun, brands, model lines, (low, typical, high) price in dollars, share of the category)
Kind = tuple[str, list[str], list[str], tuple[float, float, float], int]
#: (name, slug, about how many products, kinds)
CATEGORIES: list[tuple[str, str, int, list[Kind]]] = [
    ("Books", "books", 96, [
        ("Novel", ["Penwright", "Harbor Press", "Quill & Co", "Lantern"], [], (9, 16, 29), 5),
        ("Cookbook", ["Harbor Press", "Quill & Co", "Lantern"], [], (14, 27, 45), 2),
        ("Field Guide", ["Lantern", "Penwright", "Harbor Press"], [], (12, 19, 35), 1),
        ("Biography", ["Penwright", "Quill & Co", "Harbor Press"], [], (12, 22, 38), 2),
        ("Atlas", ["Lantern", "Harbor Press"], [], (19, 35, 79), 1),
    ]),
    ("Kitchen", "kitchen", 71, [
        ("Kettle", ["Cookwell", "Brisk", "Maison"], ["Pour", "Rapid", "Stillwater", "Glass"], (19, 39, 129), 3),
        ("Blender", ["Brisk", "Cookwell", "Vortexa"], ["Pulse", "Vortex", "Smoothie", "Power"], (29, 79, 449), 3),
        ("Toaster", ["Cookwell", "Maison", "Brisk"], ["2-Slice", "4-Slice", "Long-Slot", "Retro"], (19, 45, 159), 2),
        ("Coffee Grinder", ["Brisk", "Maison", "Ferro"], ["Burr", "Conical", "Blade"], (19, 49, 299), 2),
        ("Frying Pan", ["Ferro", "Maison", "Cookwell"], ["Cast Iron", "Nonstick", "Carbon Steel", "Tri-Ply"], (17, 35, 149), 3),
        ("Knife Set", ["Ferro", "Maison"], ["5-Piece", "7-Piece", "Chef's", "Block"], (29, 89, 399), 2),
    ]),
    ("Phones", "phones", 58, [
        ("Smartphone", ["Zentek", "Aperture", "Pulse", "Novabook"], ["S", "Edge", "One", "Neo", "Mini"], (149, 549, 1399), 3),
        ("Phone Case", ["Shellguard", "Pulse", "Aperture"], ["Slim", "Rugged", "Clear", "Leather", "Wallet"], (9, 19, 59), 4),
        ("Charger", ["Voltline", "Zentek", "Aperture"], ["20W USB-C", "30W USB-C", "65W GaN", "Dual-Port", "Wireless"], (12, 25, 69), 3),
        ("Power Bank", ["Voltline", "Pulse", "Zentek"], ["5,000 mAh", "10,000 mAh", "20,000 mAh", "MagSafe"], (19, 35, 99), 3),
    ]),
    ("Headphones", "headphones", 47, [
        ("Over-Ear Headphones", ["Sonique", "Auralis", "Bassline"], ["Studio", "ANC", "Quiet", "Monitor"], (39, 149, 549), 3),
        ("Wireless Earbuds", ["Sonique", "Auralis", "Bassline", "Kestrel"], ["Buds", "Air", "Pro", "Sport"], (19, 79, 299), 4),
        ("Gaming Headset", ["Kestrel", "Bassline"], ["Raid", "Arena", "Tactic"], (29, 69, 249), 2),
        ("Wired Earphones", ["Sonique", "Bassline"], ["Classic", "Hi-Res", "Everyday"], (9, 19, 99), 1),
    ]),
    ("Outdoor", "outdoor", 41, [
        ("Tent", ["Trailhead", "Summit", "Northbound"], ["2-Person", "3-Person", "4-Person", "Ultralight"], (79, 199, 649), 2),
        ("Backpack", ["Trailhead", "Northbound", "Summit"], ["28L Daypack", "40L", "55L Trekking", "18L"], (29, 89, 299), 3),
        ("Sleeping Bag", ["Summit", "Northbound"], ["20°F", "35°F", "Down 15°F", "Summer"], (39, 119, 449), 2),
        ("Headlamp", ["Trailhead", "Ferro"], ["300 lm", "450 lm", "Rechargeable", "Trail"], (14, 29, 89), 2),
        ("Water Bottle", ["Northbound", "Ferro", "Trailhead"], ["24 oz", "32 oz", "Insulated 40 oz", "Filter"], (9, 24, 49), 3),
    ]),
    ("Toys", "toys", 33, [
        ("Puzzle", ["Playbrite", "Tinker"], ["500-Piece", "1000-Piece", "300-Piece", "Panorama"], (9, 17, 34), 3),
        ("Building Set", ["Blockworks", "Tinker"], ["Castle", "Space Station", "City Bus", "Dragon"], (14, 49, 199), 3),
        ("Board Game", ["Playbrite", "Lantern"], ["Family", "Strategy", "Party", "Co-op"], (14, 34, 79), 3),
        ("Plush Bear", ["Playbrite", "Tinker"], ["Small", "Large", "Classic"], (9, 19, 49), 1),
        ("Kite", ["Tinker", "Playbrite"], ["Delta", "Stunt", "Diamond"], (9, 19, 59), 1),
    ]),
    ("Office", "office", 29, [
        ("Desk Lamp", ["Deskline", "Ergon"], ["LED", "Architect", "Clamp"], (19, 45, 149), 2),
        ("Office Chair", ["Ergon", "Deskline"], ["Mesh", "Task", "Executive", "Ergonomic"], (89, 249, 899), 2),
        ("Monitor Stand", ["Ergon", "Deskline", "Zentek"], ["Riser", "Dual Arm", "Single Arm"], (19, 49, 179), 2),
        ("Notebook Pack", ["Penwright", "Deskline"], ["3-Pack Ruled", "Dotted", "A5 Hardcover"], (6, 12, 29), 2),
        ("Stapler", ["Deskline", "Penwright"], ["Desktop", "Heavy-Duty", "Mini"], (6, 14, 39), 1),
    ]),
    ("Laptops", "laptops", 22, [
        ("Laptop", ["Zentek", "Aperture", "Novabook", "Kestrel"], ["ProBook 14", "Air 13", "Flex 15", "Vector 16", "Slim 14"], (449, 999, 2499), 3),
        ("Chromebook", ["Zentek", "Novabook"], ["Go 11", "Plus 14", "Duet 10"], (229, 329, 649), 1),
        ("Gaming Laptop", ["Kestrel", "Zentek"], ["Raptor 15", "Nova 17", "Strix 16"], (899, 1499, 2799), 1),
    ]),
]
COLORS = ["Black", "White", "Silver", "Navy", "Red", "Green", "Graphite", "Sand"]
TITLE_A = ["Salt", "Winter", "Quiet", "Northern", "Lost", "Paper", "Iron", "Silver", "Hidden", "Long", "Amber", "Glass",
           "Last", "Wild", "Distant", "Summer", "Broken", "Golden", "Midnight", "Harbor"]
TITLE_B = ["Road", "Garden", "River", "House", "Orchard", "Light", "Season", "Kingdom", "Island", "Letters", "Shore",
           "Machine", "Country", "Station", "Year", "Sky", "Table", "Bridge", "Field", "Voyage"]
SUBJECTS = ["Birds", "Trees", "Mushrooms", "Wildflowers", "Stars", "Seashells", "Butterflies", "Mammals"]
CUISINES = ["Weeknight", "Italian", "Vegetarian", "Baking", "Korean", "Mexican", "One-Pot", "Mediterranean", "Grilling"]
PEOPLE = ["Ada Lovelace", "Marie Curie", "Frederick Douglass", "Nikola Tesla", "Frida Kahlo", "Amelia Earhart",
          "Alan Turing", "Rosalind Franklin", "Ernest Shackleton", "Jane Austen"]
REGIONS = ["World", "Europe", "North America", "the Oceans", "the Night Sky", "Road Trips", "Historical"]
CARDS = [("Visa", "4242", "Alex Morgan", "08/28", "Personal Visa"),
         ("Mastercard", "5454", "Alex Morgan", "11/27", "Work Mastercard"),
         ("Amex", "0005", "Alex Morgan", "03/29", "Travel Amex")]
ADDRESSES = [("Home", "Alex Morgan", "14 Elm Street", "Springfield", "62704", "United States"),
             ("Office", "Alex Morgan", "500 Market Ave, Suite 12", "Springfield", "62701", "United States")]


def _book_title(rng: random.Random, noun: str) -> str:
    if noun == "Cookbook":
        return f"{rng.choice(CUISINES)} {rng.choice(['Kitchen', 'Table', 'Cooking', 'Basics', 'Feasts'])}"
    if noun == "Field Guide":
        return f"Field Guide to {rng.choice(SUBJECTS)} of {rng.choice(['North America', 'the Northeast', 'the Pacific Coast', 'the Rockies', 'Britain'])}"
    if noun == "Biography":
        return f"{rng.choice(PEOPLE)}: {rng.choice(['A Life', 'The Biography', 'The Early Years', 'In Her Own Words', 'A Portrait'])}"
    if noun == "Atlas":
        return f"{rng.choice(['Atlas of', 'Pocket Atlas of', 'Illustrated Atlas of'])} {rng.choice(REGIONS)}"
    return f"The {rng.choice(TITLE_A)} {rng.choice(TITLE_B)}"


def _name(rng: random.Random, brand: str, noun: str, lines: list[str], typical: float) -> str:
    if not lines:  # a book: a title, its publisher is the brand
        return _book_title(rng, noun)
    name = f"{brand} {rng.choice(lines)} {noun}"
    if typical >= 40 and rng.random() < 0.3:  # gadgets and appliances come in generations
        name += f" ({rng.choice(['2nd Gen', '3rd Gen', '2025 Model', '2026 Model'])})"
    return name


def _price_cents(rng: random.Random, band: tuple[float, float, float]) -> int:
    """Log-normal around the band's typical price, kept inside the band, rounded to a charm price."""
    lo, typical, hi = band
    dollars = min(hi, max(lo, rng.lognormvariate(math.log(typical), 0.45)))
    if dollars < 20:
        whole = max(1, round(dollars))
        return whole * 100 - rng.choice([1, 1, 1, 5, 51])  # 12.99, 12.95, 12.49
    if dollars < 200:
        whole = max(10, round(dollars / 5) * 5)
        return whole * 100 - rng.choice([1, 1, 1, 1, 5, 100])  # 34.99, 34.95, 34.00
    whole = round(dollars / 10) * 10
    return whole * 100 - rng.choice([1, 1, 1, 1, 100, 1001])  # 1,299.99, 1,299.00, 1,289.99


def _reviews_and_rating(rng: random.Random) -> tuple[int, float]:
    """Long-tailed review counts; ratings near 4.3 and tighter as reviews pile up."""
    reviews = max(1, int(rng.lognormvariate(3.6, 1.4)))
    spread = 0.9 if reviews < 10 else 0.45 if reviews < 200 else 0.3
    rating = min(5.0, max(1.6, rng.gauss(4.3, spread)))
    return min(reviews, 48000), round(rating, 1)


REVIEWS = [(5, "Exactly what I hoped for", "Well made and arrived quickly. I use it every day."),
           (4, "Good value", "Does the job. A little smaller than the pictures suggest, but fine."),
           (3, "It's okay", "Works, though the finish feels cheaper than the price."),
           (5, "Would buy again", "Second one I've bought; the first lasted years."),
           (2, "Not for me", "Returned it: it did not fit what I needed.")]


#: order numbers drawn ahead beyond the seeded orders: the next ones checkout gives
SPARE_NUMBERS = 64


def order_number(db: AppDB, n: int) -> str:
    """The `n`th order's number (1-based): `SH-` and six digits drawn per seed and unique (table
    `order_numbering`, written by the seed and never changed), so an agent cannot memorise the next
    number, consecutive orders show no step, and a task reads it with SQL (`SELECT number FROM
    order_numbering WHERE n = (SELECT COUNT(*) + 1 FROM orders)`). Past the drawn ones: `SH-9` and `n`."""
    drawn = db.scalar("SELECT number FROM order_numbering WHERE n = ?", (n,))
    return str(drawn) if drawn else f"SH-9{n:07d}"


def seed_shop(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    brand_ids: dict[str, int] = {}
    slots: list[tuple[int, Kind]] = []
    for cat_id, (name, slug, size, kinds) in enumerate(CATEGORIES, start=1):
        db.execute("INSERT INTO categories (id, name, slug) VALUES (?, ?, ?)", (cat_id, name, slug))
        for kind in kinds:
            for b in kind[1]:
                if b not in brand_ids:
                    brand_ids[b] = db.insert("INSERT INTO brands (name) VALUES (?)", (b,))
        count = size + rng.randint(-size // 10, size // 10)
        slots += [(cat_id, kind) for kind in rng.choices(kinds, weights=[k[4] for k in kinds], k=count)]
    rng.shuffle(slots)  # ids do not follow categories, as in a store that added products over years
    names: set[str] = set()
    for cat_id, (noun, brands, lines, band, _) in slots:
        cname = CATEGORIES[cat_id - 1][0]
        brand = rng.choice(brands)
        name = _name(rng, brand, noun, lines, band[1])
        for edition in range(2, 99):  # a small kind can run out of fresh names: a new edition then
            if name not in names:
                break
            name = _name(rng, brand, noun, lines, band[1]) if edition < 30 else f"{name.split(' (')[0]} ({edition}th Edition)"
        names.add(name)
        stock = 0 if rng.random() < 0.1 else min(120, int(rng.expovariate(1 / 25)) + 1)
        color = rng.choice(COLORS)
        reviews, rating = _reviews_and_rating(rng)
        what = f"{noun.lower()} from {brand}" if not lines else f"{noun.lower()}"
        desc = (f"The {name} in {color.lower()} is a {rng.choice(['best-selling', 'new', 'popular', 'highly rated', 'budget-friendly'])} "
                f"{what} in {cname.lower()}. {rng.choice(['Ships in 1-2 days.', 'Free returns within 30 days.', 'Two-year warranty included.'])}")
        db.execute(
            "INSERT INTO products (name, category_id, brand_id, price_cents, rating, reviews, stock, color, description) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            (name, cat_id, brand_ids[brand], _price_cents(rng, band), rating, reviews, stock, color, desc))
    n_products = len(slots)
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
        for pid in rng.sample(range(1, n_products + 1), rng.randint(1, 4)):
            price = db.scalar("SELECT price_cents FROM products WHERE id = ?", (pid,))
            db.execute("INSERT INTO order_items (order_id, product_id, qty, price_cents) VALUES (?,?,?,?)",
                       (oid, pid, rng.choice([1, 1, 1, 2, 3]), price))
        sub = db.scalar("SELECT SUM(qty * price_cents) FROM order_items WHERE order_id = ?", (oid,))
        ship = 0 if sub >= 5000 else 599
        db.execute("UPDATE orders SET subtotal_cents = ?, shipping_cents = ?, total_cents = ? WHERE id = ?", (sub, ship, sub + ship, oid))
    _seed_later(db, rng, now, n_products)


def _seed_later(db: AppDB, rng: random.Random, now: dt.datetime, n_products: int) -> None:
    """What the shop gained later (issues 32 and 38), drawn after everything above so the older data stay
    as they were at every seed: two recent orders not yet shipped, order numbers drawn per seed, a wishlist
    and the customer's own reviews of things delivered."""
    for _ in range(2):
        placed = now - dt.timedelta(hours=rng.randint(2, 40))
        a = ADDRESSES[rng.randint(1, len(ADDRESSES)) - 1]
        oid = db.insert(
            "INSERT INTO orders (number, placed_at, status, ship_name, ship_street, ship_city, ship_zip, ship_country, card_id,"
            " shipping, subtotal_cents, shipping_cents, total_cents) VALUES (?,?,?,?,?,?,?,?,?,?,0,0,0)",
            (f"SH-new-{rng.random()}", placed.strftime("%Y-%m-%d %H:%M"), "processing", a[1], a[2], a[3], a[4], a[5],
             rng.randint(1, len(CARDS)), rng.choice(["standard", "express"])))
        for pid in rng.sample(range(1, n_products + 1), rng.randint(1, 3)):
            price = db.scalar("SELECT price_cents FROM products WHERE id = ?", (pid,))
            db.execute("INSERT INTO order_items (order_id, product_id, qty, price_cents) VALUES (?,?,?,?)",
                       (oid, pid, rng.choice([1, 1, 2]), price))
        sub = db.scalar("SELECT SUM(qty * price_cents) FROM order_items WHERE order_id = ?", (oid,))
        shipping = db.scalar("SELECT shipping FROM orders WHERE id = ?", (oid,))
        ship = 1499 if shipping == "express" else 0 if sub >= 5000 else 599
        db.execute("UPDATE orders SET subtotal_cents = ?, shipping_cents = ?, total_cents = ? WHERE id = ?", (sub, ship, sub + ship, oid))
    ids = [r["id"] for r in db.all("SELECT id FROM orders ORDER BY id")]
    for n, number in enumerate(rng.sample(range(100000, 1000000), len(ids) + SPARE_NUMBERS), start=1):
        db.execute("INSERT INTO order_numbering (n, number) VALUES (?, ?)", (n, f"SH-{number}"))
    for n, oid in enumerate(ids, start=1):
        db.execute("UPDATE orders SET number = ? WHERE id = ?", (order_number(db, n), oid))
    taken = {r["product_id"] for r in db.all("SELECT product_id FROM cart_items")}
    wished = rng.sample([r["id"] for r in db.all("SELECT id FROM products WHERE stock >= 5 ORDER BY id") if r["id"] not in taken], 3)
    for i, pid in enumerate(wished):
        added = now - dt.timedelta(days=rng.randint(2, 60) + 10 * i)
        db.execute("INSERT INTO wishlist (product_id, added_at) VALUES (?, ?)", (pid, added.strftime("%Y-%m-%d %H:%M")))
    delivered = [r["product_id"] for r in db.all(
        "SELECT DISTINCT oi.product_id FROM order_items oi JOIN orders o ON o.id = oi.order_id WHERE o.status = 'delivered' "
        "ORDER BY oi.product_id")]
    for pid, (stars, title, body) in zip(rng.sample(delivered, 2), rng.sample(REVIEWS, 2)):
        when = (now - dt.timedelta(days=rng.randint(1, 9), hours=rng.randint(0, 9))).strftime("%Y-%m-%d %H:%M")
        db.execute("INSERT INTO reviews (product_id, author, stars, title, body, created_at, updated_at) VALUES (?,?,?,?,?,?,?)",
                   (pid, "Alex Morgan", stars, title, body, when, when))
