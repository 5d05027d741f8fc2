# mypy: disable-error-code="import-not-found,import-untyped,misc,untyped-decorator"
# (the line above: this module runs under the Wagtail venv, whose libraries the main venv lacks)
"""Seed one Wagtail database through Wagtail's own models (run under the Wagtail venv):

    python seed_wagtail.py SEED      (CUA_WAGTAIL_DB: a migrated database; CUA_WAGTAIL_MEDIA: an empty folder)

Harbourlight, a fictional coastal-town arts trust: a home page, a blog of 64 posts
(StreamField bodies, tags, authors, categories, dates), an events section, a contact form;
images and documents (small generated files in the media folder); author and category
snippets; 9 users in Wagtail's Editors and Moderators groups, an events-only group and
administrators; revisions by several users, and pages in every state of the moderation
workflow: draft, in moderation, published (some with newer drafts), scheduled, unpublished.
Every timestamp is the seeded clock's, in 2025, so a seed's rows (ids, titles, times, who did
what) are the same on every machine; only Wagtail's random UUIDs (StreamField block ids,
translation keys) differ, and no judge reads them.
"""

from __future__ import annotations

import datetime as dt
import io
import os
import random
import sys
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmsite"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django  # noqa: E402

django.setup()

from cms.models import (  # noqa: E402
    Author,
    BlogCategory,
    BlogIndexPage,
    BlogPage,
    EventIndexPage,
    EventPage,
    FormField,
    FormPage,
    HomePage,
)
from django.contrib.auth.models import Group, Permission, User  # noqa: E402
from django.core.files.base import ContentFile  # noqa: E402
from django.core.files.images import ImageFile  # noqa: E402
from django.db import transaction  # noqa: E402
from django.utils.text import slugify  # noqa: E402
from PIL import Image as PILImage  # noqa: E402
from wagtail.documents.models import Document  # noqa: E402
from wagtail.images.models import Image  # noqa: E402
from wagtail.models import (  # noqa: E402
    Collection,
    GroupCollectionPermission,
    GroupPagePermission,
    ModelLogEntry,  # noqa: E402
    Page,
    PageLogEntry,
    Revision,
    Site,
    TaskState,
    WorkflowState,
)

PASSWORD = "harbour-2026"
UTC = dt.timezone.utc
EPOCH = dt.datetime(2025, 1, 6, 9, 0, tzinfo=UTC)

USERS = [  # username, first, last, group
    ("nosei", "Nadia", "Osei", "admin"),
    ("lrossi", "Lucia", "Rossi", "Moderators"),
    ("dwong", "Daniel", "Wong", "Moderators"),
    ("jmorgan", "Jonah", "Morgan", "Editors"),
    ("pkaur", "Priya", "Kaur", "Editors"),
    ("tbeck", "Tomas", "Beck", "Editors"),
    ("afarrell", "Aoife", "Farrell", "Editors"),
    ("mhale", "Marcus", "Hale", "Event editors"),
    ("sokafor", "Sade", "Okafor", "Event editors"),
]
AUTHORS = [("Mira Castell", "Curator"), ("Owen Pryce", "Harbour historian"), ("Ines Duarte", "Education lead"),
           ("Felix Amadi", "Photographer"), ("Hanna Lund", "Festival director"), ("Rory Quinn", "Volunteer coordinator"),
           ("Yuki Tanabe", "Ceramicist in residence"), ("Grace Whitlow", "Trustee")]
CATEGORIES = ["Exhibitions", "Community", "Heritage", "Workshops", "Festival", "Trust news"]
TAGS = ["ceramics", "painting", "harbour", "family", "volunteering", "archive", "photography", "residency",
        "lighthouse", "print", "music", "accessibility", "fundraising", "schools", "maritime", "textiles"]
TOPICS = ["the lighthouse keepers' logbooks", "salt-glaze firing on the quay", "the winter print fair",
          "a new wing for the boat shed", "tide-pool drawing walks", "the fishermen's choir", "restoring the 1904 lens",
          "the open studio weekend", "netting patterns and textiles", "a summer of school visits",
          "the harbour master's photographs", "late opening with live music", "cyanotypes by the sea wall",
          "the volunteer guides' handbook", "a grant for step-free access", "clay from the estuary",
          "the ropewalk's last season", "portraits of the lifeboat crew", "an archive of postcards",
          "weaving with reclaimed sailcloth", "the storm of 1953 remembered", "kites on the headland",
          "a residency in the signal tower", "woodcuts of the coastline", "the cannery's old labels",
          "sea-glass mosaics", "the trust's annual report", "a choir for the harbour festival",
          "drawing the breakwater at dawn", "the map room reopens", "pottery for beginners",
          "oral histories from the net lofts"]
