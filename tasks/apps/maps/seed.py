"""Seeded data for Waypoint: about 300 places on Port Alder's streets (`city`), in 8 districts.

Categories are of uneven size (restaurants of 15 cuisines ~85, cafés ~38, a few cinemas);
names come from several locales' pools; ratings are skewed near 4.2 (a long left tail),
review counts long-tailed (log-normal: most places have dozens, a few thousands); hours fit
the kind of place (bars past midnight, museums closed on Mondays, hotels and some
pharmacies and gas stations open 24 hours); a few places are closed for good. The signed-in
person (Maya Lindqvist) has her lists (Favourites, Want to go and her own, with notes), a
few reviews and suggested edits, and a recent history. Travel times from home, leaving at
the app's clock, are computed once here (`routing.travel_from`) for the place cards."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
from typing import Any

from cua.tasks.apps.base import AppDB
from cua.tasks.apps.maps.city import COLS, DX, DY, EDGES, district_of, edge_between, node_id
from cua.tasks.apps.maps.routing import Spot, travel_from

ME_NAME = "Maya Lindqvist"
#: Where "Home" and "Work" are: a spot on a street block (edge id, metres along it).
HOME = Spot(edge=edge_between(node_id(4, 2), node_id(5, 2)), along=150.0)  # Linden Street, Elm Street to Fir Street
WORK = Spot(edge=edge_between(node_id(10, 6), node_id(11, 6)), along=150.0)  # Rose Lane, Kings Road to Larch Street

CUISINES: dict[str, tuple[int, list[str]]] = {
    "italian": (12, ["Trattoria Bellini", "Osteria del Porto", "Pizzeria Romano", "Nonna Rosa", "Da Marino", "Luna Cucina",
                     "Trattoria Galli", "Il Forno", "Osteria Conti", "Pasta Fresca", "Ristorante Rinaldi", "Pizzeria Vesuvio",
                     "Caffè Greco Ristorante", "La Lanterna", "Bottega Ferri"]),
    "japanese": (8, ["Sakura Ramen", "Kaiseki Tanaka", "Izakaya Hoshi", "Sushi Ren", "Udon Yamato", "Tonkatsu Maru",
                     "Ramen Ichigo", "Kissa Sato", "Hanami Sushi", "Gyoza Bar Kenji"]),
    "indian": (8, ["Masala House", "Bombay Tiffin", "Patel's Kitchen", "Saffron Tandoor", "Chennai Dosa Corner", "Lotus Biryani",
                   "Kerala Spice", "Punjab Grill", "Chai & Chaat", "Mumbai Street"]),
    "mexican": (7, ["Taquería El Sol", "Casa Fernández", "La Cantina Verde", "Tacos Don Chuy", "Mole y Mezcal",
                    "El Comal", "Tortillería Luna", "Burrito Norte"]),
    "thai": (6, ["Baan Thai", "Krua Siam", "Thai Orchid", "Som Tam Corner", "Bangkok Noodle Bar", "Lemongrass", "Chiang Mai Kitchen"]),
    "chinese": (7, ["Golden Dragon", "Jade Garden", "Dumpling House Wu", "Sichuan Pepper", "Canton Roast", "Noodle Street Li",
                    "Lucky Bamboo", "Shanghai Soup Bar"]),
    "french": (5, ["Chez Margaux", "Bistro Dubois", "Le Petit Quai", "Brasserie Moreau", "Café de la Gare", "La Crêperie"]),
    "vietnamese": (5, ["Phở Saigon", "Bánh Mì Nguyen", "Hanoi Corner", "Lotus Pho", "Little Hue", "Bún Bò Kitchen"]),
    "lebanese": (4, ["Cedar Grill", "Beirut Mezze", "Haddad's Kitchen", "Zaatar Bakery & Grill", "Byblos"]),
    "greek": (4, ["Taverna Papadopoulos", "Olive & Fig", "Mykonos Grill", "Souvlaki Stop", "Kafeneio Athena"]),
    "korean": (4, ["Seoul Kitchen", "Bibimbap House Kim", "Gangnam BBQ", "Kimchi Table", "Hanok"]),
    "american": (6, ["Harbour Burger Co.", "The Diner on Quay", "Smokehouse 29", "Liberty Grill", "Blue Plate Diner",
                     "Brooklyn Slice", "The Chop House"]),
    "spanish": (3, ["Tapas Costa", "La Bodega Silva", "Casa Iberia", "El Rincón"]),
    "turkish": (4, ["Anatolia Kebab", "Yilmaz Grill", "Istanbul Meze", "Pide House", "Bosphorus"]),
    "ethiopian": (2, ["Abyssinia", "Mesob Ethiopian Kitchen", "Lalibela"]),
}

#: category -> (count, name prefixes, name suffixes, fixed names)
CATEGORIES: dict[str, tuple[int, list[str], list[str], list[str]]] = {
    "cafe": (38, ["Ember", "Juniper", "Copper", "Harbour", "Little", "Northern", "Tidal", "Saltwater", "Linden", "Morning",
                  "Oak", "Fika", "Lantern", "Kettle", "Anchor", "Meridian", "Pebble", "Sparrow"],
             ["Coffee", "Café", "Roasters", "Espresso Bar", "Coffee House"],
             ["Café Lindgren", "Kaffeehaus Weber", "Café Novak", "Kissaten Mori", "Café Okafor", "Caffè Costa"]),
    "bar": (20, ["The Rusty", "The Crooked", "The Salty", "The Golden", "The Old", "The Velvet", "The Drunken", "The Copper"],
            ["Anchor", "Lantern", "Fox", "Heron", "Barrel", "Oyster", "Owl", "Mast"],
            ["Bar Berg", "Bodega 12", "Kneipe Schmidt", "Vinoteca Ferrari", "Cervecería Silva"]),
    "bakery": (14, ["Rye", "Golden Crust", "Flour", "Sourdough", "Crumb", "Levain", "Butter", "Oven"],
               ["Bakery", "Bakehouse", "Bread Co."],
               ["Bäckerei Jansen", "Boulangerie Dubois", "Panadería Costa", "Piekarnia Kowalski", "Bageri Berg"]),
    "pharmacy": (16, [], [], ["Linden Pharmacy", "Harbour Chemist", "Nightingale Pharmacy", "Green Cross Pharmacy",
                              "Farmacia Soler", "Apotheke Weber", "Okafor Family Pharmacy", "Bayside Pharmacy", "MediCo Pharmacy",
                              "Market Street Pharmacy", "CarePlus Pharmacy Old Town", "CarePlus Pharmacy Riverside",
                              "CarePlus Pharmacy Eastbank", "Riverbend Chemist", "Northgate Apothecary", "University Pharmacy",
                              "Quay Pharmacy", "Dock Avenue Drugstore", "Wellspring Pharmacy"]),
    "museum": (9, [], [], ["Port Alder Maritime Museum", "Museum of Modern Art Port Alder", "Alder Natural History Museum",
                           "Old Town Heritage House", "Lindqvist Photography Gallery", "Museum of Trams", "Harbour Lighthouse Museum",
                           "University Science Museum", "Textile Mill Museum", "Toy Museum Novak"]),
    "hotel": (15, [], [], ["Hotel Alder", "The Quayside Hotel", "Harbour View Inn", "Grand Hotel Market", "Linden Boutique Hotel",
                           "Hotel Moreau", "Riverside Suites", "Northgate Lodge", "The Mill House Hotel", "Eastbank Hostel",
                           "Hotel Sakura", "Casa Costa Guesthouse", "University Inn", "The Anchor Hotel", "Pension Weber",
                           "Station Hotel"]),
    "gas": (10, [], [], ["Northline Fuel Ash Avenue", "Northline Fuel Harbour", "Bayshore Gas", "QuickFill Dock Avenue",
                         "QuickFill Eastbank", "Alder Petrol", "Greenfield Service Station", "Juniper Fuel Stop",
                         "Nord Avenue Gas & Go", "Riverside Fuel"]),
    "park": (14, [], [], ["Linden Park", "Harbour Green", "Mill Pond Park", "Greenfield Commons", "Rose Garden", "Alder Riverside Walk",
                          "University Arboretum", "Chapel Square", "Eastbank Playground", "Juniper Meadow", "Old Fort Park",
                          "Market Square Gardens", "Quay Sculpture Park", "Birch Woods", "Lighthouse Point"]),
    "supermarket": (18, [], [], ["FreshMart Old Town", "FreshMart Harbour", "FreshMart Greenfield", "Alder Co-op", "Co-op Eastbank",
                                 "Nordkauf Riverside", "Nordkauf Northgate", "Mercado Costa", "Asia Market Wu", "Organic Basket",
                                 "ValueGrocer Quay", "ValueGrocer University Hill", "Corner Store Novak", "Halal Market Haddad",
                                 "Green Grocer Patel", "Deli Weber", "Farmers Hall", "Night & Day Mini Market", "Spar Market Street"]),
    "bookstore": (8, [], [], ["Lindqvist & Daughters Books", "Chapter & Verse", "The Harbour Bookshop", "Librería Fernández",
                              "Second Story Books", "University Bookstore", "Comics Corner", "Buchhandlung Schmidt", "The Reading Room"]),
    "gym": (10, [], [], ["IronWorks Gym", "Pulse Fitness Old Town", "Pulse Fitness Harbour", "Alder Climbing Wall", "Yoga Loft",
                         "Harbour Boxing Club", "CityFit 24", "Riverside Pool & Gym", "Pilates Studio Moreau", "Northgate Athletic Club"]),
    "bank": (9, [], [], ["Alder Savings Bank", "Harbour Credit Union", "Northline Bank Market Street", "Northline Bank Eastbank",
                         "First Port Bank", "Coastal Trust", "Alder Savings Riverside", "Union Bank Greenfield", "Pacific Mutual"]),
    "cinema": (4, [], [], ["Roxy Cinema", "Harbour Picturehouse", "Cineplex Alder", "The Lumière"]),
    "library": (4, [], [], ["Central Library", "Greenfield Library", "University Library", "Eastbank Library"]),
    "hospital": (2, [], [], ["Port Alder General Hospital", "St. Brigid's Hospital"]),
    "florist": (6, [], [], ["Bloom & Stem", "Fleurs Moreau", "The Flower Barrow", "Petal Street", "Tulip & Thorn", "Blumen Jansen"]),
    "hardware": (5, [], [], ["Alder Hardware", "Fix-It Depot", "Nails & Bolts", "Handy Harbour", "Werkzeug Novak"]),
}

FIRST_NAMES = ["Astrid", "Kenji", "Amara", "Luca", "Sofia", "Mateo", "Priya", "Jonas", "Chloé", "Tomás", "Aiko", "Noah", "Fatima",
               "Lars", "Mei", "Olusegun", "Ines", "Dmitri", "Hana", "Elif", "Sean", "Greta", "Rafael", "Yuki", "Zanele",
               "Camille", "Pedro", "Anja", "Omar", "Freya", "Vikram", "Lucía", "Kofi", "Marta", "Ji-woo", "Emma", "Mohammed"]
PRAISE = {
    "restaurant": ["The food was excellent and came quickly.", "Generous portions, fair prices.", "Lovely staff, we will be back.",
                   "Best {c} food in the neighbourhood.", "Booked for a birthday: great evening.", "A bit loud on Fridays."],
    "cafe": ["Great flat white and friendly baristas.", "Good place to work for an hour.", "The cardamom buns are worth the queue.",
             "Cosy, but seats are hard to find at lunch."],
    "bar": ["Good cocktails, relaxed crowd.", "Nice selection of local beers.", "Live music on Thursdays."],
    "bakery": ["The sourdough is fantastic.", "Come early: the croissants sell out.", "Friendly and quick."],
    "pharmacy": ["Helpful pharmacist, quick with prescriptions.", "Always a queue at lunchtime.", "They had what I needed."],
    "museum": ["Worth a whole afternoon.", "Great exhibits for kids.", "Small but well curated."],
    "hotel": ["Clean rooms and a good breakfast.", "Quiet at night, helpful reception.", "Great location, small rooms."],
    "park": ["Lovely for a morning run.", "Great playground.", "Busy on sunny weekends."],
}
GENERIC = ["Friendly service.", "Would recommend.", "Does what it says.", "Convenient location.", "Okay, nothing special.",
           "Staff were very helpful."]
COMPLAINTS = ["Slow service this time.", "Overpriced for what you get.", "Not as good as it used to be.", "Rude staff, sadly."]

LISTS = [("Favourites", "favourites", "Places I love"), ("Want to go", "want_to_go", "Places to try"),
         ("Date night", "custom", "Evenings out"), ("Brunch with the kids", "custom", "Weekend mornings"),
         ("Visitors from out of town", "custom", "To show friends and family")]
NOTES = ["Ask for the window table", "Book ahead on Fridays", "Try the tasting menu", "Kids eat free on Sundays",
         "Sam's recommendation", "Good before a film", "Cash only", "Outdoor seating in summer", "Parking behind the building"]


def _hours(cat: str, rng: random.Random) -> list[tuple[int, int, int]]:
    """(weekday, opens, closes) in minutes after midnight; a close past midnight is > 1440."""
    def every(days: range | list[int], o: int, c: int) -> list[tuple[int, int, int]]:
        return [(d, o, c) for d in days]
    week, sat, sun = range(5), [5], [6]
    pick = rng.choice
    if cat in ("hotel", "hospital") or (cat in ("pharmacy", "gas", "gym") and rng.random() < (0.2 if cat == "pharmacy" else 0.3)):
        return every(range(7), 0, 1440)
    if cat == "cafe":
        out = every(week, pick([390, 420, 450, 480]), pick([1020, 1080, 1140])) + every(sat, 480, 1080)
        return out + ([] if rng.random() < 0.2 else every(sun, 540, 960))
    if cat == "restaurant":
        o, c = pick([690, 720, 720, 1020]), pick([1320, 1350, 1380])
        days = [d for d in range(7) if not (d == 0 and rng.random() < 0.4)] if rng.random() < 0.8 else list(range(1, 7))
        return every(days, o, c)
    if cat == "bar":
        o, c = pick([960, 1020, 1080]), pick([1440, 1500, 1560])
        return every([d for d in range(7) if not (d in (0, 6) and rng.random() < 0.5)], o, c)
    if cat == "bakery":
        return every([d for d in range(6) if not (d == 0 and rng.random() < 0.3)], pick([390, 420]), 1080) + every(sun, 420, 780)
    if cat == "pharmacy":
        out = every(week, pick([480, 480, 510, 540, 570]), pick([1140, 1200, 1260])) + every(sat, 540, 1080)
        return out + (every(sun, 600, 960) if rng.random() < 0.3 else [])
    if cat == "museum":
        out = every([1, 2, 4, 5, 6], 600, 1080) + every([3], 600, 1260)
        return out if rng.random() < 0.8 else out + every([0], 600, 1080)
    if cat in ("gas", "park"):
        return every(range(7), pick([360, 420]), 1320) if rng.random() < 0.7 else every(range(7), 0, 1440)
    if cat == "supermarket":
        return every(range(6), 420, 1320) + (every(sun, 540, 1200) if rng.random() < 0.6 else [])
    if cat in ("bookstore", "florist"):
        return every([d for d in range(6) if not (d == 0 and rng.random() < 0.3)], 600, 1140)
    if cat == "gym":
        return every(week, 360, 1320) + every([5, 6], 480, 1200)
    if cat == "bank":
        return every(week, 570, 990)
    if cat == "cinema":
        return every(range(7), 720, 1440)
    if cat == "library":
        return every([d for d in range(4) if not (d == 0 and rng.random() < 0.5)], 600, 1200) + every([4, 5], 600, 1080)
    return every(range(6), 480, 1140) + every(sun, 600, 960)  # hardware


def _rating(rng: random.Random) -> float:
    return round(min(4.9, max(2.3, 4.9 - rng.lognormvariate(math.log(0.7), 0.5))), 1)


def _review_count(cat: str, rng: random.Random) -> int:
    median = {"hotel": 600, "museum": 900, "park": 700, "restaurant": 160, "cafe": 120, "hospital": 1400}.get(cat, 60)
    return max(1, int(rng.lognormvariate(math.log(median), 1.2)))


def _names(cat: str, count: int, rng: random.Random, taken: set[str]) -> list[str]:
    _, prefixes, suffixes, fixed = CATEGORIES[cat]
    pool = list(fixed) + [f"{p} {s}" for p in prefixes for s in suffixes]
    rng.shuffle(pool)
    out = [n for n in pool if n not in taken][:count]
    taken.update(out)
    return out


def _address(edge: int, along: float, rng: random.Random) -> str:
    e = EDGES[edge]
    row_street = e.b == e.a + 1
    start = (e.a % COLS) * DX if row_street else (e.a // COLS) * DY
    number = max(1, int((start + along) / 8)) * 2 + (1 if rng.random() < 0.5 else 0)
    return f"{number} {e.street}"


def _phone(rng: random.Random, used: set[str]) -> str:
    while True:
        phone = f"+1 207-555-{rng.randint(100, 9999):04d}"
        if phone not in used:
            used.add(phone)
            return phone


def seed_maps(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    usable = [e.id for e in EDGES if e.kind != "highway"]
    taken: set[str] = set()
    phones: set[str] = set()
    plan: list[tuple[str, str, str]] = []  # (category, cuisine, name)
    for cuisine, (count, names) in CUISINES.items():
        pool = names[:]
        rng.shuffle(pool)
        for name in pool[:count]:
            taken.add(name)
            plan.append(("restaurant", cuisine, name))
    for cat, (count, *_rest) in CATEGORIES.items():
        plan += [(cat, "", n) for n in _names(cat, count, rng, taken)]
    rng.shuffle(plan)
    spots: dict[int, Spot] = {}
    for cat, cuisine, name in plan:
        edge = rng.choice(usable)
        along = round(EDGES[edge].length * rng.uniform(0.12, 0.88), 1)
        spot = Spot(edge, along)
        x, y = spot.xy
        closed = "open"
        if cat not in ("hotel", "park", "hospital", "library"):
            roll = rng.random()
            closed = "permanently_closed" if roll < 0.045 else "temporarily_closed" if roll < 0.06 else "open"
        price = 0
        if cat in ("restaurant", "bar"):
            price = rng.choices([1, 2, 3, 4], [20, 45, 25, 10])[0]
        elif cat in ("cafe", "bakery"):
            price = rng.choices([1, 2], [55, 45])[0]
        elif cat == "hotel":
            price = rng.choices([2, 3, 4], [40, 40, 20])[0]
        count = _review_count(cat, rng)
        pid = db.insert(
            "INSERT INTO places (name, category, cuisine, district, address, x, y, edge, along, phone, price_level, rating, "
            "review_count, photo_count, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (name, cat, cuisine, district_of(x, y), _address(edge, along, rng), round(x, 1), round(y, 1), edge, along,
             _phone(rng, phones), price, _rating(rng), count, min(count, max(1, int(rng.lognormvariate(2.2, 0.9)))), closed))
        spots[pid] = spot
        for weekday, opens, closes in _hours(cat, rng):
            db.execute("INSERT INTO hours (place_id, weekday, opens, closes) VALUES (?,?,?,?)", (pid, weekday, opens, closes))
        _reviews(db, rng, now, pid, cat, cuisine, count)
    _mine(db, rng, now)
    _lists(db, rng, now)
    _history(db, rng)
    for pid, modes in travel_from(HOME, spots, weekday=now.weekday(), minute=now.hour * 60 + now.minute).items():
        for mode, r in modes.items():
            db.execute("INSERT INTO travel_times (place_id, origin, mode, distance_m, duration_s, minutes, rides) VALUES (?,?,?,?,?,?,?)",
                       (pid, "home", mode, round(r.distance_m), round(r.duration_s), r.minutes, r.rides))


def _reviews(db: AppDB, rng: random.Random, now: dt.datetime, pid: int, cat: str, cuisine: str, count: int) -> None:
    rating = float(db.scalar("SELECT rating FROM places WHERE id = ?", (pid,)))
    shown = min(count, 1 + int(rng.lognormvariate(math.log(3), 0.5)), 8)
    for _ in range(shown):
        stars = max(1, min(5, round(rng.gauss(rating, 0.9))))
        if stars <= 2:
            body = rng.choice(COMPLAINTS)
        else:
            body = rng.choice(PRAISE.get(cat, GENERIC) + GENERIC[:2]).replace("{c}", cuisine.title())
        when = now - dt.timedelta(days=rng.randint(1, 720), minutes=rng.randint(0, 1400))
        author = f"{rng.choice(FIRST_NAMES)} {rng.choice('ABCDEFGHJKLMNOPRSTVWZ')}."
        db.execute("INSERT INTO reviews (place_id, author, stars, body, created_at, mine) VALUES (?,?,?,?,?,0)",
                   (pid, author, stars, body, when.strftime("%Y-%m-%d %H:%M")))


def _mine(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    """A few reviews and suggested edits of my own."""
    places = [r["id"] for r in db.all("SELECT id FROM places WHERE category IN ('restaurant', 'cafe', 'bakery', 'museum', 'park') "
                                      "AND status = 'open' ORDER BY id")]
    for pid in rng.sample(places, 6):
        when = now - dt.timedelta(days=rng.randint(3, 300))
        cat = db.scalar("SELECT category FROM places WHERE id = ?", (pid,))
        db.execute("INSERT INTO reviews (place_id, author, stars, body, created_at, mine) VALUES (?,?,?,?,?,1)",
                   (pid, ME_NAME, rng.choice([3, 4, 4, 5, 5]), rng.choice(PRAISE.get(cat, GENERIC)).replace("{c}", "local"),
                    when.strftime("%Y-%m-%d %H:%M")))
    pid = rng.choice(places)
    db.execute("INSERT INTO pending_edits (place_id, field, weekday, opens, closes, closed, phone, note, status, submitted_at) "
               "VALUES (?, 'phone', NULL, NULL, NULL, 0, ?, 'Number on their door', 'applied', ?)",
               (pid, db.scalar("SELECT phone FROM places WHERE id = ?", (pid,)),
                (now - dt.timedelta(days=40)).strftime("%Y-%m-%d %H:%M")))


def _lists(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    eat = [r["id"] for r in db.all("SELECT id FROM places WHERE category IN ('restaurant', 'cafe', 'bar', 'bakery') "
                                   "AND status = 'open' ORDER BY id")]
    rng.shuffle(eat)
    for status, least in (("permanently_closed", 4), ("temporarily_closed", 1)):  # Want to go holds both kinds
        while db.scalar("SELECT COUNT(*) FROM places WHERE status = ?", (status,)) < least:
            db.execute("UPDATE places SET status = ? WHERE id = ?", (status, eat.pop()))
    paused = [r["id"] for r in db.all("SELECT id FROM places WHERE status = 'temporarily_closed' ORDER BY id")]
    gone = [r["id"] for r in db.all("SELECT id FROM places WHERE status = 'permanently_closed' ORDER BY id")]
    other = [r["id"] for r in db.all("SELECT id FROM places WHERE category IN ('museum', 'park', 'cinema', 'bookstore') "
                                     "AND status = 'open' ORDER BY id")]
    rng.shuffle(gone)
    members = {"Favourites": eat[:9] + other[:2], "Want to go": eat[9:22] + gone[:3] + paused[:1] + other[2:4],
               "Date night": eat[22:28], "Brunch with the kids": eat[28:32] + other[4:5],
               "Visitors from out of town": other[5:9] + eat[32:35] + gone[3:4]}
    for name, kind, description in LISTS:
        lid = db.insert("INSERT INTO lists (name, kind, description, created_at) VALUES (?,?,?,?)",
                        (name, kind, description, (now - dt.timedelta(days=rng.randint(60, 600))).strftime("%Y-%m-%d %H:%M")))
        picked = members[name]
        rng.shuffle(picked)
        for pid in picked:
            note = rng.choice(NOTES) if rng.random() < (0.6 if kind == "custom" else 0.2) else ""
            db.execute("INSERT INTO list_items (list_id, place_id, note, added_at) VALUES (?,?,?,?)",
                       (lid, pid, note, (now - dt.timedelta(days=rng.randint(1, 400))).strftime("%Y-%m-%d %H:%M")))


def _history(db: AppDB, rng: random.Random) -> None:
    queries = ["coffee", "pharmacy", "ramen", "parks near me", "hardware store", "thai", "museum", "bakery open sunday"]
    rng.shuffle(queries)
    places = [r["id"] for r in db.all("SELECT id FROM places WHERE status = 'open' ORDER BY id")]
    entries: list[dict[str, Any]] = [{"kind": "search", "q": q} for q in queries[:5]]
    entries.insert(2, {"kind": "directions", "from": "home", "to": str(rng.choice(places)), "mode": "transit"})
    db.execute("INSERT INTO history (id, entries) VALUES (1, ?)", (json.dumps(entries),))
