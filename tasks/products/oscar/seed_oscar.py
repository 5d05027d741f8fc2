# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
"""Fill a migrated Oscar database with seed N's shop, through Oscar's own models (run under
the Oscar venv by build.py: `python seed_oscar.py SEED`, with $CUA_OSCAR_DATA naming the
instance folder whose shop.db it writes).

Fernhill Outfitters, an outdoor gear shop: a category tree, 300+ products of five product
classes with typed attributes, parent products with size/colour variants, one partner's
stock records with GBP prices, customers with addresses and past orders (placed through
Oscar's OrderCreator, moved along the status pipeline: Oscar's status history), staff
with dashboard access, vouchers and a site offer, shipping methods, and reviews."""

from __future__ import annotations

import datetime as dt
import os
import random
import sys
from decimal import Decimal

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "cua_oscar_site.settings")
django.setup()

from django.contrib.auth.models import Permission  # noqa: E402
from django.contrib.sites.models import Site  # noqa: E402
from django.db import transaction  # noqa: E402
from oscar.apps.address.models import Country, UserAddress  # noqa: E402
from oscar.apps.basket.models import Basket  # noqa: E402
from oscar.apps.catalogue.categories import create_from_breadcrumbs  # noqa: E402
from oscar.apps.catalogue.models import Product, ProductAttribute, ProductCategory, ProductClass  # noqa: E402
from oscar.apps.catalogue.reviews.models import ProductReview  # noqa: E402
from oscar.apps.checkout.calculators import OrderTotalCalculator  # noqa: E402
from oscar.apps.offer.models import Benefit, Condition, ConditionalOffer, Range  # noqa: E402
from oscar.apps.order.models import Order, OrderStatusChange, ShippingAddress  # noqa: E402
from oscar.apps.order.utils import OrderCreator  # noqa: E402
from oscar.apps.partner.models import Partner, StockRecord  # noqa: E402
from oscar.apps.partner.strategy import Default  # noqa: E402
from oscar.apps.shipping.models import OrderAndItemCharges  # noqa: E402
from oscar.apps.voucher.models import Voucher  # noqa: E402
from oscar.core.compat import get_user_model  # noqa: E402

User = get_user_model()
PASSWORD = "fernhill-2026"
EPOCH = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.timezone.utc)