SENTENCES = ["Visitors can see the work in the upper gallery until the end of the month.",
             "The project was shaped by conversations with people who have worked on the harbour for decades.",
             "Booking is free, but places are limited, so please reserve a spot at the front desk.",
             "Our volunteers spent the spring cataloguing every item before it went on display.",
             "The workshop suits complete beginners and all materials are provided.",
             "We are grateful to the local council and our members for making this possible.",
             "Several pieces were made with clay and pigments gathered within a mile of the quay.",
             "The galleries are step-free and a quiet room is available on request.",
             "Schools can book a guided visit with a handling session from the archive.",
             "The evening ends with a short talk by the artist and time for questions.",
             "A catalogue with essays and photographs is available in the shop.",
             "The restored objects will travel to two partner museums next year."]
VENUES = ["Boat Shed Gallery", "Signal Tower", "Harbour Hall", "Net Loft Studio", "The Quay", "Map Room"]
EVENT_NAMES = ["Lantern walk", "Print fair", "Family clay morning", "Choir evening", "Archive open day",
               "Sea-glass workshop", "Lecture: the 1904 lens", "Kite day", "Life drawing at the loft",
               "Members' preview", "Storytelling by the fire", "Harbour festival opening", "Cyanotype afternoon",
               "Textile repair café"]


class Clock:
    """The seeded clock: every row an action writes gets the clock's time, not the machine's."""

    def __init__(self, rng: random.Random) -> None:
        self.now = EPOCH
        self.rng = rng
        self.marks = self._marks()

    @staticmethod
    def _max(model: Any) -> int:
        last = model.objects.order_by("-pk").values_list("pk", flat=True).first()
        return int(last or 0)

    def _marks(self) -> dict[Any, int]:
        return {m: self._max(m) for m in (PageLogEntry, ModelLogEntry, Revision, WorkflowState, TaskState)}

    def tick(self, hours: float) -> dt.datetime:
        self.now += dt.timedelta(hours=hours, minutes=self.rng.randrange(60))
        return self.now

    def stamp(self, page: Page | None = None) -> None:
        """Give the rows written since the last stamp the clock's time."""
        when = self.now
        m = self.marks
        PageLogEntry.objects.filter(pk__gt=m[PageLogEntry]).update(timestamp=when)
        ModelLogEntry.objects.filter(pk__gt=m[ModelLogEntry]).update(timestamp=when)
        Revision.objects.filter(pk__gt=m[Revision]).update(created_at=when)
        WorkflowState.objects.filter(pk__gt=m[WorkflowState]).update(created_at=when)
        TaskState.objects.filter(pk__gt=m[TaskState]).update(started_at=when)
        TaskState.objects.filter(pk__gt=m[TaskState], finished_at__isnull=False).update(finished_at=when)
        TaskState.objects.filter(finished_at__gt=self.now + dt.timedelta(days=1)).update(finished_at=when)
        if page is not None:
            fresh = {}
            row = Page.objects.get(pk=page.pk)
            for field in ("first_published_at", "last_published_at", "latest_revision_created_at"):
                value = getattr(row, field)
                if value is not None and value > BUILD_START:
                    fresh[field] = when
            if fresh:
                Page.objects.filter(pk=page.pk).update(**fresh)
        self.marks = self._marks()


BUILD_START = dt.datetime.now(UTC) - dt.timedelta(minutes=5)


