"""Deterministic kanban data: the workspace of a small software team (members from several
locales, me first) with five boards of different kinds and sizes: the current sprint
(a big backlog, tickets with components and real-sounding symptoms), a marketing content
plan, a hiring pipeline of candidates, customer feedback under triage and a small office
board. Columns fill unevenly (a backlog piles up, review is a queue, done grows during a
sprint); descriptions run from nothing to steps to reproduce with a to-do list, one line each
(the dialog's textarea posts line breaks back as CRLF: a saved card would differ from its seed);
due dates cluster around the sprint's end; comments come from the members who work on the card.

Titles never equal the ones the task suites and the synth generator have an agent create
(`RESERVED`), so a judge that finds a card by its title finds the agent's."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

#: row 1 is the signed-in user
MEMBERS = [("Alex Morgan", "#1f6feb"), ("Priya Raghavan", "#8250df"), ("Marco Bianchi", "#bf3989"), ("Lena Wagner", "#1a7f37"),
           ("Kenji Watanabe", "#bc4c00"), ("Sofía Herrera", "#0969da"), ("Omar Haddad", "#6e7781"), ("Chloé Martin", "#9a6700")]
TAGS = [("bug", "#cf222e"), ("feature", "#1f6feb"), ("design", "#bf3989"), ("urgent", "#bc4c00"), ("backend", "#1a7f37"),
        ("frontend", "#8250df"), ("docs", "#57606a"), ("research", "#0969da"), ("blog", "#9a6700"), ("customer", "#bf8700")]

#: titles the suites and cua/synth/kanban_gen.py create or retitle to (compared case-blind)
RESERVED = {"update the changelog", "prepare demo data", "review q2 goals", "call the vendor back", "write release notes",
            "update the onboarding doc", "fix the login timeout", "review q3 roadmap", "clean up old branches",
            "draft the release notes", "book the demo room", "archive last sprint"}

COMPONENTS = ["Checkout", "Billing", "Search", "Onboarding", "Settings", "Admin console", "Invoices", "Webhooks", "Auth",
              "Notifications", "Reports", "Public API", "iOS app", "Android app", "Importer"]
SYMPTOMS = ["500 error when the cart holds a gift card", "spinner never stops on slow 3G", "date picker shows the wrong week in de-DE",
            "totals off by one cent after a partial refund", "duplicate rows after a CSV re-import", "session expires during 3-D Secure",
            "emoji in company name breaks the PDF", "timezone shift for users in Asia/Kolkata", "retry storm after a 429",
            "can't paste into the IBAN field", "dark mode text unreadable in tooltips", "N+1 queries on the list page",
            "screen reader skips the error summary", "crash on rotate (landscape)", "sort order ignores accents (é, ü)"]
CHORES = ["Upgrade Django to 5.1", "Migrate invoices table to Postgres 16", "Remove the legacy v1 pricing endpoints",
          "Rotate the Stripe webhook secret", "Split the monolith's notification worker", "Add idempotency keys to POST /payments",
          "Flaky test: test_refund_partial", "Bump Node to 22 LTS in CI", "Cache exchange rates for 1 h", "Delete dead feature flags",
          "Add OpenTelemetry traces to checkout", "Load test: 2k concurrent logins", "Document the webhook retry policy",
          "Backfill missing tax IDs", "Pin the Chromium version in e2e tests", "Archive S3 exports older than 13 months"]
FEATURE_ASKS = ["Bulk edit for invoices", "SAML SSO for the Teams plan", "Export audit log as CSV", "Saved searches",
                "Slack notifications per project", "Usage-based billing preview", "Two-factor recovery codes", "Offline mode for the iOS app",
                "Keyboard shortcuts cheat sheet", "Custom fields on contacts", "Per-seat pricing calculator", "Dark mode for the dashboard",
                "Passkeys sign-in", "Multi-currency price lists", "Undo for archived projects"]
CONTENT = ["Blog: how we cut checkout time by 40%", "Case study: Nordlicht Logistik", "Newsletter – April edition",
           "Webinar: usage-based pricing without surprises", "LinkedIn carousel: 5 invoicing mistakes", "Landing page: EU data residency",
           "Guest post for SaaStr", "Video: SSO setup in 2 minutes", "Customer quote round-up (Q1)", "Blog: what we learned from 10k support tickets",
           "Comparison page vs. legacy tools", "Podcast pitch: Indie Hackers", "Release notes digest – March", "Ebook: the CFO's guide to usage billing",
           "Tweet thread: pricing page teardown", "Webinar follow-up email sequence", "Blog (FR): facturation électronique 2026",
           "Blog (DE): E-Rechnungspflicht – was jetzt?", "Press kit refresh", "G2 review campaign", "Conference talk CFP: SaaS Connect",
           "Homepage hero A/B test copy", "YouTube short: bulk edit", "Partner spotlight: Pampa Agro", "Help-center article audit",
           "Product Hunt launch plan", "Customer advisory board recap", "Brand photos for careers page", "Webinar (ES): precios por uso",
           "Q2 campaign brief", "SEO: refresh top 10 posts", "Holiday schedule social posts", "Churn survey write-up",
           "Infographic: state of invoicing 2026", "Newsletter – May edition", "Sales one-pager: Teams plan"]
FEEDBACK = ["Pay annually by bank transfer", "Export to DATEV", "Invoices should show the PO number",
            "Reminder emails go to spam (Outlook)", "Mobile app: Face ID unlock", "Shared inbox for billing questions",
            "Allow 0% VAT for reverse charge", "Japanese invoice format (適格請求書)", "Search by amount", "Bigger font option",
            "API: filter invoices by updated_at", "Zapier trigger for paid invoices", "Customer portal in Spanish",
            "Recurring invoices on the last business day", "Bulk download as ZIP", "Show late fees on the statement",
            "Let accountants log in read-only", "GST fields for India", "Approval step before sending", "Merge duplicate customers",
            "Calendar view of due dates", "Custom email sender domain", "Partial payments on one invoice", "Attach timesheets to invoices",
            "QuickBooks Online sync keeps disconnecting", "Change the invoice number sequence mid-year"]
OFFICE = ["Renew the Slack contract (due 31 Mar)", "Book the summer offsite venue", "Fix the HDMI in Room Spree", "Order standing desks (x3)",
          "New joiner laptops: Aisha, Tomasz", "Update the emergency contact list", "Plan Lena's farewell", "Cancel unused Figma seats",
          "Coffee machine descaling", "Quarterly fire drill", "Bike racks: ask the landlord", "Insurance renewal paperwork",
          "Team photo for the website", "Sort out the GEMA licence for the office music"]
CANDIDATE_NAMES = {"en-US": (["Jordan", "Taylor", "Morgan", "Casey", "Riley"], ["Brooks", "Carter", "Hughes", "Bennett", "Ward"]),
                   "de-DE": (["Jannik", "Lisa", "Moritz", "Clara", "Nils"], ["Schulz", "Koch", "Richter", "Klein", "Wolf"]),
                   "fr-FR": (["Manon", "Lucas", "Sarah", "Antoine"], ["Petit", "Roux", "Faure", "André"]),
                   "es-ES": (["Marta", "Diego", "Irene", "Pablo"], ["Ruiz", "Gil", "Castro", "Molina"]),
                   "ja-JP": (["Yuki", "Daiki", "Mei"], ["Ito", "Kimura", "Hayashi"]),
                   "en-IN": (["Ishaan", "Meera", "Karthik", "Divya"], ["Pillai", "Joshi", "Rao", "Chopra"]),
                   "pt-BR": (["Thiago", "Camila"], ["Ribeiro", "Costa"]), "pl-PL": (["Zofia", "Michał"], ["Wójcik", "Kamiński"])}
ROLES = ["Senior Backend Engineer", "Product Designer", "Data Analyst", "Staff Frontend Engineer", "Support Lead",
         "Engineering Manager", "QA Engineer (contract)", "Working student – Marketing"]
SOURCES = ["referral", "LinkedIn", "careers page", "agency", "Berlin Startup Jobs", "conference"]
COMMENTS = ["Looks good to me 👍", "I'll pick this up tomorrow.", "Blocked on the design review.", "Moving this to next sprint?",
            "@Alex can you confirm the priority?", "Danke! Sieht gut aus.", "Merci, c'est parfait.", "Screenshot attached in the thread.",
            "Scheduled for Tuesday 10:00.", "Deferring until the pricing decision."]
#: what people write on a card of each kind, besides the above
COMMENTS_FOR = {
    "eng": ["Can we split this into two cards? The API part is bigger than it looks.", "Reproduced on staging, not on prod.",
            "PR is up, reviews welcome.", "Needs a migration – coordinate with ops.", "Not sure this is a bug – works as specified?",
            "QA passed on iOS 17 and 18.", "Paired with Kenji on this, ~1 day left.", "Updated the description with the repro steps."],
    "content": ["Copy reviewed, two small edits in the doc.", "Can we get a customer quote for this?", "Draft is in Drive.",
                "Legal signed off on the claims.", "Bumping to May, the launch moved."],
    "feedback": ["Customer confirmed the fix works.", "Do we have numbers on how many users hit this?", "Three more tickets this week.",
                 "Sales says this blocks two deals.", "Merged with a similar request."],
    "hiring": ["Phone screen went well; strong on SQL.", "Sent the offer on Friday, waiting to hear back.", "Reference check done ✅",
               "Scheduling the onsite for next week.", "Great portfolio, a bit junior for the role."],
    "office": ["Ordered, arrives Thursday.", "Landlord hasn't replied yet.", "Got two quotes, the cheaper one is fine."],
}

#: (name, description, columns with a weight of cards each, how many cards, card kind)
BOARDS: list[tuple[str, str, list[tuple[str, float]], tuple[int, int], str]] = [
    ("Platform Sprint 14", "Sprint 14 (2 – 13 March): billing reliability and the SSO beta.",
     [("Backlog", 6), ("To do", 3), ("In progress", 2), ("Review", 1.2), ("Done", 3)], (62, 70), "eng"),
    ("Marketing Q2", "Content calendar and campaigns for April – June.",
     [("Ideas", 4), ("Planned", 3), ("Writing", 1.5), ("In review", 1), ("Published", 2)], (32, 36), "content"),
    ("Customer Feedback", "Requests from support and sales, triaged weekly.",
     [("New", 3), ("Triaged", 3), ("Planned", 1.5), ("Shipped", 1), ("Won't do", 0.6)], (22, 26), "feedback"),
    ("Hiring", "Open roles and candidates. Keep personal data to what the process needs.",
     [("Applied", 4), ("Phone screen", 2), ("Onsite", 1.5), ("Offer", 0.6), ("Hired", 0.8)], (22, 28), "hiring"),
    ("Office & Ops", "Everything about the Berlin office.", [("To do", 3), ("Doing", 1), ("Done", 2)], (12, 14), "office"),
]
TAGS_FOR = {"eng": ["bug", "feature", "backend", "frontend", "urgent", "docs", "design"],
            "content": ["blog", "customer", "design", "research", "urgent", "docs"],
            "feedback": ["customer", "feature", "bug", "research", "frontend", "urgent"],
            "hiring": ["urgent", "backend", "frontend", "design", "research"],
            "office": ["urgent", "docs"]}


def _eng_title(rng: random.Random) -> tuple[str, str]:
    roll = rng.random()
    if roll < 0.45:
        comp, sym = rng.choice(COMPONENTS), rng.choice(SYMPTOMS)
        desc = rng.choice([
            "", f"Steps to reproduce: 1) open {comp}, 2) … Expected: works. Actual: {sym}.",
            f"Reported by {rng.randint(2, 40)} customers this week (Zendesk macro 'billing-bug').",
            "Sentry issue linked. Happens on Safari 17 only.",
            f"{sym.capitalize()}. Probably since the 2.14 release. To do: failing test, fix, backport to 2.14.x."])
        return f"{comp}: {sym}", desc
    if roll < 0.75:
        return rng.choice(CHORES), rng.choice(["", "Estimate: 3 points.", "Needs ops in the loop for the rollout window.",
                                              "Part of the Q1 reliability goal. Acceptance: dashboards green for 7 days."])
    return rng.choice(FEATURE_ASKS), rng.choice(["", "Spec: see the one-pager in Drive.", "Design in Figma (v3). Behind a flag.",
                                                "Acceptance criteria: admin can turn it on; an audit log entry; docs updated."])


def _title(kind: str, rng: random.Random) -> tuple[str, str]:
    if kind == "eng":
        return _eng_title(rng)
    if kind == "content":
        return rng.choice(CONTENT), rng.choice(["", "Owner drafts, Chloé edits.", "Target keyword in the brief.",
                                               "Needs a customer quote — ask CS.", "Publish Tue/Thu 10:00 CET."])
    if kind == "feedback":
        return rng.choice(FEEDBACK), rng.choice(["", f"Asked by {rng.randint(1, 14)} accounts (3 on Enterprise).",
                                                "From the Feb customer advisory board.", "Workaround sent; not a blocker."])
    if kind == "office":
        return rng.choice(OFFICE), rng.choice(["", "Budget approved.", "Quote from two vendors first."])
    first, last = rng.choice(list(CANDIDATE_NAMES.values()))
    role = rng.choice(ROLES)
    note = rng.choice(["", "Notice period: 3 months.", "Relocating from abroad; needs visa support.",
                       "Portfolio link in Greenhouse.", "Salary expectation within band."])
    return f"{rng.choice(first)} {rng.choice(last)} — {role}", " ".join(filter(None, [f"Source: {rng.choice(SOURCES)}.", note]))


def seed_kanban(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    today = now.date()
    for name, color in MEMBERS:
        initials = "".join(w[0] for w in name.split())
        db.execute("INSERT INTO members (name, initials, color) VALUES (?,?,?)", (name, initials, color))
    tag_ids = {name: db.insert("INSERT INTO tags (name, color) VALUES (?,?)", (name, color)) for name, color in TAGS}
    sprint_end = today + dt.timedelta(days=11)
    titles: set[str] = set()
    for bname, desc, columns, (lo, hi), kind in BOARDS:
        bid = db.insert("INSERT INTO boards (name, description) VALUES (?,?)", (bname, desc))
        col_ids = [db.insert("INSERT INTO columns (board_id, name, position) VALUES (?,?,?)", (bid, c, i))
                   for i, (c, _) in enumerate(columns)]
        weights = [w for _, w in columns]
        crew = rng.sample(range(1, len(MEMBERS) + 1), rng.randint(3, 6))  # who works on this board
        n_cards, tries = rng.randint(lo, hi), 0
        made = 0
        while made < n_cards and tries < 2000:
            tries += 1
            title, body = _title(kind, rng)
            if title in titles or title.lower() in RESERVED:
                continue
            titles.add(title)
            made += 1
            # the first card of each column first (no list stands empty), then by the column's weight
            ci = made - 1 if made <= len(col_ids) else rng.choices(range(len(col_ids)), weights=weights)[0]
            col = col_ids[ci]
            done = ci == len(col_ids) - 1 or columns[ci][0] in ("Won't do", "Hired")
            pos = db.scalar("SELECT COUNT(*) FROM cards WHERE column_id = ?", (col,))
            age = rng.randint(1, 120) if kind != "eng" or ci else rng.randint(1, 200)
            created = now - dt.timedelta(days=age, hours=rng.randint(0, 9), minutes=rng.randint(0, 59))
            due = None
            if kind == "eng" and ci and rng.random() < 0.7:
                due = sprint_end - dt.timedelta(days=rng.choice([0, 0, 0, 2, 4, 7, 9, 14]))
            elif kind == "content" and rng.random() < 0.8:
                due = today + dt.timedelta(days=rng.randint(-10, 80))
            elif kind in ("feedback", "hiring", "office") and rng.random() < 0.35:
                due = today + dt.timedelta(days=rng.randint(-20, 30))
            if due and done and due > today:
                due = today - dt.timedelta(days=rng.randint(1, 12))
            cid = db.insert(
                "INSERT INTO cards (board_id, column_id, title, description, due, position, created_at) VALUES (?,?,?,?,?,?,?)",
                (bid, col, title, body, due.isoformat() if due else None, pos, created.strftime("%Y-%m-%d %H:%M")))
            pool = TAGS_FOR[kind]
            for t in rng.sample(pool, min(len(pool), rng.choices([0, 1, 2, 3], [2, 4, 3, 1])[0])):
                db.execute("INSERT INTO card_tags (card_id, tag_id) VALUES (?,?)", (cid, tag_ids[t]))
            people = rng.sample(crew, min(len(crew), rng.choices([0, 1, 2], [3, 6, 1.5] if ci else [6, 3, 0.3])[0]))
            for m in people:
                db.execute("INSERT INTO card_assignees (card_id, member_id) VALUES (?,?)", (cid, m))
            when = created
            # a column's top four (the cards the suites draw) hold no comment or a thread of two or three: with one,
            # the dialog's comment field sits just below its scrolled box but inside a 1280x720 window, where the
            # oracle's in-view test (cua/tasks/oracle.py) takes it as visible and its click lands on the backdrop
            for _ in range(rng.choices([0, 1, 2, 3, 5], [6, 3, 1.5, 0.7, 0.2] if pos >= 4 else [6, 0, 1.5, 0.7, 0])[0]):
                when = min(now - dt.timedelta(minutes=5), when + dt.timedelta(hours=rng.randint(2, 24 * max(1, age // 3))))
                author = rng.choice(people or crew)
                db.execute("INSERT INTO comments (card_id, member_id, body, created_at) VALUES (?,?,?,?)",
                           (cid, author, rng.choice(COMMENTS + COMMENTS_FOR[kind]), when.strftime("%Y-%m-%d %H:%M")))