CATEGORIES = {
    "Jackets": "Clothing > Jackets", "Fleeces": "Clothing > Fleeces", "Trousers": "Clothing > Trousers",
    "Base layers": "Clothing > Base layers", "Walking boots": "Footwear > Walking boots",
    "Trail shoes": "Footwear > Trail shoes", "Socks": "Footwear > Socks", "Tents": "Camping > Tents",
    "Sleeping bags": "Camping > Sleeping bags", "Stoves": "Camping > Cooking > Stoves",
    "Cookware": "Camping > Cooking > Cookware", "Daypacks": "Packs > Daypacks", "Rucksacks": "Packs > Rucksacks",
    "Headtorches": "Accessories > Headtorches", "Navigation": "Accessories > Navigation",
    "Water bottles": "Accessories > Water bottles",
}
CLASSES = {  # class: (categories, attributes (code, name, type), variant axis)
    "Clothing": (["Jackets", "Fleeces", "Trousers", "Base layers"],
                 [("material", "Material", "text"), ("waterproof", "Waterproof", "boolean"),
                  ("weight_g", "Weight (g)", "integer")], "size"),
    "Footwear": (["Walking boots", "Trail shoes", "Socks"],
                 [("material", "Material", "text"), ("waterproof", "Waterproof", "boolean"),
                  ("weight_g", "Weight (g)", "integer")], "size"),
    "Camping": (["Tents", "Sleeping bags", "Stoves", "Cookware"],
                [("weight_g", "Weight (g)", "integer"), ("season", "Season rating", "text"),
                 ("capacity", "Capacity", "text")], None),
    "Packs": (["Daypacks", "Rucksacks"],
              [("volume_l", "Volume (litres)", "integer"), ("weight_g", "Weight (g)", "integer"),
               ("material", "Material", "text")], None),
    "Accessories": (["Headtorches", "Navigation", "Water bottles"],
                    [("weight_g", "Weight (g)", "integer"), ("material", "Material", "text")], None),
}
BRANDS = ["Cairnline", "Northfell", "Tarnwood", "Scree & Co", "Ridgeway", "Brackenhill", "Lowmoor", "Pikestaff"]
NOUNS = {
    "Jackets": ["Storm Shell", "Insulated Jacket", "Softshell", "Down Jacket", "Rain Jacket"],
    "Fleeces": ["Grid Fleece", "Half-Zip Fleece", "Hooded Fleece", "Pile Fleece"],
    "Trousers": ["Trekking Trousers", "Convertible Trousers", "Winter Trousers", "Rain Overtrousers"],
    "Base layers": ["Merino Crew", "Merino Leggings", "Synthetic Tee", "Zip Neck Top"],
    "Walking boots": ["Mid GTX Boot", "Leather Hiking Boot", "Approach Boot", "Winter Boot"],
    "Trail shoes": ["Trail Runner", "Fell Shoe", "Hiking Shoe"],
    "Socks": ["Hiking Sock", "Liner Sock", "Merino Sock"],
    "Tents": ["1 Tent", "2 Tent", "3 Tent", "Tunnel Tent", "Dome Tent"],
    "Sleeping bags": ["Summer Bag", "3-Season Bag", "Down Bag", "Bag Liner"],
    "Stoves": ["Gas Stove", "Stove System", "Multi-fuel Stove"],
    "Cookware": ["Titanium Pot", "Cook Set", "Mug", "Frying Pan"],
    "Daypacks": ["20 Daypack", "25 Daypack", "30 Daypack"],
    "Rucksacks": ["45 Rucksack", "55 Rucksack", "65 Rucksack"],
    "Headtorches": ["200 Headtorch", "400 Headtorch", "Rechargeable Headtorch"],
    "Navigation": ["Baseplate Compass", "Map Case", "Sighting Compass"],
    "Water bottles": ["Steel Bottle", "Filter Bottle", "Soft Flask"],
}
EDITIONS = ["", " II", " Pro", " Lite", " XT", " Alpine", " Trail", " Classic"]
MATERIALS = ["Nylon", "Polyester", "Merino wool", "Leather", "Gore-Tex", "Ripstop nylon", "Titanium", "Aluminium"]
SIZES = {"Clothing": ["S", "M", "L", "XL"], "Footwear": ["UK 6", "UK 7", "UK 8", "UK 9", "UK 10"]}
COLOURS = ["Slate", "Moss", "Ember", "Navy", "Charcoal"]
PRICES = {"Jackets": (60, 320), "Fleeces": (35, 120), "Trousers": (40, 150), "Base layers": (25, 85),
          "Walking boots": (90, 240), "Trail shoes": (70, 160), "Socks": (8, 25), "Tents": (120, 650),
          "Sleeping bags": (40, 420), "Stoves": (25, 160), "Cookware": (10, 75), "Daypacks": (35, 110),
          "Rucksacks": (90, 260), "Headtorches": (15, 90), "Navigation": (8, 55), "Water bottles": (9, 45)}
CUSTOMERS = [("Amelia", "Hart"), ("Rahul", "Mistry"), ("Chloe", "Bennett"), ("Tomasz", "Wójcik"),
             ("Grace", "O'Neill"), ("Daniel", "Okafor"), ("Isla", "MacLeod"), ("Oliver", "Price"),
             ("Priya", "Raman"), ("Ewan", "Fraser")]
TOWNS = [("Kendal", "LA9 4DH"), ("Keswick", "CA12 5JR"), ("Ambleside", "LA22 0EU"), ("Hexham", "NE46 1BQ"),
         ("Buxton", "SK17 6XN"), ("Brecon", "LD3 7AH"), ("Fort William", "PH33 6DB"), ("Penrith", "CA11 7PT"),
         ("Settle", "BD24 9EJ"), ("Bakewell", "DE45 1BT"), ("Aviemore", "PH22 1PP"), ("Hebden Bridge", "HX7 8AD")]