def _png(rng: random.Random) -> bytes:
    img = PILImage.new("RGB", (96, 64), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    for x in range(0, 96, 8):
        for y in range(rng.randrange(64)):
            img.putpixel((x, y), (20, 40, 80))
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def _paragraph(rng: random.Random, n: int) -> str:
    return "<p>" + " ".join(rng.sample(SENTENCES, n)) + "</p>"


def _body(rng: random.Random, images: list[Image], topic: str) -> list[tuple[str, object]]:
    blocks: list[tuple[str, object]] = [("paragraph", _paragraph(rng, 3))]
    if rng.random() < 0.6:
        blocks.append(("heading", rng.choice(["What to expect", "Background", "Getting there", "Thanks",
                                               "From the archive", "Taking part"])))
        blocks.append(("paragraph", _paragraph(rng, 2)))
    if rng.random() < 0.4:
        blocks.append(("image", rng.choice(images)))
    if rng.random() < 0.3:
        blocks.append(("quote", f"It changed how I see {topic}."))
    return blocks


def _user(name: str) -> User:
    return User.objects.get(username=name)


@transaction.atomic
def seed(n: int) -> None:
    rng = random.Random(f"wagtail-harbourlight-{n}")
    clock = Clock(rng)

    # --- people and permissions ---
    moderators = Group.objects.get(name="Moderators")
    editors = Group.objects.get(name="Editors")
    event_editors = Group.objects.create(name="Event editors")
    admin_access = Permission.objects.get(content_type__app_label="wagtailadmin", codename="access_admin")
    event_editors.permissions.add(admin_access)
    for username, first, last, group in USERS:
        user = User.objects.create_user(username, f"{username}@harbourlight.example", PASSWORD,
                                        first_name=first, last_name=last)
        user.date_joined = EPOCH - dt.timedelta(days=rng.randrange(30, 400))
        if group == "admin":
            user.is_superuser = True
            user.is_staff = True
        else:
            user.groups.add(Group.objects.get(name=group))
        user.save()
    users = {u: _user(u) for u, *_ in USERS}
    writers = ["jmorgan", "pkaur", "tbeck", "afarrell", "lrossi", "dwong", "nosei"]

    # --- media ---
    root_collection = Collection.get_first_root_node()
    blog_media = root_collection.add_child(name="Blog media")
    press = root_collection.add_child(name="Press kit")
    for group in (editors, moderators):
        for codename in ("add_image", "choose_image", "add_document", "choose_document"):
            app = "wagtailimages" if "image" in codename else "wagtaildocs"
            perm = Permission.objects.get(content_type__app_label=app, codename=codename)
            GroupCollectionPermission.objects.get_or_create(group=group, collection=root_collection, permission=perm)
    images: list[Image] = []
    for i, topic in enumerate(rng.sample(TOPICS, 14)):
        img = Image(title=topic.capitalize(), collection=blog_media if i % 3 else press, width=96, height=64,
                    uploaded_by_user=users[rng.choice(writers)])
        img.file = ImageFile(io.BytesIO(_png(rng)), name=f"hl-{i:02d}.png")
        img.width, img.height = 96, 64
        img.save()
        img.tags.add(*rng.sample(TAGS, 2))
        images.append(img)
    for i, title in enumerate(["Annual report 2025", "Access guide", "Volunteer handbook", "Press release: lens",
                               "Festival programme", "Venue hire terms", "Schools pack"]):
        doc = Document(title=title, collection=press if i % 2 else root_collection,
                       uploaded_by_user=users[rng.choice(writers)])
        text = f"{title}\n\nHarbourlight Arts Trust\n" + " ".join(rng.sample(SENTENCES, 4)) + "\n"
        doc.file.save(f"hl-doc-{i:02d}.txt", ContentFile(text.encode()), save=False)
        doc.save()
    clock.stamp()

    # --- snippets ---
    authors = [Author.objects.create(name=a, role=r, bio=f"{a} is the trust's {r.lower()}.") for a, r in AUTHORS]
    categories = [BlogCategory.objects.create(name=c, slug=c.lower().replace(" ", "-")) for c in CATEGORIES]

    # --- the page tree ---
    root = Page.get_first_root_node()
    welcome = Page.objects.get(depth=2)
    home = root.add_child(instance=HomePage(title="Harbourlight Arts Trust", slug="harbourlight",
                                            intro="<p>Galleries, studios and an archive on the old quay.</p>",
                                            owner=users["nosei"]))
    site = Site.objects.get(is_default_site=True)
    site.root_page = home
    site.site_name = "Harbourlight"
    site.save()
    welcome.delete()
    home.save_revision(user=users["nosei"]).publish(user=users["nosei"])
    clock.stamp(home)

    def publish(page: Page, user: str) -> None:
        clock.tick(rng.uniform(1, 30))
        page.save_revision(user=users[user], log_action=True).publish(user=users[user])
        clock.stamp(page)

    blog = home.add_child(instance=BlogIndexPage(title="Blog", slug="blog", owner=users["nosei"],
                                                 intro="<p>News and stories from the trust.</p>"))
    publish(blog, "nosei")
    events = home.add_child(instance=EventIndexPage(title="Events", slug="events", owner=users["nosei"],
                                                    intro="<p>What is on at Harbourlight.</p>"))
    publish(events, "nosei")
    contact = home.add_child(instance=FormPage(title="Contact us", slug="contact", owner=users["nosei"],
                                               intro="<p>Write to the trust's office.</p>",
                                               thank_you_text="<p>Thank you, we reply within a week.</p>",
                                               to_address="office@harbourlight.example",
                                               from_address="web@harbourlight.example", subject="Website enquiry"))
    for i, (label, kind) in enumerate([("Your name", "singleline"), ("Email", "email"), ("Message", "multiline")]):
        FormField.objects.create(page=contact, sort_order=i, label=label, field_type=kind, required=True)
    publish(contact, "lrossi")
    about = home.add_child(instance=HomePage(title="About the trust", slug="about", owner=users["nosei"],
                                             intro="<p>Founded in 1987 by the harbour's boat builders.</p>"))
    publish(about, "nosei")
    for title, slug, intro in [("Visit us", "visit", "<p>Opening hours, the ferry and the car park.</p>"),
                               ("Support the trust", "support", "<p>Membership, donations and legacies.</p>")]:
        extra = home.add_child(instance=HomePage(title=title, slug=slug, owner=users["nosei"], intro=intro))
        publish(extra, rng.choice(["nosei", "lrossi"]))

    # events-only editors: add/change/publish under Events
    for codename in ("add_page", "change_page", "publish_page"):
        GroupPagePermission.objects.create(group=event_editors, page=events,
                                           permission=Permission.objects.get(content_type__app_label="wagtailcore",
                                                                             codename=codename))

    # --- blog posts ---
    titles = [t[0].upper() + t[1:] for t in TOPICS] + [f"{t[0].upper() + t[1:]}: part two" for t in TOPICS]
    rng.shuffle(titles)
    kinds = (["published"] * 38 + ["published_draft"] * 8 + ["draft"] * 6 + ["moderation"] * 5 +
             ["scheduled"] * 3 + ["unpublished"] * 4)
    rng.shuffle(kinds)
    workflow = Page.get_first_root_node().get_workflow()
    for i, kind in enumerate(kinds):
        title = titles[i]
        author_user = rng.choice(writers[:4] if kind in ("moderation", "draft") else writers)
        clock.tick(rng.uniform(20, 120))
        date = clock.now.date()
        post = BlogPage(title=title, slug=slugify(title)[:60],
                        date=date, intro=rng.choice(SENTENCES), owner=users[author_user],
                        body=_body(rng, images, title.lower()), live=False)
        blog.add_child(instance=post)
        post.tags.add(*rng.sample(TAGS, rng.randint(1, 3)))
        post.authors.set(rng.sample(authors, rng.choice([1, 1, 2])))
        post.categories.set(rng.sample(categories, 1))
        post.save_revision(user=users[author_user], log_action=True)
        clock.stamp(post)
        if kind == "draft":
            continue
        if kind == "moderation":
            clock.tick(rng.uniform(1, 10))
            post.save_revision(user=users[author_user], log_action=True)
            workflow.start(post, users[author_user])
            clock.stamp(post)
            continue
        publisher = rng.choice(["lrossi", "dwong", "nosei"]) if author_user in writers[:4] else author_user
        if kind == "scheduled":
            clock.tick(rng.uniform(1, 10))
            go_live = dt.datetime(2027, rng.randint(2, 11), rng.randint(1, 28), 8, 0, tzinfo=UTC)
            post.go_live_at = go_live
            post.save_revision(user=users[publisher], log_action=True).publish(user=users[publisher])
            clock.stamp(post)
            continue
        publish(post, publisher)
        for _ in range(rng.choice([0, 0, 1, 2])):  # later edits, published
            post = BlogPage.objects.get(pk=post.pk)
            post.intro = rng.choice(SENTENCES)
            editor = rng.choice(writers)
            publish(post, editor if editor in ("lrossi", "dwong", "nosei") else publisher)
        if kind == "published_draft":
            post = BlogPage.objects.get(pk=post.pk)
            post.title = post.title + " (updated)"
            clock.tick(rng.uniform(2, 48))
            post.save_revision(user=users[rng.choice(writers[:4])], log_action=True)
            clock.stamp(post)
        elif kind == "unpublished":
            clock.tick(rng.uniform(24, 200))
            post = BlogPage.objects.get(pk=post.pk)
            post.unpublish(user=users[rng.choice(["lrossi", "dwong", "nosei"])])
            clock.stamp(post)

    # --- events ---
    for i, name in enumerate(rng.sample(EVENT_NAMES, 12)):
        clock.tick(rng.uniform(5, 60))
        start = dt.datetime(2026, rng.randint(1, 12), rng.randint(1, 28), rng.choice([10, 14, 18, 19]), 0, tzinfo=UTC)
        who = rng.choice(["mhale", "sokafor"])
        ev = events.add_child(instance=EventPage(title=f"{name} ({start:%b %Y})",
                                                 slug=f"{slugify(name)}-{i}",
                                                 start=start, venue=rng.choice(VENUES),
                                                 description=_paragraph(rng, 2), owner=users[who], live=False))
        ev.save_revision(user=users[who], log_action=True)
        clock.stamp(ev)
        if i < 10:
            publish(ev, who)
    Page.fix_tree()


def main() -> int:
    seed(int(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