STREETS = ["Fell Road", "Market Street", "Lake View", "Station Road", "Church Lane", "Mill Brow", "High Street"]
REVIEW_TITLES = {5: ["Superb", "Worth every penny", "Best I have owned"], 4: ["Very good", "Solid kit", "Happy"],
                 3: ["Does the job", "Average"], 2: ["Disappointing", "Runs small"], 1: ["Fell apart", "Avoid"]}
REVIEW_BODIES = ["Used it for a week in the Lakes and it held up well.", "Fit was as expected from the size chart.",
                 "A bit heavier than I hoped, but very sturdy.", "Arrived quickly and well packed.",
                 "Stopped working after a month of regular use.", "Great value compared with the big brands."]


def money(rng: random.Random, low: int, high: int) -> Decimal:
    return Decimal(rng.randint(low, high)) + Decimal(rng.choice(["0.00", "0.50", "0.99", "0.95"]))


def build(seed: int) -> None:
    rng = random.Random(f"oscar-{seed}")
    site = Site.objects.get_or_create(id=1)[0]
    site.domain, site.name = "127.0.0.1", "Fernhill Outfitters"
    site.save()
    gb = Country.objects.get_or_create(iso_3166_1_a2="GB", defaults={
        "iso_3166_1_a3": "GBR", "iso_3166_1_numeric": "826", "printable_name": "United Kingdom",
        "name": "United Kingdom of Great Britain and Northern Ireland", "is_shipping_country": True,
        "display_order": 1})[0]
    Country.objects.get_or_create(iso_3166_1_a2="IE", defaults={
        "iso_3166_1_a3": "IRL", "iso_3166_1_numeric": "372", "printable_name": "Ireland", "name": "Ireland",
        "is_shipping_country": True})

    cats = {leaf: create_from_breadcrumbs(path) for leaf, path in CATEGORIES.items()}
    partner = Partner.objects.create(name="Fernhill Warehouse", code="fernhill-warehouse")

    classes: dict[str, ProductClass] = {}
    for cname, (_, attrs, axis) in CLASSES.items():
        pc = ProductClass.objects.create(name=cname, requires_shipping=True, track_stock=True)
        for code, name, kind in attrs:
            ProductAttribute.objects.create(product_class=pc, code=code, name=name, type=kind)
        if axis:
            ProductAttribute.objects.create(product_class=pc, code="size", name="Size", type="text")
            ProductAttribute.objects.create(product_class=pc, code="colour", name="Colour", type="text")
        classes[cname] = pc

    sku = [10000]
    titles: set[str] = set()

    def stock(product: Product, price: Decimal) -> None:
        sku[0] += 1
        num = rng.choice([0, 2, 5, 8, 12, 20, 35, 50, 80])
        StockRecord.objects.create(product=product, partner=partner, partner_sku=f"FH-{sku[0]}",
                                   price_currency="GBP", price=price, num_in_stock=num,
                                   num_allocated=0, low_stock_threshold=3)

    def attrs_for(product: Product, cname: str, cat: str) -> None:
        for code, _, kind in CLASSES[cname][1]:
            if kind == "boolean":
                value: object = rng.random() < 0.5
            elif code == "weight_g":
                value = rng.randrange(60, 3200, 10)
            elif code == "volume_l":
                value = int(product.title.split()[-2]) if product.title.split()[-2].isdigit() else 30
            elif code == "season":
                value = rng.choice(["1-season", "2-season", "3-season", "4-season"])
            elif code == "capacity":
                value = rng.choice(["1 person", "2 person", "3 person", "0.9 litre", "1.3 litre", "n/a"])
            else:
                value = rng.choice(MATERIALS)
            setattr(product.attr, code, value)

    def new_title(cat: str) -> str:
        while True:
            noun = rng.choice(NOUNS[cat])
            t = f"{rng.choice(BRANDS)} {noun}{rng.choice(EDITIONS)}"
            if t not in titles:
                titles.add(t)
                return t

    products: list[Product] = []
    for cname, (leaves, _, axis) in CLASSES.items():
        pc = classes[cname]
        for leaf in leaves:
            low, high = PRICES[leaf]
            for _ in range(rng.randint(14, 18)):
                title = new_title(leaf)
                desc = (f"<p>The {title} from our {leaf.lower()} range. "
                        f"{rng.choice(REVIEW_BODIES[:4])}</p>")
                if axis and rng.random() < 0.3:
                    parent = Product(structure=Product.PARENT, title=title, product_class=pc, description=desc)
                    parent.save()
                    ProductCategory.objects.create(product=parent, category=cats[leaf])
                    price = money(rng, low, high)
                    for size in SIZES[cname][: rng.randint(3, len(SIZES[cname]))]:
                        colour = rng.choice(COLOURS)
                        child = Product(structure=Product.CHILD, parent=parent, title=f"{title}, {size}")
                        child.attr.size = size
                        child.attr.colour = colour
                        child.save()
                        stock(child, price)
                        products.append(child)
                else:
                    p = Product(structure=Product.STANDALONE, title=title, product_class=pc, description=desc,
                                upc=f"50{rng.randrange(10**10, 10**11)}")
                    attrs_for(p, cname, leaf)
                    p.save()
                    ProductCategory.objects.create(product=p, category=cats[leaf])
                    stock(p, money(rng, low, high))
                    products.append(p)

    # staff and customers
    User.objects.create_superuser(username="hwalsh", email="helen.walsh@fernhill.example",
                                          password=PASSWORD, first_name="Helen", last_name="Walsh")
    # staff: a catalogue manager (products, stock, offers) and a customer service agent
    # (orders and customers); Oscar's dashboard checks each view's model permissions
    catalogue = User.objects.create_user(username="jpatel", email="jay.patel@fernhill.example", password=PASSWORD,
                                         first_name="Jay", last_name="Patel", is_staff=True)
    catalogue.user_permissions.set(Permission.objects.filter(  # not partner.dashboard_access: a partner's orders
        content_type__app_label__in=["catalogue", "partner", "offer", "voucher"]).exclude(codename="dashboard_access"))
    service = User.objects.create_user(username="rkhan", email="rosa.khan@fernhill.example", password=PASSWORD,
                                       first_name="Rosa", last_name="Khan", is_staff=True)
    service.user_permissions.set(Permission.objects.filter(content_type__app_label__in=["order", "address"])
                                 | Permission.objects.filter(content_type__app_label="auth",
                                                             codename__in=["view_user"]))
    customers = []
    for first, last in CUSTOMERS:
        email = f"{first.lower()}.{last.lower().replace(chr(39), '').replace('ó', 'o')}@example.net"
        u = User.objects.create_user(username=email[:30], email=email, password=PASSWORD,
                                     first_name=first, last_name=last)
        town, postcode = rng.choice(TOWNS)
        UserAddress.objects.create(user=u, first_name=first, last_name=last,
                                   line1=f"{rng.randint(1, 120)} {rng.choice(STREETS)}", line4=town,
                                   postcode=postcode, country=gb, phone_number="+441539720000",
                                   is_default_for_shipping=True, is_default_for_billing=True)
        customers.append(u)

    # shipping methods
    methods = [OrderAndItemCharges.objects.create(code="standard", name="Standard delivery (3-5 days)",
                                                  price_per_order=Decimal("4.95"),
                                                  free_shipping_threshold=Decimal("75.00")),
               OrderAndItemCharges.objects.create(code="express", name="Express delivery (next day)",
                                                  price_per_order=Decimal("9.95")),
               OrderAndItemCharges.objects.create(code="click-collect", name="Click and collect (Kendal store)",
                                                  price_per_order=Decimal("0.00"))]

    # offers and vouchers
    everything = Range.objects.create(name="Everything", includes_all_products=True)
    camping = Range.objects.create(name="Camping kit")
    for p in Product.objects.filter(product_class=classes["Camping"]):
        camping.add_product(p)
    # live vouchers run for years past any machine's clock; WINTER20 ended with the spring
    for code, pct, rng_, minimum, end in [("TRAIL10", 10, everything, 1, 3650), ("CAMP15", 15, camping, 1, 3650),
                                          ("WINTER20", 20, everything, 2, -10)]:
        cond = Condition.objects.create(range=rng_, type=Condition.COUNT, value=minimum)
        ben = Benefit.objects.create(range=rng_, type=Benefit.PERCENTAGE, value=pct)
        offer = ConditionalOffer.objects.create(name=f"Voucher {code}", offer_type=ConditionalOffer.VOUCHER,
                                                condition=cond, benefit=ben)
        v = Voucher.objects.create(name=f"{pct}% off ({code})", code=code, usage=Voucher.MULTI_USE,
                                   start_datetime=EPOCH - dt.timedelta(days=60),
                                   end_datetime=EPOCH + dt.timedelta(days=end))
        v.offers.add(offer)
    socks = Range.objects.create(name="Socks")
    for p in Product.objects.filter(categories=cats["Socks"]):
        socks.add_product(p)
    ConditionalOffer.objects.create(
        name="Three pairs of socks for the price of two", offer_type=ConditionalOffer.SITE,
        condition=Condition.objects.create(range=socks, type=Condition.COUNT, value=3),
        benefit=Benefit.objects.create(range=socks, type=Benefit.MULTIBUY, value=None))

    # reviews
    for p in rng.sample([p for p in Product.objects.exclude(structure=Product.CHILD)], 90):
        for u in rng.sample(customers, rng.randint(1, 3)):
            score = rng.choice([5, 5, 4, 4, 4, 3, 2, 1])
            ProductReview.objects.create(product=p, user=u, score=score, title=rng.choice(REVIEW_TITLES[score]),
                                         body=rng.choice(REVIEW_BODIES), status=ProductReview.APPROVED)

    # past orders, through Oscar's own order placement
    buyable = [p for p in products if p.stockrecords.first().num_in_stock > 0]
    number = 100000
    for i in range(60):
        user = customers[i % len(customers)]
        basket = Basket.objects.create(owner=user)
        basket.strategy = Default()
        for p in rng.sample(buyable, rng.randint(1, 3)):
            basket.add_product(p, quantity=rng.choice([1, 1, 1, 2, 3]))
        method = rng.choice(methods)
        charge = method.calculate(basket)
        total = OrderTotalCalculator().calculate(basket, charge)
        addr = user.addresses.first()
        shipping = ShippingAddress.objects.create(first_name=addr.first_name, last_name=addr.last_name,
                                                  line1=addr.line1, line4=addr.line4, postcode=addr.postcode,
                                                  country=gb, phone_number=addr.phone_number)
        number += rng.randint(1, 9)
        order = OrderCreator().place_order(basket=basket, total=total, shipping_method=method,
                                           shipping_charge=charge, user=user, shipping_address=shipping,
                                           order_number=str(number), status="Pending")
        basket.set_as_submitted()
        placed = EPOCH + dt.timedelta(days=i * 2, hours=rng.randint(0, 10), minutes=rng.randint(0, 59))
        Order.objects.filter(pk=order.pk).update(date_placed=placed)
        path = rng.choice([[], ["Being processed"], ["Being processed", "Shipped"],
                           ["Being processed", "Shipped", "Complete"], ["Cancelled"]])
        if i >= 52:
            path = []  # the latest orders wait to be processed
        for status in path:
            order.set_status(status)
    for change in OrderStatusChange.objects.select_related("order"):
        OrderStatusChange.objects.filter(pk=change.pk).update(
            date_created=change.order.date_placed + dt.timedelta(hours=change.pk % 40 + 1))


if __name__ == "__main__":
    with transaction.atomic():
        build(int(sys.argv[1]))
