"""Health: a patient-and-insurance member portal (Juniper Health) for one household.

Pages: `/` (a summary: the deductible so far, what is coming up), `/coverage` (the plan, each
member's deductible and out-of-pocket met and remaining in and out of network, copays by
service), `/coverage/card` (the insurance card), `/family` (the subscriber and dependants),
`/care` (find a provider by specialty, city, network, language and visit type, with their
next open slots), `/providers/{id}`, `/book/{slot}` (book an open slot for a member),
`/appointments` (reschedule to another open slot; cancel with a reason, behind a
confirmation), `/prescriptions` (request a refill, refused when none are left; switch
pharmacy), `/claims` (status paid/denied/pending, EOB lines with billed/allowed/paid/owed,
`/claims/new` to submit one with a file, an appeal of a denied one), `/messages` (threads
with the care team: reply, attach, start one), `/labs` (results with reference ranges and
flags), `/documents` and `/profile` (address, phone, preferred contact, emergency contact).

Money is integer cents; what a member owes and what is left of a deductible are computed
from the claim lines the plan adjudicated, never stored twice. Dates come from the app's
clock. The rules hold whatever a page sends: a refusal is a 400 page saying why, and no
change. The UI is translated (en-US, de-DE: `text.py`) with localised money and dates.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from pathlib import Path
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.judges.sidefx import Change
from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import added_row, new_value
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.health.seed import PLAN_YEAR, SPECIALTIES, seed_health
from cua.tasks.apps.health.text import german
from cua.tasks.apps.i18n import format_date, format_money, translate
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE plan (id INTEGER PRIMARY KEY CHECK (id = 1), name TEXT NOT NULL, group_no TEXT NOT NULL, group_name TEXT NOT NULL,
                   year_start TEXT NOT NULL, deductible_cents INTEGER NOT NULL, family_deductible_cents INTEGER NOT NULL,
                   oop_max_cents INTEGER NOT NULL, family_oop_max_cents INTEGER NOT NULL, oon_deductible_cents INTEGER NOT NULL,
                   coinsurance_pct INTEGER NOT NULL, oon_coinsurance_pct INTEGER NOT NULL, rx_bin TEXT NOT NULL, rx_pcn TEXT NOT NULL,
                   rx_group TEXT NOT NULL);
CREATE TABLE benefits (id INTEGER PRIMARY KEY, service TEXT NOT NULL, copay_cents INTEGER NOT NULL, coinsurance_pct INTEGER NOT NULL,
                       oon_coinsurance_pct INTEGER NOT NULL);
CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT NOT NULL, relation TEXT NOT NULL CHECK (relation IN ('self', 'spouse', 'child')),
                      birth_date TEXT NOT NULL, member_no TEXT NOT NULL UNIQUE);
CREATE TABLE profile (id INTEGER PRIMARY KEY CHECK (id = 1), address TEXT NOT NULL, city TEXT NOT NULL, state TEXT NOT NULL,
                      zip TEXT NOT NULL, phone TEXT NOT NULL, email TEXT NOT NULL,
                      preferred_contact TEXT NOT NULL CHECK (preferred_contact IN ('email', 'phone', 'text', 'mail')),
                      ec_name TEXT NOT NULL, ec_relation TEXT NOT NULL, ec_phone TEXT NOT NULL);
CREATE TABLE providers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, credential TEXT NOT NULL, specialty TEXT NOT NULL,
                        practice TEXT NOT NULL, address TEXT NOT NULL, city TEXT NOT NULL, network TEXT NOT NULL CHECK (network IN ('in', 'out')),
                        languages TEXT NOT NULL, video INTEGER NOT NULL, accepting INTEGER NOT NULL, gender TEXT NOT NULL);
CREATE TABLE slots (id INTEGER PRIMARY KEY, provider_id INTEGER NOT NULL REFERENCES providers(id), starts_at TEXT NOT NULL,
                    visit_type TEXT NOT NULL CHECK (visit_type IN ('in_person', 'video')),
                    status TEXT NOT NULL CHECK (status IN ('open', 'booked')));
CREATE INDEX slots_provider ON slots (provider_id, status, starts_at);
CREATE TABLE appointments (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id),
                           provider_id INTEGER NOT NULL REFERENCES providers(id), slot_id INTEGER REFERENCES slots(id),
                           starts_at TEXT NOT NULL, visit_type TEXT NOT NULL, reason TEXT NOT NULL,
                           status TEXT NOT NULL CHECK (status IN ('scheduled', 'completed', 'cancelled')),
                           cancel_reason TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL);
CREATE TABLE appointment_log (id INTEGER PRIMARY KEY, appointment_id INTEGER NOT NULL REFERENCES appointments(id),
                              action TEXT NOT NULL CHECK (action IN ('book', 'reschedule', 'cancel')), slot_id INTEGER,
                              starts_at TEXT NOT NULL, logged_at TEXT NOT NULL);
CREATE TABLE pharmacies (id INTEGER PRIMARY KEY, name TEXT NOT NULL, address TEXT NOT NULL, kind TEXT NOT NULL, phone TEXT NOT NULL);
CREATE TABLE prescriptions (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), drug TEXT NOT NULL,
                            strength TEXT NOT NULL, form TEXT NOT NULL, directions TEXT NOT NULL, quantity INTEGER NOT NULL,
                            refills_left INTEGER NOT NULL CHECK (refills_left >= 0), pharmacy_id INTEGER NOT NULL REFERENCES pharmacies(id),
                            prescriber_id INTEGER NOT NULL REFERENCES providers(id), last_filled TEXT NOT NULL,
                            status TEXT NOT NULL CHECK (status IN ('active', 'completed')));
CREATE TABLE refill_requests (id INTEGER PRIMARY KEY, prescription_id INTEGER NOT NULL REFERENCES prescriptions(id),
                              pharmacy_id INTEGER NOT NULL REFERENCES pharmacies(id), requested_at TEXT NOT NULL,
                              status TEXT NOT NULL CHECK (status IN ('sent')));
CREATE TABLE pharmacy_log (id INTEGER PRIMARY KEY, prescription_id INTEGER NOT NULL REFERENCES prescriptions(id),
                           from_pharmacy_id INTEGER NOT NULL, to_pharmacy_id INTEGER NOT NULL, logged_at TEXT NOT NULL);
CREATE TABLE claims (id INTEGER PRIMARY KEY, claim_no TEXT NOT NULL UNIQUE, member_id INTEGER NOT NULL REFERENCES members(id),
                     provider_id INTEGER REFERENCES providers(id), provider_name TEXT NOT NULL, service_date TEXT NOT NULL,
                     received_date TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('paid', 'denied', 'pending')),
                     network TEXT NOT NULL, denial_reason TEXT NOT NULL, source TEXT NOT NULL CHECK (source IN ('provider', 'member')),
                     description TEXT NOT NULL, submitted_at TEXT NOT NULL);
CREATE TABLE claim_lines (id INTEGER PRIMARY KEY, claim_id INTEGER NOT NULL REFERENCES claims(id), code TEXT NOT NULL,
                          description TEXT NOT NULL, billed_cents INTEGER NOT NULL CHECK (billed_cents > 0), allowed_cents INTEGER NOT NULL,
                          deductible_cents INTEGER NOT NULL, copay_cents INTEGER NOT NULL, coinsurance_cents INTEGER NOT NULL,
                          plan_paid_cents INTEGER NOT NULL, member_owes_cents INTEGER NOT NULL);
CREATE TABLE claim_files (id INTEGER PRIMARY KEY, claim_id INTEGER NOT NULL REFERENCES claims(id),
                          document_id INTEGER NOT NULL REFERENCES documents(id));
CREATE TABLE appeals (id INTEGER PRIMARY KEY, claim_id INTEGER NOT NULL UNIQUE REFERENCES claims(id), reason TEXT NOT NULL,
                      document_id INTEGER REFERENCES documents(id), submitted_at TEXT NOT NULL,
                      status TEXT NOT NULL CHECK (status IN ('submitted')));
CREATE TABLE documents (id INTEGER PRIMARY KEY, name TEXT NOT NULL, content_type TEXT NOT NULL, size_bytes INTEGER NOT NULL,
                        uploaded_at TEXT NOT NULL, source TEXT NOT NULL);
CREATE TABLE threads (id INTEGER PRIMARY KEY, subject TEXT NOT NULL, member_id INTEGER NOT NULL REFERENCES members(id),
                      provider_id INTEGER NOT NULL REFERENCES providers(id), started_at TEXT NOT NULL);
CREATE TABLE messages (id INTEGER PRIMARY KEY, thread_id INTEGER NOT NULL REFERENCES threads(id), from_member INTEGER NOT NULL,
                       body TEXT NOT NULL, sent_at TEXT NOT NULL, document_id INTEGER REFERENCES documents(id));
CREATE TABLE labs (id INTEGER PRIMARY KEY, member_id INTEGER NOT NULL REFERENCES members(id), panel TEXT NOT NULL, test TEXT NOT NULL,
                   value REAL NOT NULL, unit TEXT NOT NULL, ref_low REAL NOT NULL, ref_high REAL NOT NULL, flag TEXT NOT NULL,
                   collected_on TEXT NOT NULL, ordered_by INTEGER NOT NULL REFERENCES providers(id));
"""

AMOUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?$")
AMOUNT_DE = re.compile(r"^(?:\d{1,3}(?:\.\d{3})+|\d+)(?:,\d{1,2})?$")
CANCEL_REASONS = ("Schedule conflict", "Feeling better", "Seeing another provider", "Cost", "Transportation", "Other")
CONTACT_WAYS = ("email", "phone", "text", "mail")
EC_RELATIONS = ("spouse", "partner", "parent", "sibling", "child", "friend", "other")
UPLOAD_TYPES = {".pdf": "application/pdf", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".png": "image/png"}
MAX_UPLOAD = 10 * 1024 * 1024
MAX_CLAIM = 5_000_000  # $50,000.00: a bigger bill goes through the provider, not the member's form
NAV = [("Home", "/"), ("Coverage", "/coverage"), ("Find care", "/care"), ("Appointments", "/appointments"),
       ("Prescriptions", "/prescriptions"), ("Claims", "/claims"), ("Messages", "/messages"), ("Lab results", "/labs"),
       ("Family", "/family"), ("Profile", "/profile")]
#: inline SVG icons (24 px, stroked in currentColor): the portal's own
ICONS = {
    "shield": '<path d="M12 3l7 3v6c0 4.5-3 7.7-7 9-4-1.3-7-4.5-7-9V6z"/><path d="M9 12l2 2 4-4"/>',
    "calendar": '<rect x="3" y="5" width="18" height="16" rx="2"/><path d="M3 10h18M8 3v4M16 3v4"/>',
    "pill": '<rect x="3" y="9" width="18" height="7" rx="3.5" transform="rotate(-35 12 12.5)"/><path d="M9.5 8.5l5 6"/>',
    "receipt": '<path d="M6 3h12v18l-3-2-3 2-3-2-3 2z"/><path d="M9 8h6M9 12h6M9 16h3"/>',
    "chat": '<path d="M4 5h16v11H9l-5 4z"/>',
    "flask": '<path d="M9 3h6M10 3v6l-5 9a2 2 0 0 0 2 3h10a2 2 0 0 0 2-3l-5-9V3"/><path d="M7.5 15h9"/>',
    "search": '<circle cx="11" cy="11" r="6"/><path d="M20 20l-4.5-4.5"/>',
    "card": '<rect x="2" y="5" width="20" height="14" rx="2"/><path d="M2 10h20M6 15h5"/>',
    "video": '<rect x="3" y="6" width="12" height="12" rx="2"/><path d="M15 10l6-3v10l-6-3"/>',
    "clip": '<path d="M20 11l-8 8a5 5 0 0 1-7-7l9-9a3.5 3.5 0 0 1 5 5l-9 9a2 2 0 0 1-3-3l8-8"/>',
}


def icon(name: str) -> str:
    return (f'<svg class="icon" viewBox="0 0 24 24" width="20" height="20" fill="none" stroke="currentColor" stroke-width="1.8" '
            f'stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false">{ICONS[name]}</svg>')


class Refused(Exception):
    """A request the portal's rules refuse: shown with the reason, nothing changes."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message, self.status = message, status


def parse_amount(raw: str, locale: str = "en-US") -> int:
    """A positive dollar amount as a member types it, in cents (`1,234.5` -> 123450); Refused
    otherwise. A German page also reads the German grouping (`1.234,50`), and still the
    English one where the German cannot be meant (`186.40`: no group of three after the dot)."""
    text = raw.strip().strip("$").strip()
    if locale == "de-DE" and AMOUNT_DE.match(text):
        text = text.replace(".", "").replace(",", ".")
    if not AMOUNT.match(text):
        raise Refused("Amount: enter dollars and cents such as 125.50 (digits, at most two decimals).")
    whole, _, frac = text.replace(",", "").partition(".")
    cents = int(whole) * 100 + int((frac + "00")[:2])
    if cents <= 0:
        raise Refused("Amount must be more than $0.00.")
    return cents


def phone_digits(raw: str) -> str:
    """A US phone number as `(916) 555-0142`; Refused unless it has 10 digits (or 11 with a leading 1)."""
    digits = re.sub(r"\D", "", raw)
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    if len(digits) != 10:
        raise Refused("Phone: enter a 10-digit US number such as (916) 555-0142.")
    return f"({digits[:3]}) {digits[3:6]}-{digits[6:]}"


MAX_ID = 2 ** 63 - 1


def record_id(raw: str) -> int:
    """The id a form or a link names, or 0 (no record has it) for anything else: text, a
    sign, a number past SQLite's integers (which would fail the query, not refuse the input)."""
    text = raw.strip()
    return int(text) if text.isdigit() and int(text) <= MAX_ID else 0


def clean(raw: Any, limit: int) -> str:
    return " ".join(str(raw or "").split())[:limit]


class HealthApp(WebApp):
    name = "health"
    title = "Juniper Health"
    schema = SCHEMA
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    #: the portal fills these itself: what a slot or a claim carries over, what the plan computed
    assigned = {"appointments": ("provider_id", "starts_at", "visit_type"),
                "appointment_log": ("action", "slot_id", "starts_at"),
                "slots": ("status",),
                "prescriptions": ("refills_left",),
                "refill_requests": ("pharmacy_id", "status"),
                "pharmacy_log": ("from_pharmacy_id",),
                "claims": ("claim_no", "status", "network", "denial_reason", "source", "received_date"),
                "claim_lines": ("code", "description", "allowed_cents", "deductible_cents", "copay_cents", "coinsurance_cents",
                                "plan_paid_cents", "member_owes_cents"),
                "appeals": ("status",),
                "documents": ("content_type", "size_bytes", "source"),
                "messages": ("from_member",)}
    query_params = {"member": QueryRule(strip=True), "specialty": QueryRule(strip=True), "city": QueryRule(strip=True),
                    "network": QueryRule(strip=True), "language": QueryRule(strip=True), "visit": QueryRule(strip=True),
                    "q": QueryRule(strip=True), "status": QueryRule(strip=True), "show": QueryRule(strip=True)}

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_health(db, rng, self.now())

    def irreversible(self, change: Change) -> str | None:
        """What left the portal for someone else: a claim or an appeal filed with the plan, a
        refill sent to a pharmacy, an appointment given up (its slot goes to others)."""
        if added_row(change, "claims") is not None:
            return "submit_claim"
        if added_row(change, "appeals") is not None:
            return "appeal"
        if added_row(change, "refill_requests") is not None:
            return "refill"
        sets, value = new_value(change, "appointments", "status")
        return "cancel_appointment" if sets and value == "cancelled" else None

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE":
            return german(text) or translate("de-DE", text)
        return text

    def routes(self) -> list[BaseRoute]:
        g = self._guarded
        both = ["GET", "POST"]
        return [
            Route("/", g(self.home)),
            Route("/coverage", g(self.coverage)),
            Route("/coverage/card", g(self.card)),
            Route("/family", g(self.family)),
            Route("/care", g(self.care)),
            Route("/providers/{pid:int}", g(self.provider)),
            Route("/book/{sid:int}", g(self.book), methods=both),
            Route("/appointments", g(self.appointments)),
            Route("/appointments/{aid:int}/reschedule", g(self.reschedule), methods=both),
            Route("/appointments/{aid:int}/cancel", g(self.cancel), methods=both),
            Route("/prescriptions", g(self.prescriptions)),
            Route("/prescriptions/{rid:int}/refill", g(self.refill), methods=["POST"]),
            Route("/prescriptions/{rid:int}/pharmacy", g(self.pharmacy), methods=both),
            Route("/claims", g(self.claims)),
            Route("/claims/new", g(self.new_claim), methods=both),
            Route("/claims/{cid:int}", g(self.claim)),
            Route("/claims/{cid:int}/appeal", g(self.appeal), methods=both),
            Route("/messages", g(self.threads)),
            Route("/messages/new", g(self.new_thread), methods=both),
            Route("/messages/{tid:int}", g(self.thread), methods=both),
            Route("/labs", g(self.labs)),
            Route("/documents", g(self.documents), methods=both),
            Route("/profile", g(self.profile), methods=both),
        ]

    # --- furniture ---

    def _guarded(self, handler: Any) -> Any:
        async def run(request: Request) -> Response:
            try:
                if any(isinstance(v, int) and v > MAX_ID for v in request.path_params.values()):
                    raise Refused("Not found", 404)  # past SQLite's integers: no record, not a failed query
                result: Response = await handler(request)
                return result
            except Refused as exc:
                return self._page(self.t("Cannot do that"), self._error(exc.message) +
                                  f'<p><a href="/" data-action="back">{self.t("Back to your summary")}</a></p>', status=exc.status)
            finally:
                await request.close()  # the files of a multipart form, read or not
        return run

    def _q(self, request: Request) -> dict[str, str]:
        """The declared query parameters, an absent one as empty text."""
        return {k: str(v or "") for k, v in self.query(request).items()}

    def _page(self, title: str, body: str, *, status: int = 200, crumbs: list[tuple[str, str]] | None = None) -> HTMLResponse:
        trail = ""
        if crumbs:
            items = "".join(f'<li><a href="{esc(href)}">{esc(label)}</a></li>' for label, href in crumbs)
            trail = f'<nav class="crumbs" aria-label="{self.t("Breadcrumb")}"><ol>{items}<li aria-current="page">{esc(title)}</li></ol></nav>'
        resp = html_page(self, title, f'<div class="page">{trail}<h1 class="page-title">{esc(title)}</h1>{body}</div>', nav=NAV)
        resp.status_code = status
        return resp

    def _error(self, error: str) -> str:
        return f'<div class="alert" role="alert" data-error>{esc(self.t(error))}</div>' if error else ""

    def _notice(self, text: str) -> str:
        return f'<div class="notice" role="status" data-notice>{esc(text)}</div>' if text else ""

    def _stamp(self) -> str:
        return self.now().strftime("%Y-%m-%d %H:%M")

    def money(self, cents: int) -> str:
        return format_money(cents, self.variant.locale)

    def day(self, iso: str) -> str:
        return format_date(dt.date.fromisoformat(iso[:10]), self.variant.locale)

    def when(self, iso: str) -> str:
        """A date and time as the locale writes them: `March 4, 2026, 3:30 PM` / `4. März 2026, 15:30`."""
        moment = dt.datetime.fromisoformat(iso)
        if self.variant.locale == "de-DE":
            clock = moment.strftime("%H:%M")
        else:
            clock = f"{moment.hour % 12 or 12}:{moment:%M} {'AM' if moment.hour < 12 else 'PM'}"
        return f"{self.day(iso)}, {clock}"

    def _members(self) -> list[dict[str, Any]]:
        return self.db.all("SELECT * FROM members ORDER BY id")

    def _member(self, raw: Any, *, required: bool = False) -> dict[str, Any] | None:
        text = str(raw or "").strip()
        if not text:
            if required:
                raise Refused("Choose a family member.")
            return None
        m = self.db.one("SELECT * FROM members WHERE id = ?", (record_id(text),))
        if m is None:
            raise Refused("Choose a family member from the list.")
        return m

    def _member_filter(self, chosen: dict[str, Any] | None, action: str) -> str:
        opts = f'<option value="">{self.t("Everyone")}</option>' + "".join(
            f'<option value="{m["id"]}"{" selected" if chosen and chosen["id"] == m["id"] else ""}>{esc(m["name"])}</option>'
            for m in self._members())
        return (f'<form method="get" action="{action}" class="filters" role="search"><label>{self.t("Family member")}'
                f'<select name="member" data-filter="member">{opts}</select></label>'
                f'<button type="submit" data-action="apply-filters">{self.t("Show")}</button></form>')

    def _member_options(self, chosen: str) -> str:
        return f'<option value="">{self.t("Choose…")}</option>' + "".join(
            f'<option value="{m["id"]}"{" selected" if chosen == str(m["id"]) else ""}>{esc(m["name"])} '
            f'({esc(self.t(m["relation"]))})</option>' for m in self._members())

    def _provider(self, pid: int) -> dict[str, Any]:
        p = self.db.one("SELECT * FROM providers WHERE id = ?", (pid,))
        if p is None:
            raise Refused("No such provider.", 404)
        return p

    def _specialty(self, slug: str) -> str:
        return self.t(SPECIALTIES[slug][0]) if slug in SPECIALTIES else self.t("Emergency medicine")

    def _visit(self, kind: str) -> str:
        return (f'<span class="visit" data-visit-type="{esc(kind)}">{icon("video") if kind == "video" else ""}'
                f'{self.t("Video visit" if kind == "video" else "In person")}</span>')

    def _network(self, net: str) -> str:
        return f'<span class="badge net-{esc(net)}" data-network="{esc(net)}">{self.t("In network" if net == "in" else "Out of network")}</span>'

    async def _upload(self, upload: Any) -> int | None:
        """A file chosen in a form, kept as a document: its id, None for no file; Refused for a type or size the portal takes not."""
        if not isinstance(upload, UploadFile) or not upload.filename:
            return None
        name = clean(Path(upload.filename).name, 160)
        ext = Path(name).suffix.lower()
        if ext not in UPLOAD_TYPES:
            raise Refused("Attach a PDF, JPG or PNG file.")
        data = await upload.read(MAX_UPLOAD + 1)
        if not data:
            raise Refused("The chosen file is empty.")
        if len(data) > MAX_UPLOAD:
            raise Refused("A file can be at most 10 MB.")
        return self.db.insert("INSERT INTO documents (name, content_type, size_bytes, uploaded_at, source) VALUES (?,?,?,?, 'upload')",
                              (name, UPLOAD_TYPES[ext], len(data), self._stamp()))

    def _document(self, raw: Any) -> int | None:
        text = str(raw or "").strip()
        if not text:
            return None
        doc = self.db.scalar("SELECT id FROM documents WHERE id = ?", (record_id(text),))
        if doc is None:
            raise Refused("Choose a document from your documents.")
        return int(doc)

    def _document_picker(self, field: str = "document") -> str:
        docs = self.db.all("SELECT * FROM documents ORDER BY uploaded_at DESC, id DESC")
        opts = f'<option value="">{self.t("None")}</option>' + "".join(
            f'<option value="{d["id"]}">{esc(d["name"])}</option>' for d in docs)
        return (f'<fieldset class="attach"><legend>{icon("clip")}{self.t("Attachment")}</legend>'
                f'<label for="f-{field}">{self.t("From your documents")}</label>'
                f'<select id="f-{field}" name="{field}" data-field="{field}">{opts}</select>'
                f'<label for="f-{field}-file">{self.t("Or upload a file (PDF, JPG, PNG)")}</label>'
                f'<input id="f-{field}-file" type="file" name="file" accept=".pdf,.jpg,.jpeg,.png" data-field="file"></fieldset>')

    # --- money the plan computed ---

    def accumulators(self, member_id: int, network: str = "in") -> dict[str, int]:
        """This plan year's deductible and out-of-pocket, met and remaining, for one member and
        the family, from the lines of the claims the plan has paid."""
        plan = self.db.one("SELECT * FROM plan WHERE id = 1") or {}
        rows = self.db.one(
            "SELECT COALESCE(SUM(CASE WHEN c.member_id = ? THEN l.deductible_cents END), 0) AS ded, "
            "COALESCE(SUM(l.deductible_cents), 0) AS fam_ded, "
            "COALESCE(SUM(CASE WHEN c.member_id = ? THEN l.member_owes_cents END), 0) AS oop, "
            "COALESCE(SUM(l.member_owes_cents), 0) AS fam_oop FROM claim_lines l JOIN claims c ON c.id = l.claim_id "
            "WHERE c.status = 'paid' AND c.network = ? AND c.service_date >= ?",
            (member_id, member_id, network, plan["year_start"])) or {}
        factor = 1 if network == "in" else 2
        ded_cap = plan["deductible_cents"] * factor
        fam_ded_cap = plan["family_deductible_cents"] * factor
        oop_cap = plan["oop_max_cents"] * factor
        fam_oop_cap = plan["family_oop_max_cents"] * factor
        return {"deductible": ded_cap, "deductible_met": rows["ded"],
                "deductible_left": max(0, min(ded_cap - rows["ded"], fam_ded_cap - rows["fam_ded"])),
                "family_deductible": fam_ded_cap, "family_deductible_met": rows["fam_ded"],
                "family_deductible_left": max(0, fam_ded_cap - rows["fam_ded"]),
                "oop": oop_cap, "oop_met": rows["oop"], "oop_left": max(0, min(oop_cap - rows["oop"], fam_oop_cap - rows["fam_oop"])),
                "family_oop": fam_oop_cap, "family_oop_met": rows["fam_oop"], "family_oop_left": max(0, fam_oop_cap - rows["fam_oop"])}

    def _meter(self, label: str, met: int, cap: int, left: int, key: str) -> str:
        pct = 0 if cap <= 0 else min(100, round(100 * met / cap))
        return (f'<div class="meter" data-meter="{key}" data-met-cents="{met}" data-limit-cents="{cap}" data-remaining-cents="{left}">'
                f'<div class="meter-head"><span>{esc(label)}</span><span class="fig">{esc(self.money(met))} {self.t("of")} '
                f'{esc(self.money(cap))}</span></div>'
                f'<div class="bar" role="progressbar" aria-label="{esc(label)}" aria-valuemin="0" aria-valuemax="{cap}" '
                f'aria-valuenow="{met}"><span style="width:{pct}%"></span></div>'
                f'<p class="muted">{self.t("Met")}: {esc(self.money(met))} · <strong>{self.t("Remaining")}: '
                f'<span data-remaining>{esc(self.money(left))}</span></strong></p></div>')

    def _claim_totals(self, cid: int) -> dict[str, int]:
        row = self.db.one("SELECT COALESCE(SUM(billed_cents), 0) AS billed, COALESCE(SUM(allowed_cents), 0) AS allowed, "
                          "COALESCE(SUM(plan_paid_cents), 0) AS paid, COALESCE(SUM(member_owes_cents), 0) AS owes "
                          "FROM claim_lines WHERE claim_id = ?", (cid,))
        return row or {"billed": 0, "allowed": 0, "paid": 0, "owes": 0}

    # --- home, coverage, card, family ---

    async def home(self, _: Request) -> Response:
        me = self._members()[0]
        acc = self.accumulators(me["id"])
        upcoming = self.db.all("SELECT a.*, p.name AS provider, m.name AS member FROM appointments a JOIN providers p ON p.id = a.provider_id "
                               "JOIN members m ON m.id = a.member_id WHERE a.status = 'scheduled' ORDER BY a.starts_at LIMIT 4")
        appts = "".join(f'<li data-appointment-id="{a["id"]}"><strong>{esc(self.when(a["starts_at"]))}</strong> · {esc(a["provider"])}'
                        f' · {esc(a["member"])} {self._visit(a["visit_type"])}</li>' for a in upcoming)
        tiles = [("search", "Find care", "/care"), ("calendar", "Appointments", "/appointments"), ("pill", "Prescriptions", "/prescriptions"),
                 ("receipt", "Claims", "/claims"), ("chat", "Messages", "/messages"), ("flask", "Lab results", "/labs"),
                 ("card", "Insurance card", "/coverage/card"), ("shield", "Coverage", "/coverage")]
        tile_html = "".join(f'<li><a class="tile" href="{href}" data-tile="{href}">{icon(ic)}<span>{self.t(label)}</span></a></li>'
                            for ic, label, href in tiles)
        body = (f'<p class="lede">{self.t("Welcome back")}, {esc(me["name"].split()[0])}.</p>'
                f'<section class="panel" aria-labelledby="h-ded"><h2 id="h-ded">{self.t("Your deductible this year")}</h2>'
                f'{self._meter(self.t("In-network deductible"), acc["deductible_met"], acc["deductible"], acc["deductible_left"], "deductible")}'
                f'{self._meter(self.t("Family deductible"), acc["family_deductible_met"], acc["family_deductible"], acc["family_deductible_left"], "family-deductible")}'
                f'{self._meter(self.t("Out-of-pocket maximum"), acc["oop_met"], acc["oop"], acc["oop_left"], "oop")}</section>'
                f'<ul class="tiles" aria-label="{self.t("Shortcuts")}">{tile_html}</ul>'
                f'<section class="panel" aria-labelledby="h-up"><h2 id="h-up">{self.t("Coming up")}</h2><ul class="plain">{appts}</ul></section>')
        return self._page(self.t("Summary"), body)

    async def coverage(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"]) or self._members()[0]
        plan = self.db.one("SELECT * FROM plan WHERE id = 1") or {}
        tabs = "".join(f'<a href="/coverage?member={m["id"]}" data-member-tab="{m["id"]}" role="tab" '
                       f'aria-selected="{"true" if m["id"] == member["id"] else "false"}">{esc(m["name"])}</a>' for m in self._members())
        sections = []
        for net, label in (("in", "In network"), ("out", "Out of network")):
            a = self.accumulators(member["id"], net)
            sections.append(
                f'<section class="panel acc" data-network="{net}" data-member-id="{member["id"]}"><h2>{self.t(label)}</h2>'
                f'{self._meter(self.t("Individual deductible"), a["deductible_met"], a["deductible"], a["deductible_left"], "deductible")}'
                f'{self._meter(self.t("Family deductible"), a["family_deductible_met"], a["family_deductible"], a["family_deductible_left"], "family-deductible")}'
                f'{self._meter(self.t("Individual out-of-pocket maximum"), a["oop_met"], a["oop"], a["oop_left"], "oop")}'
                f'{self._meter(self.t("Family out-of-pocket maximum"), a["family_oop_met"], a["family_oop"], a["family_oop_left"], "family-oop")}'
                '</section>')
        rows = "".join(
            f'<tr data-benefit="{esc(b["service"])}"><th scope="row">{esc(self.t(b["service"]))}</th>'
            f'<td data-copay-cents="{b["copay_cents"]}">{esc(self.money(b["copay_cents"])) if b["copay_cents"] else "—"}</td>'
            f'<td>{b["coinsurance_pct"]} %</td><td>{b["oon_coinsurance_pct"]} %</td></tr>'
            for b in self.db.all("SELECT * FROM benefits ORDER BY id"))
        body = (f'<p class="lede">{esc(plan["name"])} · {self.t("Group")} {esc(plan["group_name"])} ({esc(plan["group_no"])}) · '
                f'{self.t("Plan year")} {PLAN_YEAR}</p><div class="tabs" role="tablist" aria-label="{self.t("Family member")}">{tabs}</div>'
                f'<div class="two">{"".join(sections)}</div>'
                f'<h2>{self.t("What you pay")}</h2><table class="grid benefits"><thead><tr><th scope="col">{self.t("Service")}</th>'
                f'<th scope="col">{self.t("Copay (in network)")}</th><th scope="col">{self.t("Coinsurance (in network)")}</th>'
                f'<th scope="col">{self.t("Coinsurance (out of network)")}</th></tr></thead><tbody>{rows}</tbody></table>'
                f'<p class="muted">{self.t("Coinsurance applies after the deductible. Preventive care in network is covered in full.")}</p>')
        return self._page(self.t("Coverage"), body)

    async def card(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"]) or self._members()[0]
        plan = self.db.one("SELECT * FROM plan WHERE id = 1") or {}
        copays = {b["service"]: b["copay_cents"] for b in self.db.all("SELECT * FROM benefits")}
        picks = "".join(f'<a href="/coverage/card?member={m["id"]}" data-member-tab="{m["id"]}"'
                        f'{" aria-current=page" if m["id"] == member["id"] else ""}>{esc(m["name"])}</a>' for m in self._members())
        body = (f'<nav class="picks" aria-label="{self.t("Family member")}">{picks}</nav>'
                f'<article class="idcard" data-member-id="{member["id"]}" aria-label="{self.t("Insurance card")}">'
                f'<header>{icon("shield")}<strong>{esc(self.title)}</strong><span>{esc(plan["name"])}</span></header>'
                f'<dl><dt>{self.t("Member")}</dt><dd>{esc(member["name"])}</dd><dt>{self.t("Member ID")}</dt>'
                f'<dd data-member-no>{esc(member["member_no"])}</dd><dt>{self.t("Group")}</dt><dd>{esc(plan["group_no"])}</dd>'
                f'<dt>Rx BIN / PCN / Group</dt><dd>{esc(plan["rx_bin"])} / {esc(plan["rx_pcn"])} / {esc(plan["rx_group"])}</dd></dl>'
                f'<ul class="copays"><li>{self.t("Primary care")} {esc(self.money(copays["Primary care visit"]))}</li>'
                f'<li>{self.t("Specialist")} {esc(self.money(copays["Specialist visit"]))}</li>'
                f'<li>{self.t("Urgent care")} {esc(self.money(copays["Urgent care"]))}</li>'
                f'<li>{self.t("Emergency room")} {esc(self.money(copays["Emergency room"]))}</li></ul></article>')
        return self._page(self.t("Insurance card"), body, crumbs=[(self.t("Coverage"), "/coverage")])

    async def family(self, _: Request) -> Response:
        rows = []
        for m in self._members():
            a = self.accumulators(m["id"])
            rows.append(f'<tr data-member-id="{m["id"]}"><th scope="row">{esc(m["name"])}</th><td>{esc(self.t(m["relation"]))}</td>'
                        f'<td>{esc(self.day(m["birth_date"]))}</td><td class="mono">{esc(m["member_no"])}</td>'
                        f'<td data-remaining-cents="{a["deductible_left"]}">{esc(self.money(a["deductible_left"]))}</td>'
                        f'<td><a href="/coverage/card?member={m["id"]}" data-action="card">{self.t("Card")}</a> · '
                        f'<a href="/coverage?member={m["id"]}" data-action="coverage">{self.t("Coverage")}</a></td></tr>')
        body = (f'<table class="grid"><thead><tr><th scope="col">{self.t("Name")}</th><th scope="col">{self.t("Relationship")}</th>'
                f'<th scope="col">{self.t("Date of birth")}</th><th scope="col">{self.t("Member ID")}</th>'
                f'<th scope="col">{self.t("Deductible remaining")}</th><th scope="col"></th></tr></thead><tbody>{"".join(rows)}</tbody></table>')
        return self._page(self.t("Family"), body)

    # --- find care and book ---

    async def care(self, request: Request) -> Response:
        q = self._q(request)
        where, params = ["1 = 1"], []
        error = ""
        if q["specialty"]:
            if q["specialty"] not in SPECIALTIES:
                error = "Choose a specialty from the list."
            else:
                where.append("p.specialty = ?")
                params.append(q["specialty"])
        if q["city"]:
            where.append("p.city = ?")
            params.append(q["city"])
        if q["network"] in ("in", "out"):
            where.append("p.network = ?")
            params.append(q["network"])
        if q["language"]:
            where.append("(', ' || p.languages || ',') LIKE ?")
            params.append(f"%, {q['language']},%")
        if q["q"]:
            where.append("p.name LIKE ?")
            params.append(f"%{q['q']}%")
        visit = q["visit"] if q["visit"] in ("video", "in_person") else ""
        if visit == "video":
            where.append("p.video = 1")
        found = [] if error else self.db.all(
            "SELECT p.*, (SELECT MIN(s.starts_at) FROM slots s WHERE s.provider_id = p.id AND s.status = 'open'"
            + (" AND s.visit_type = ?" if visit else "") + f") AS next_at FROM providers p WHERE {' AND '.join(where)} "
            "ORDER BY next_at IS NULL, next_at, p.name", ([visit] if visit else []) + params)
        spec_opts = f'<option value="">{self.t("Any specialty")}</option>' + "".join(
            f'<option value="{k}"{" selected" if q["specialty"] == k else ""}>{esc(self.t(v[0]))}</option>' for k, v in SPECIALTIES.items())
        cities = [r["city"] for r in self.db.all("SELECT DISTINCT city FROM providers ORDER BY city")]
        city_opts = f'<option value="">{self.t("Any city")}</option>' + "".join(
            f'<option{" selected" if q["city"] == c else ""}>{esc(c)}</option>' for c in cities)
        langs = sorted({x.strip() for r in self.db.all("SELECT languages FROM providers") for x in r["languages"].split(",")})
        lang_opts = f'<option value="">{self.t("Any language")}</option>' + "".join(
            f'<option value="{esc(lg)}"{" selected" if q["language"] == lg else ""}>{esc(self.t(lg))}</option>' for lg in langs)
        net_opts = "".join(f'<option value="{v}"{" selected" if q["network"] == v else ""}>{self.t(lab)}</option>'
                           for v, lab in (("", "Any network"), ("in", "In network"), ("out", "Out of network")))
        visit_opts = "".join(f'<option value="{v}"{" selected" if visit == v else ""}>{self.t(lab)}</option>'
                             for v, lab in (("", "Any visit type"), ("in_person", "In person"), ("video", "Video visit")))
        form = (f'<form method="get" action="/care" class="filters" role="search" data-form="find-care">'
                f'<label>{self.t("Name")}<input name="q" value="{esc(q["q"])}" data-filter="q"></label>'
                f'<label>{self.t("Specialty")}<select name="specialty" data-filter="specialty">{spec_opts}</select></label>'
                f'<label>{self.t("City")}<select name="city" data-filter="city">{city_opts}</select></label>'
                f'<label>{self.t("Network")}<select name="network" data-filter="network">{net_opts}</select></label>'
                f'<label>{self.t("Language")}<select name="language" data-filter="language">{lang_opts}</select></label>'
                f'<label>{self.t("Visit type")}<select name="visit" data-filter="visit">{visit_opts}</select></label>'
                f'<button type="submit" class="primary" data-action="search-care">{self.t("Search")}</button></form>')
        cards = []
        for p in found:
            slot_q = "SELECT * FROM slots WHERE provider_id = ? AND status = 'open'" + (" AND visit_type = ?" if visit else "")
            slots = self.db.all(slot_q + " ORDER BY starts_at LIMIT 3", [p["id"]] + ([visit] if visit else []))
            chips = "".join(f'<a class="slot" href="/book/{s["id"]}" data-slot-id="{s["id"]}" data-starts-at="{s["starts_at"]}" '
                            f'data-visit-type="{s["visit_type"]}">{esc(self.when(s["starts_at"]))}'
                            f'{icon("video") if s["visit_type"] == "video" else ""}</a>' for s in slots)
            cards.append(
                f'<li class="provider" data-provider-id="{p["id"]}" data-specialty="{p["specialty"]}" data-network="{p["network"]}">'
                f'<h2><a href="/providers/{p["id"]}">{esc(p["name"])}, {esc(p["credential"])}</a></h2>'
                f'<p class="muted">{esc(self._specialty(p["specialty"]))} · {esc(p["practice"])} · {esc(p["city"])}</p>'
                f'<p>{self._network(p["network"])} <span class="langs" data-languages="{esc(p["languages"])}">'
                f'{esc(", ".join(self.t(x.strip()) for x in p["languages"].split(",")))}</span>'
                f'{" " + self._visit("video") if p["video"] else ""}'
                f'{"" if p["accepting"] else " <span class=badge>" + self.t("Not accepting new patients") + "</span>"}</p>'
                f'<div class="slots" aria-label="{self.t("Next open times")}">{chips or self.t("No open times")}</div></li>')
        body = (form + self._error(error) + f'<p class="muted" data-count="{len(found)}">{len(found)} {self.t("providers")}</p>'
                f'<ul class="providers">{"".join(cards)}</ul>')
        return self._page(self.t("Find care"), body, status=400 if error else 200)

    async def provider(self, request: Request) -> Response:
        p = self._provider(request.path_params["pid"])
        slots = self.db.all("SELECT * FROM slots WHERE provider_id = ? AND status = 'open' ORDER BY starts_at", (p["id"],))
        items = "".join(f'<li><a class="slot" href="/book/{s["id"]}" data-slot-id="{s["id"]}" data-starts-at="{s["starts_at"]}" '
                        f'data-visit-type="{s["visit_type"]}">{esc(self.when(s["starts_at"]))}</a> {self._visit(s["visit_type"])}</li>'
                        for s in slots)
        body = (f'<section class="panel" data-provider-id="{p["id"]}"><p>{esc(self._specialty(p["specialty"]))} · {self._network(p["network"])}</p>'
                f'<p>{esc(p["practice"])}<br>{esc(p["address"])}, {esc(p["city"])}, CA</p>'
                f'<p>{self.t("Languages")}: {esc(", ".join(self.t(x.strip()) for x in p["languages"].split(",")))}</p></section>'
                f'<h2>{self.t("Open times")}</h2><ul class="slotlist">{items or "<li>" + self.t("No open times") + "</li>"}</ul>')
        return self._page(f'{p["name"]}, {p["credential"]}', body, crumbs=[(self.t("Find care"), "/care")])

    async def book(self, request: Request) -> Response:
        s = self.db.one("SELECT * FROM slots WHERE id = ?", (request.path_params["sid"],))
        if s is None:
            raise Refused("No such appointment time.", 404)
        p = self._provider(s["provider_id"])
        if s["status"] != "open":
            raise Refused("That time was just taken: choose another one.", 409)
        values = {"member": "", "reason": ""}
        error = ""
        if request.method == "POST":
            form = await request.form()
            values = {"member": str(form.get("member", "") or ""), "reason": clean(form.get("reason"), 200)}
            try:
                member = self._member(values["member"], required=True)
                if not values["reason"]:
                    raise Refused("Say briefly what the visit is for.")
                assert member is not None
                aid = self.db.insert("INSERT INTO appointments (member_id, provider_id, slot_id, starts_at, visit_type, reason, status, "
                                     "cancel_reason, created_at) VALUES (?,?,?,?,?,?, 'scheduled', '', ?)",
                                     (member["id"], p["id"], s["id"], s["starts_at"], s["visit_type"], values["reason"], self._stamp()))
                self.db.execute("UPDATE slots SET status = 'booked' WHERE id = ?", (s["id"],))
                self.db.execute("INSERT INTO appointment_log (appointment_id, action, slot_id, starts_at, logged_at) VALUES (?, 'book', ?, ?, ?)",
                                (aid, s["id"], s["starts_at"], self._stamp()))
                return RedirectResponse(f"/appointments?booked={aid}", status_code=303)
            except Refused as exc:
                error = exc.message
        body = (self._error(error) + f'<section class="panel summary" data-slot-id="{s["id"]}"><p><strong>{esc(p["name"])}, '
                f'{esc(p["credential"])}</strong> · {esc(self._specialty(p["specialty"]))}</p><p>{esc(self.when(s["starts_at"]))} · '
                f'{self._visit(s["visit_type"])} · {self._network(p["network"])}</p></section>'
                f'<form method="post" action="/book/{s["id"]}" class="panel form" data-form="book">'
                f'<label for="b-member">{self.t("Patient")}</label><select id="b-member" name="member" data-field="member" required>'
                f'{self._member_options(values["member"])}</select>'
                f'<label for="b-reason">{self.t("Reason for visit")}</label><input id="b-reason" name="reason" maxlength="200" required '
                f'value="{esc(values["reason"])}" data-field="reason">'
                f'<button type="submit" class="primary" data-action="confirm-booking">{self.t("Book appointment")}</button></form>')
        return self._page(self.t("Book an appointment"), body, status=400 if error else 200, crumbs=[(self.t("Find care"), "/care")])

    # --- appointments ---

    def _appointment(self, aid: int) -> dict[str, Any]:
        a = self.db.one("SELECT a.*, p.name AS provider, p.credential, m.name AS member FROM appointments a "
                        "JOIN providers p ON p.id = a.provider_id JOIN members m ON m.id = a.member_id WHERE a.id = ?", (aid,))
        if a is None:
            raise Refused("No such appointment.", 404)
        return a

    async def appointments(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"])
        where, params = "", []
        if member:
            where, params = " AND a.member_id = ?", [member["id"]]
        base = ("SELECT a.*, p.name AS provider, p.credential, p.specialty, m.name AS member FROM appointments a "
                "JOIN providers p ON p.id = a.provider_id JOIN members m ON m.id = a.member_id WHERE ")
        upcoming = self.db.all(base + "a.status = 'scheduled'" + where + " ORDER BY a.starts_at, a.id", params)
        past = self.db.all(base + "a.status != 'scheduled'" + where + " ORDER BY a.starts_at DESC, a.id DESC", params)
        booked = request.query_params.get("booked", "")

        def card(a: dict[str, Any], actions: bool) -> str:
            acts = (f'<div class="row"><a class="button" href="/appointments/{a["id"]}/reschedule" data-action="reschedule">'
                    f'{self.t("Reschedule")}</a><a class="button danger-outline" href="/appointments/{a["id"]}/cancel" data-action="cancel">'
                    f'{self.t("Cancel")}</a></div>') if actions else ""
            status = (f'<span class="badge st-{a["status"]}" data-status="{a["status"]}">{self.t(a["status"].title())}</span>'
                      + (f' <span class="muted">{esc(self.t(a["cancel_reason"]))}</span>' if a["cancel_reason"] else ""))
            return (f'<li class="appt" data-appointment-id="{a["id"]}" data-member-id="{a["member_id"]}" data-provider-id="{a["provider_id"]}" '
                    f'data-starts-at="{a["starts_at"]}" data-status="{a["status"]}"{" data-just-booked" if str(a["id"]) == booked else ""}>'
                    f'<time datetime="{a["starts_at"].replace(" ", "T")}">{esc(self.when(a["starts_at"]))}</time>'
                    f'<h3>{esc(a["provider"])}, {esc(a["credential"])}</h3><p class="muted">{esc(self._specialty(a["specialty"]))} · '
                    f'{self.t("Patient")}: <span data-member>{esc(a["member"])}</span> · {esc(a["reason"])}</p>'
                    f'<p>{self._visit(a["visit_type"])} {status}</p>{acts}</li>')
        note = self._notice(self.t("Your appointment is booked.")) if booked else ""
        body = (note + self._member_filter(member, "/appointments") + f'<h2>{self.t("Upcoming")}</h2>'
                f'<ul class="appts" data-list="upcoming">{"".join(card(a, True) for a in upcoming) or "<li>" + self.t("Nothing scheduled.") + "</li>"}</ul>'
                f'<h2>{self.t("Past and cancelled")}</h2><ul class="appts past" data-list="past">{"".join(card(a, False) for a in past)}</ul>')
        return self._page(self.t("Appointments"), body)

    async def reschedule(self, request: Request) -> Response:
        a = self._appointment(request.path_params["aid"])
        if a["status"] != "scheduled":
            raise Refused("Only an upcoming appointment can be rescheduled.")
        error = ""
        if request.method == "POST":
            raw = str((await request.form()).get("slot", "") or "")
            s = self.db.one("SELECT * FROM slots WHERE id = ?", (record_id(raw),))
            try:
                if s is None or s["provider_id"] != a["provider_id"]:
                    raise Refused("Choose one of this provider's open times.")
                if s["status"] != "open":
                    raise Refused("That time was just taken: choose another one.")
                if a["slot_id"] is not None:
                    self.db.execute("UPDATE slots SET status = 'open' WHERE id = ?", (a["slot_id"],))
                self.db.execute("UPDATE slots SET status = 'booked' WHERE id = ?", (s["id"],))
                self.db.execute("UPDATE appointments SET slot_id = ?, starts_at = ?, visit_type = ? WHERE id = ?",
                                (s["id"], s["starts_at"], s["visit_type"], a["id"]))
                self.db.execute("INSERT INTO appointment_log (appointment_id, action, slot_id, starts_at, logged_at) VALUES (?, 'reschedule', ?, ?, ?)",
                                (a["id"], s["id"], s["starts_at"], self._stamp()))
                return RedirectResponse("/appointments", status_code=303)
            except Refused as exc:
                error = exc.message
        slots = self.db.all("SELECT * FROM slots WHERE provider_id = ? AND status = 'open' ORDER BY starts_at", (a["provider_id"],))
        radios = "".join(f'<label class="choice"><input type="radio" name="slot" value="{s["id"]}" data-slot-id="{s["id"]}" '
                         f'data-starts-at="{s["starts_at"]}" required> {esc(self.when(s["starts_at"]))} {self._visit(s["visit_type"])}</label>'
                         for s in slots)
        body = (self._error(error) + f'<section class="panel summary"><p>{esc(a["provider"])}, {esc(a["credential"])} · {esc(a["member"])}</p>'
                f'<p>{self.t("Now")}: <strong data-current>{esc(self.when(a["starts_at"]))}</strong></p></section>'
                f'<form method="post" action="/appointments/{a["id"]}/reschedule" class="panel form" data-form="reschedule">'
                f'<fieldset><legend>{self.t("Choose a new time")}</legend>{radios or self.t("No open times")}</fieldset>'
                f'<button type="submit" class="primary" data-action="confirm-reschedule">{self.t("Move appointment")}</button>'
                f'<a class="button" href="/appointments" data-action="keep">{self.t("Keep current time")}</a></form>')
        return self._page(self.t("Reschedule"), body, status=400 if error else 200, crumbs=[(self.t("Appointments"), "/appointments")])

    async def cancel(self, request: Request) -> Response:
        a = self._appointment(request.path_params["aid"])
        if a["status"] != "scheduled":
            raise Refused("Only an upcoming appointment can be cancelled.")
        error = ""
        if request.method == "POST":
            reason = clean((await request.form()).get("reason"), 40)
            if reason not in CANCEL_REASONS:
                error = "Choose a reason for cancelling."
            else:
                self.db.execute("UPDATE appointments SET status = 'cancelled', cancel_reason = ? WHERE id = ?", (reason, a["id"]))
                if a["slot_id"] is not None:
                    self.db.execute("UPDATE slots SET status = 'open' WHERE id = ?", (a["slot_id"],))
                self.db.execute("INSERT INTO appointment_log (appointment_id, action, slot_id, starts_at, logged_at) VALUES (?, 'cancel', ?, ?, ?)",
                                (a["id"], a["slot_id"], a["starts_at"], self._stamp()))
                return RedirectResponse("/appointments", status_code=303)
        opts = f'<option value="">{self.t("Choose…")}</option>' + "".join(
            f'<option value="{esc(r)}">{esc(self.t(r))}</option>' for r in CANCEL_REASONS)
        body = (self._error(error) + f'<div class="panel" role="alertdialog" aria-labelledby="cx-h" aria-describedby="cx-d">'
                f'<h2 id="cx-h">{self.t("Cancel this appointment?")}</h2><p id="cx-d"><span data-member>{esc(a["member"])}</span> · '
                f'{esc(a["provider"])}, {esc(a["credential"])} · <strong>{esc(self.when(a["starts_at"]))}</strong></p>'
                f'<form method="post" action="/appointments/{a["id"]}/cancel" class="form">'
                f'<label for="cx-reason">{self.t("Reason")}</label><select id="cx-reason" name="reason" data-field="reason" required>{opts}</select>'
                f'<div class="row"><button type="submit" class="danger" data-action="confirm-cancel">{self.t("Cancel appointment")}</button>'
                f'<a class="button" href="/appointments" data-action="keep">{self.t("Keep appointment")}</a></div></form></div>')
        return self._page(self.t("Cancel appointment"), body, status=400 if error else 200,
                          crumbs=[(self.t("Appointments"), "/appointments")])

    # --- prescriptions ---

    def _rx(self, rid: int) -> dict[str, Any]:
        r = self.db.one("SELECT r.*, m.name AS member FROM prescriptions r JOIN members m ON m.id = r.member_id WHERE r.id = ?", (rid,))
        if r is None:
            raise Refused("No such prescription.", 404)
        return r

    async def prescriptions(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"])
        rows = self.db.all("SELECT r.*, m.name AS member, ph.name AS pharmacy, p.name AS prescriber FROM prescriptions r "
                           "JOIN members m ON m.id = r.member_id JOIN pharmacies ph ON ph.id = r.pharmacy_id "
                           "JOIN providers p ON p.id = r.prescriber_id" + (" WHERE r.member_id = ?" if member else "")
                           + " ORDER BY r.status, r.member_id, r.drug", [member["id"]] if member else [])
        sent = request.query_params.get("refill", "")

        def item(r: dict[str, Any]) -> str:
            active = r["status"] == "active"
            refill = (f'<form method="post" action="/prescriptions/{r["id"]}/refill"><button type="submit" class="primary" '
                      f'data-action="refill" aria-label="{self.t("Request a refill")}: {esc(r["drug"])} {esc(r["strength"])}">'
                      f'{self.t("Request a refill")}</button></form>') if active else ""
            switch = (f'<a class="button" href="/prescriptions/{r["id"]}/pharmacy" data-action="switch-pharmacy">'
                      f'{self.t("Change pharmacy")}</a>') if active else ""
            return (f'<li class="rx" data-rx-id="{r["id"]}" data-member-id="{r["member_id"]}" data-refills-left="{r["refills_left"]}" '
                    f'data-status="{r["status"]}" data-pharmacy-id="{r["pharmacy_id"]}">{icon("pill")}<div class="rx-body">'
                    f'<h3><span data-drug>{esc(r["drug"])}</span> {esc(r["strength"])} <span class="muted">{esc(r["form"])}</span></h3>'
                    f'<p>{esc(r["directions"])}</p><p class="muted">{self.t("For")}: {esc(r["member"])} · {self.t("Prescriber")}: '
                    f'{esc(r["prescriber"])} · {self.t("Last filled")}: {esc(self.day(r["last_filled"]))}</p>'
                    f'<p>{self.t("Refills left")}: <strong data-refills>{r["refills_left"]}</strong> · {self.t("Pharmacy")}: '
                    f'<span data-pharmacy>{esc(r["pharmacy"])}</span>'
                    f'{"" if active else " · <span class=badge>" + self.t("Completed") + "</span>"}</p>'
                    f'<div class="row">{refill}{switch}</div></div></li>')
        note = self._notice(self.t("Your refill request was sent to the pharmacy.")) if sent else ""
        body = note + self._member_filter(member, "/prescriptions") + f'<ul class="rxs">{"".join(item(r) for r in rows)}</ul>'
        return self._page(self.t("Prescriptions"), body)

    async def refill(self, request: Request) -> Response:
        r = self._rx(request.path_params["rid"])
        if r["status"] != "active":
            raise Refused("This prescription is completed: it cannot be refilled.")
        if r["refills_left"] <= 0:
            raise Refused("No refills left on this prescription. Ask your prescriber for a new prescription.")
        self.db.execute("UPDATE prescriptions SET refills_left = refills_left - 1 WHERE id = ?", (r["id"],))
        self.db.execute("INSERT INTO refill_requests (prescription_id, pharmacy_id, requested_at, status) VALUES (?,?,?, 'sent')",
                        (r["id"], r["pharmacy_id"], self._stamp()))
        return RedirectResponse(f"/prescriptions?refill={r['id']}", status_code=303)

    async def pharmacy(self, request: Request) -> Response:
        r = self._rx(request.path_params["rid"])
        if r["status"] != "active":
            raise Refused("This prescription is completed: its pharmacy cannot change.")
        error = ""
        if request.method == "POST":
            raw = str((await request.form()).get("pharmacy", "") or "")
            ph = self.db.one("SELECT * FROM pharmacies WHERE id = ?", (record_id(raw),))
            if ph is None:
                error = "Choose a pharmacy from the list."
            elif ph["id"] == r["pharmacy_id"]:
                error = "This prescription already goes to that pharmacy."
            else:
                self.db.execute("UPDATE prescriptions SET pharmacy_id = ? WHERE id = ?", (ph["id"], r["id"]))
                self.db.execute("INSERT INTO pharmacy_log (prescription_id, from_pharmacy_id, to_pharmacy_id, logged_at) VALUES (?,?,?,?)",
                                (r["id"], r["pharmacy_id"], ph["id"], self._stamp()))
                return RedirectResponse("/prescriptions", status_code=303)
        radios = "".join(f'<label class="choice"><input type="radio" name="pharmacy" value="{ph["id"]}" data-pharmacy-id="{ph["id"]}"'
                         f'{" checked" if ph["id"] == r["pharmacy_id"] else ""}> <strong>{esc(ph["name"])}</strong> '
                         f'<span class="muted">{esc(ph["address"])} · {esc(ph["phone"])}</span></label>'
                         for ph in self.db.all("SELECT * FROM pharmacies ORDER BY id"))
        body = (self._error(error) + f'<p class="lede">{esc(r["drug"])} {esc(r["strength"])} · {esc(r["member"])}</p>'
                f'<form method="post" action="/prescriptions/{r["id"]}/pharmacy" class="panel form" data-form="pharmacy">'
                f'<fieldset><legend>{self.t("Pharmacy")}</legend>{radios}</fieldset>'
                f'<button type="submit" class="primary" data-action="save-pharmacy">{self.t("Save")}</button></form>')
        return self._page(self.t("Change pharmacy"), body, status=400 if error else 200,
                          crumbs=[(self.t("Prescriptions"), "/prescriptions")])

    # --- claims ---

    def _claim(self, cid: int) -> dict[str, Any]:
        c = self.db.one("SELECT c.*, m.name AS member, COALESCE(p.name, c.provider_name) AS provider FROM claims c "
                        "JOIN members m ON m.id = c.member_id LEFT JOIN providers p ON p.id = c.provider_id WHERE c.id = ?", (cid,))
        if c is None:
            raise Refused("No such claim.", 404)
        return c

    def _status_badge(self, status: str) -> str:
        return f'<span class="badge st-{status}" data-claim-status="{status}">{self.t(status.title())}</span>'

    async def claims(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"])
        where, params = ["1 = 1"], []
        if member:
            where.append("c.member_id = ?")
            params.append(member["id"])
        if q["status"] in ("paid", "denied", "pending"):
            where.append("c.status = ?")
            params.append(q["status"])
        rows = self.db.all("SELECT c.*, m.name AS member, COALESCE(p.name, c.provider_name) AS provider, "
                           "(SELECT SUM(billed_cents) FROM claim_lines l WHERE l.claim_id = c.id) AS billed, "
                           "(SELECT SUM(plan_paid_cents) FROM claim_lines l WHERE l.claim_id = c.id) AS paid, "
                           "(SELECT SUM(member_owes_cents) FROM claim_lines l WHERE l.claim_id = c.id) AS owes FROM claims c "
                           "JOIN members m ON m.id = c.member_id LEFT JOIN providers p ON p.id = c.provider_id "
                           f"WHERE {' AND '.join(where)} ORDER BY c.service_date DESC, c.id DESC", params)
        members = f'<option value="">{self.t("Everyone")}</option>' + "".join(
            f'<option value="{m["id"]}"{" selected" if member and member["id"] == m["id"] else ""}>{esc(m["name"])}</option>'
            for m in self._members())
        statuses = "".join(f'<option value="{v}"{" selected" if q["status"] == v else ""}>{self.t(lab)}</option>'
                           for v, lab in (("", "Any status"), ("paid", "Paid"), ("denied", "Denied"), ("pending", "Pending")))
        form = (f'<form method="get" action="/claims" class="filters" role="search"><label>{self.t("Family member")}'
                f'<select name="member" data-filter="member">{members}</select></label><label>{self.t("Status")}'
                f'<select name="status" data-filter="status">{statuses}</select></label>'
                f'<button type="submit" data-action="apply-filters">{self.t("Show")}</button>'
                f'<a class="button primary" href="/claims/new" data-action="new-claim">{self.t("Submit a claim")}</a></form>')
        trs = "".join(
            f'<tr data-claim-id="{c["id"]}" data-claim-no="{esc(c["claim_no"])}" data-status="{c["status"]}">'
            f'<td><a href="/claims/{c["id"]}" class="mono">{esc(c["claim_no"])}</a></td><td>{esc(self.day(c["service_date"]))}</td>'
            f'<td>{esc(c["member"])}</td><td>{esc(c["provider"])}</td>'
            f'<td class="num" data-billed-cents="{c["billed"]}">{esc(self.money(c["billed"]))}</td>'
            f'<td class="num">{esc(self.money(c["paid"]))}</td><td class="num" data-owes-cents="{c["owes"]}">{esc(self.money(c["owes"]))}</td>'
            f'<td>{self._status_badge(c["status"])}</td></tr>' for c in rows)
        table = (f'<table class="grid claims"><thead><tr><th scope="col">{self.t("Claim")}</th><th scope="col">{self.t("Service date")}</th>'
                 f'<th scope="col">{self.t("Patient")}</th><th scope="col">{self.t("Provider")}</th><th scope="col">{self.t("Billed")}</th>'
                 f'<th scope="col">{self.t("Plan paid")}</th><th scope="col">{self.t("You owe")}</th><th scope="col">{self.t("Status")}</th>'
                 f'</tr></thead><tbody>{trs}</tbody></table>')
        note = self._notice(self.t("Your claim was submitted.")) if request.query_params.get("submitted") else ""
        return self._page(self.t("Claims"), note + form + table)

    async def claim(self, request: Request) -> Response:
        c = self._claim(request.path_params["cid"])
        lines = self.db.all("SELECT * FROM claim_lines WHERE claim_id = ? ORDER BY id", (c["id"],))
        tot = self._claim_totals(c["id"])
        trs = "".join(
            f'<tr data-line-id="{ln["id"]}"><td class="mono">{esc(ln["code"])}</td><td>{esc(ln["description"])}</td>'
            f'<td class="num">{esc(self.money(ln["billed_cents"]))}</td><td class="num">{esc(self.money(ln["allowed_cents"]))}</td>'
            f'<td class="num">{esc(self.money(ln["deductible_cents"]))}</td><td class="num">{esc(self.money(ln["copay_cents"]))}</td>'
            f'<td class="num">{esc(self.money(ln["coinsurance_cents"]))}</td><td class="num">{esc(self.money(ln["plan_paid_cents"]))}</td>'
            f'<td class="num">{esc(self.money(ln["member_owes_cents"]))}</td></tr>' for ln in lines)
        foot = (f'<tr class="total"><th scope="row" colspan="2">{self.t("Total")}</th><td class="num" data-billed-cents="{tot["billed"]}">'
                f'{esc(self.money(tot["billed"]))}</td><td class="num">{esc(self.money(tot["allowed"]))}</td><td colspan="3"></td>'
                f'<td class="num" data-paid-cents="{tot["paid"]}">{esc(self.money(tot["paid"]))}</td>'
                f'<td class="num" data-owes-cents="{tot["owes"]}">{esc(self.money(tot["owes"]))}</td></tr>')
        files = self.db.all("SELECT d.* FROM claim_files f JOIN documents d ON d.id = f.document_id WHERE f.claim_id = ?", (c["id"],))
        appeal = self.db.one("SELECT * FROM appeals WHERE claim_id = ?", (c["id"],))
        extra = ""
        if c["status"] == "denied":
            extra = (f'<section class="panel denied" data-denial><h2>{self.t("Why this claim was denied")}</h2><p>{esc(c["denial_reason"])}</p>'
                     + (f'<p role="status" data-appeal-status="{appeal["status"]}">{self.t("Appeal submitted on")} '
                        f'{esc(self.day(appeal["submitted_at"]))}.</p>' if appeal else
                        f'<a class="button primary" href="/claims/{c["id"]}/appeal" data-action="appeal">{self.t("Appeal this decision")}</a>')
                     + '</section>')
        elif c["status"] == "pending":
            extra = f'<p class="notice" role="status">{self.t("This claim is being processed.")}</p>'
        attach = "".join(f'<li data-document-id="{d["id"]}">{icon("clip")}{esc(d["name"])}</li>' for d in files)
        body = (f'<dl class="facts" data-claim-id="{c["id"]}" data-claim-no="{esc(c["claim_no"])}"><dt>{self.t("Claim number")}</dt>'
                f'<dd class="mono">{esc(c["claim_no"])}</dd><dt>{self.t("Patient")}</dt><dd>{esc(c["member"])}</dd>'
                f'<dt>{self.t("Provider")}</dt><dd>{esc(c["provider"])} {self._network(c["network"])}</dd><dt>{self.t("Service date")}</dt>'
                f'<dd>{esc(self.day(c["service_date"]))}</dd><dt>{self.t("Received")}</dt><dd>{esc(self.day(c["received_date"]))}</dd>'
                f'<dt>{self.t("Status")}</dt><dd>{self._status_badge(c["status"])}</dd></dl>{extra}'
                f'<h2>{self.t("Explanation of benefits")}</h2><table class="grid eob"><thead><tr><th scope="col">{self.t("Code")}</th>'
                f'<th scope="col">{self.t("Service")}</th><th scope="col">{self.t("Billed")}</th><th scope="col">{self.t("Allowed")}</th>'
                f'<th scope="col">{self.t("Deductible")}</th><th scope="col">{self.t("Copay")}</th><th scope="col">{self.t("Coinsurance")}</th>'
                f'<th scope="col">{self.t("Plan paid")}</th><th scope="col">{self.t("You owe")}</th></tr></thead><tbody>{trs}</tbody>'
                f'<tfoot>{foot}</tfoot></table>' + (f'<h2>{self.t("Attachments")}</h2><ul class="plain">{attach}</ul>' if attach else ""))
        return self._page(f'{self.t("Claim")} {c["claim_no"]}', body, crumbs=[(self.t("Claims"), "/claims")])

    async def appeal(self, request: Request) -> Response:
        c = self._claim(request.path_params["cid"])
        if c["status"] != "denied":
            raise Refused("Only a denied claim can be appealed.")
        if self.db.one("SELECT id FROM appeals WHERE claim_id = ?", (c["id"],)) is not None:
            raise Refused("This claim was already appealed.")
        error, reason = "", ""
        if request.method == "POST":
            form = await request.form()
            reason = str(form.get("reason", "") or "").strip()[:4000]
            try:
                if len(" ".join(reason.split())) < 20:
                    raise Refused("Explain in a sentence or two (at least 20 characters) why the decision should change.")
                doc = await self._upload(form.get("file")) or self._document(form.get("document"))
                self.db.insert("INSERT INTO appeals (claim_id, reason, document_id, submitted_at, status) VALUES (?,?,?,?, 'submitted')",
                               (c["id"], reason, doc, self._stamp()))
                return RedirectResponse(f"/claims/{c['id']}", status_code=303)
            except Refused as exc:
                error = exc.message
        body = (self._error(error) + f'<section class="panel summary"><p>{self.t("Claim")} <span class="mono">{esc(c["claim_no"])}</span> · '
                f'{esc(c["member"])} · {esc(c["provider"])} · {esc(self.day(c["service_date"]))}</p><p>{esc(c["denial_reason"])}</p></section>'
                f'<form method="post" action="/claims/{c["id"]}/appeal" enctype="multipart/form-data" class="panel form" data-form="appeal">'
                f'<label for="ap-reason">{self.t("Why should the plan reconsider?")}</label>'
                f'<textarea id="ap-reason" name="reason" rows="5" maxlength="4000" required data-field="reason">{esc(reason)}</textarea>'
                f'{self._document_picker()}'
                f'<button type="submit" class="primary" data-action="submit-appeal">{self.t("Submit appeal")}</button></form>')
        return self._page(self.t("Appeal a claim decision"), body, status=400 if error else 200,
                          crumbs=[(self.t("Claims"), "/claims"), (c["claim_no"], f"/claims/{c['id']}")])

    async def new_claim(self, request: Request) -> Response:
        values = {"member": "", "provider": "", "provider_name": "", "service_date": "", "amount": "", "description": ""}
        error = ""
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "") or "").strip() for k in values}
            try:
                member = self._member(values["member"], required=True)
                assert member is not None
                provider = None
                if values["provider"]:
                    provider = self.db.one("SELECT * FROM providers WHERE id = ?", (record_id(values["provider"]),))
                    if provider is None:
                        raise Refused("Choose a provider from the list, or type the name of one not listed.")
                other = clean(values["provider_name"], 120)
                if provider is None and not other:
                    raise Refused("Say who provided the service.")
                try:
                    served = dt.date.fromisoformat(values["service_date"])
                except ValueError:
                    raise Refused("Service date: enter a date as YYYY-MM-DD.") from None
                today = self.now().date()
                if served > today:
                    raise Refused("The service date cannot be in the future.")
                if served < today - dt.timedelta(days=365):
                    raise Refused("Claims must be submitted within one year of the service date.")
                amount = parse_amount(values["amount"], self.variant.locale)
                if amount > MAX_CLAIM:
                    raise Refused("A claim of more than $50,000.00 is sent by the provider, not through this form.")
                doc = await self._upload(form.get("file")) or self._document(form.get("document"))
                if doc is None:
                    raise Refused("Attach the itemized bill or receipt: choose one of your documents or upload a file.")
                n = (self.db.scalar("SELECT MAX(id) FROM claims") or 0) + 1
                cid = self.db.insert(
                    "INSERT INTO claims (claim_no, member_id, provider_id, provider_name, service_date, received_date, status, network, "
                    "denial_reason, source, description, submitted_at) VALUES (?,?,?,?,?,?, 'pending', ?, '', 'member', ?, ?)",
                    (f"JH-{today:%y}-{900000 + n}", member["id"], provider["id"] if provider else None, "" if provider else other,
                     served.isoformat(), today.isoformat(), provider["network"] if provider else "out",
                     clean(values["description"], 300), self._stamp()))
                self.db.execute("INSERT INTO claim_lines (claim_id, code, description, billed_cents, allowed_cents, deductible_cents, "
                                "copay_cents, coinsurance_cents, plan_paid_cents, member_owes_cents) VALUES (?, '', ?, ?, 0, 0, 0, 0, 0, 0)",
                                (cid, "Member-submitted claim", amount))
                self.db.execute("INSERT INTO claim_files (claim_id, document_id) VALUES (?,?)", (cid, doc))
                return RedirectResponse("/claims?submitted=1", status_code=303)
            except Refused as exc:
                error = exc.message
        provs = f'<option value="">{self.t("Not listed (type the name below)")}</option>' + "".join(
            f'<option value="{p["id"]}"{" selected" if values["provider"] == str(p["id"]) else ""}>{esc(p["name"])} · '
            f'{esc(self._specialty(p["specialty"]))}</option>' for p in self._care_team())
        body = (self._error(error) + f'<form method="post" action="/claims/new" enctype="multipart/form-data" class="panel form" data-form="claim">'
                f'<label for="c-member">{self.t("Patient")}</label><select id="c-member" name="member" data-field="member" required>'
                f'{self._member_options(values["member"])}</select>'
                f'<label for="c-provider">{self.t("Provider")}</label><select id="c-provider" name="provider" data-field="provider">{provs}</select>'
                f'<label for="c-pname">{self.t("Provider name, if not listed")}</label><input id="c-pname" name="provider_name" maxlength="120" '
                f'value="{esc(values["provider_name"])}" data-field="provider_name">'
                f'<label for="c-date">{self.t("Service date")}</label><input id="c-date" type="date" name="service_date" required '
                f'value="{esc(values["service_date"])}" data-field="service_date">'
                f'<label for="c-amount">{self.t("Amount you paid ($)")}</label><input id="c-amount" name="amount" inputmode="decimal" required '
                f'value="{esc(values["amount"])}" data-field="amount">'
                f'<label for="c-desc">{self.t("Description (optional)")}</label><input id="c-desc" name="description" maxlength="300" '
                f'value="{esc(values["description"])}" data-field="description">'
                f'{self._document_picker()}'
                f'<button type="submit" class="primary" data-action="submit-claim">{self.t("Submit claim")}</button></form>')
        return self._page(self.t("Submit a claim"), body, status=400 if error else 200, crumbs=[(self.t("Claims"), "/claims")])

    # --- messages ---

    async def threads(self, _: Request) -> Response:
        rows = self.db.all("SELECT t.*, p.name AS provider, m.name AS member, (SELECT MAX(sent_at) FROM messages x WHERE x.thread_id = t.id) "
                           "AS last, (SELECT COUNT(*) FROM messages x WHERE x.thread_id = t.id) AS n FROM threads t "
                           "JOIN providers p ON p.id = t.provider_id JOIN members m ON m.id = t.member_id ORDER BY last DESC, t.id DESC")
        items = "".join(f'<li class="thread" data-thread-id="{t["id"]}"><a href="/messages/{t["id"]}"><strong>{esc(t["subject"])}</strong></a>'
                        f'<p class="muted">{esc(t["provider"])} · {esc(t["member"])} · {esc(self.when(t["last"]))} · {t["n"]} '
                        f'{self.t("messages")}</p></li>' for t in rows)
        body = (f'<p><a class="button primary" href="/messages/new" data-action="new-message">{icon("chat")}{self.t("New message")}</a></p>'
                f'<ul class="threads">{items}</ul>')
        return self._page(self.t("Messages"), body)

    def _care_team(self) -> list[dict[str, Any]]:
        """The providers the household has seen or is to see: whom a member writes to or claims for."""
        return self.db.all("SELECT DISTINCT p.* FROM providers p JOIN appointments a ON a.provider_id = p.id ORDER BY p.name")

    async def new_thread(self, request: Request) -> Response:
        values = {"provider": "", "member": "", "subject": "", "body": ""}
        error = ""
        team = self._care_team()
        if request.method == "POST":
            form = await request.form()
            values = {k: str(form.get(k, "") or "").strip() for k in values}
            try:
                if not any(str(p["id"]) == values["provider"] for p in team):
                    raise Refused("Choose someone from your care team.")
                member = self._member(values["member"], required=True)
                assert member is not None
                subject, text = clean(values["subject"], 120), values["body"][:4000]
                if not subject or not text:
                    raise Refused("A message needs a subject and some text.")
                doc = await self._upload(form.get("file")) or self._document(form.get("document"))
                tid = self.db.insert("INSERT INTO threads (subject, member_id, provider_id, started_at) VALUES (?,?,?,?)",
                                     (subject, member["id"], int(values["provider"]), self._stamp()))
                self.db.execute("INSERT INTO messages (thread_id, from_member, body, sent_at, document_id) VALUES (?, 1, ?, ?, ?)",
                                (tid, text, self._stamp(), doc))
                return RedirectResponse(f"/messages/{tid}", status_code=303)
            except Refused as exc:
                error = exc.message
        opts = f'<option value="">{self.t("Choose…")}</option>' + "".join(
            f'<option value="{p["id"]}"{" selected" if values["provider"] == str(p["id"]) else ""}>{esc(p["name"])} · '
            f'{esc(self._specialty(p["specialty"]))}</option>' for p in team)
        body = (self._error(error) + f'<form method="post" action="/messages/new" enctype="multipart/form-data" class="panel form" data-form="message">'
                f'<label for="m-to">{self.t("To")}</label><select id="m-to" name="provider" data-field="provider" required>{opts}</select>'
                f'<label for="m-member">{self.t("About")}</label><select id="m-member" name="member" data-field="member" required>'
                f'{self._member_options(values["member"])}</select>'
                f'<label for="m-subj">{self.t("Subject")}</label><input id="m-subj" name="subject" maxlength="120" required '
                f'value="{esc(values["subject"])}" data-field="subject">'
                f'<label for="m-body">{self.t("Message")}</label><textarea id="m-body" name="body" rows="5" maxlength="4000" required '
                f'data-field="body">{esc(values["body"])}</textarea>{self._document_picker()}'
                f'<button type="submit" class="primary" data-action="send-message">{self.t("Send")}</button></form>')
        return self._page(self.t("New message"), body, status=400 if error else 200, crumbs=[(self.t("Messages"), "/messages")])

    async def thread(self, request: Request) -> Response:
        t = self.db.one("SELECT t.*, p.name AS provider, m.name AS member FROM threads t JOIN providers p ON p.id = t.provider_id "
                        "JOIN members m ON m.id = t.member_id WHERE t.id = ?", (request.path_params["tid"],))
        if t is None:
            raise Refused("No such conversation.", 404)
        error = ""
        if request.method == "POST":
            form = await request.form()
            text = str(form.get("body", "") or "").strip()[:4000]
            try:
                if not text:
                    raise Refused("Write a reply first.")
                doc = await self._upload(form.get("file")) or self._document(form.get("document"))
                self.db.execute("INSERT INTO messages (thread_id, from_member, body, sent_at, document_id) VALUES (?, 1, ?, ?, ?)",
                                (t["id"], text, self._stamp(), doc))
                return RedirectResponse(f"/messages/{t['id']}", status_code=303)
            except Refused as exc:
                error = exc.message
        msgs = self.db.all("SELECT x.*, d.name AS doc FROM messages x LEFT JOIN documents d ON d.id = x.document_id WHERE x.thread_id = ? "
                           "ORDER BY x.sent_at, x.id", (t["id"],))
        items = "".join(f'<li class="msg{" mine" if x["from_member"] else ""}" data-message-id="{x["id"]}">'
                        f'<p class="muted">{esc(self.t("You") if x["from_member"] else t["provider"])} · {esc(self.when(x["sent_at"]))}</p>'
                        f'<p>{esc(x["body"])}</p>'
                        + (f'<p class="file" data-document-id="{x["document_id"]}">{icon("clip")}{esc(x["doc"])}</p>' if x["doc"] else "")
                        + '</li>' for x in msgs)
        body = (self._error(error) + f'<p class="muted">{esc(t["provider"])} · {self.t("About")}: {esc(t["member"])}</p>'
                f'<ol class="msgs" data-thread-id="{t["id"]}">{items}</ol>'
                f'<form method="post" action="/messages/{t["id"]}" enctype="multipart/form-data" class="panel form" data-form="reply">'
                f'<label for="r-body">{self.t("Reply")}</label><textarea id="r-body" name="body" rows="4" maxlength="4000" required '
                f'data-field="body"></textarea>{self._document_picker()}'
                f'<button type="submit" class="primary" data-action="send-reply">{self.t("Send")}</button></form>')
        return self._page(t["subject"], body, status=400 if error else 200, crumbs=[(self.t("Messages"), "/messages")])

    # --- labs, documents, profile ---

    def _number(self, value: float) -> str:
        text = f"{value:g}"
        return text.replace(".", ",") if self.variant.locale == "de-DE" else text

    def _flag(self, flag: str) -> str:
        if not flag:
            return self.t("Normal")
        return f'<span class="flag flag-{esc(flag)}">{self.t("High" if flag == "H" else "Low")}</span>'

    async def labs(self, request: Request) -> Response:
        q = self._q(request)
        member = self._member(q["member"]) or self._members()[0]
        rows = self.db.all("SELECT l.*, p.name AS orderer FROM labs l JOIN providers p ON p.id = l.ordered_by WHERE l.member_id = ? "
                           "ORDER BY l.collected_on DESC, l.panel, l.id", (member["id"],))
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for r in rows:
            groups.setdefault((r["collected_on"], r["panel"]), []).append(r)
        sections = []
        for (day, panel), tests in groups.items():
            trs = "".join(
                f'<tr data-lab-id="{r["id"]}" data-test="{esc(r["test"])}" data-flag="{r["flag"]}"><th scope="row">{esc(r["test"])}</th>'
                f'<td class="num" data-value="{r["value"]}">{esc(self._number(r["value"]))} {esc(r["unit"])}</td>'
                f'<td class="num">{esc(self._number(r["ref_low"]))}–{esc(self._number(r["ref_high"]))}</td>'
                f'<td>{self._flag(r["flag"])}</td></tr>' for r in tests)
            sections.append(f'<section class="panel lab" data-panel="{esc(panel)}" data-collected="{day}"><h2>{esc(self.t(panel))} · '
                            f'<time datetime="{day}">{esc(self.day(day))}</time></h2><p class="muted">{self.t("Ordered by")} '
                            f'{esc(tests[0]["orderer"])}</p><table class="grid"><thead><tr><th scope="col">{self.t("Test")}</th>'
                            f'<th scope="col">{self.t("Result")}</th><th scope="col">{self.t("Reference range")}</th>'
                            f'<th scope="col">{self.t("Flag")}</th></tr></thead><tbody>{trs}</tbody></table></section>')
        tabs = "".join(f'<a href="/labs?member={m["id"]}" data-member-tab="{m["id"]}" role="tab" '
                       f'aria-selected="{"true" if m["id"] == member["id"] else "false"}">{esc(m["name"])}</a>' for m in self._members())
        body = (f'<div class="tabs" role="tablist" aria-label="{self.t("Family member")}">{tabs}</div>'
                + ("".join(sections) or f'<p class="muted">{self.t("No results on file.")}</p>'))
        return self._page(self.t("Lab results"), body)

    async def documents(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            try:
                if await self._upload((await request.form()).get("file")) is None:
                    raise Refused("Choose a file to upload.")
                return RedirectResponse("/documents", status_code=303)
            except Refused as exc:
                error = exc.message
        items = "".join(f'<li data-document-id="{d["id"]}">{icon("clip")}<strong>{esc(d["name"])}</strong> <span class="muted">'
                        f'{esc(self.day(d["uploaded_at"]))} · {esc(self._number(round(d["size_bytes"] / 1024)))} KB</span></li>'
                        for d in self.db.all("SELECT * FROM documents ORDER BY uploaded_at DESC, id DESC"))
        body = (self._error(error) + f'<form method="post" action="/documents" enctype="multipart/form-data" class="panel form" data-form="upload">'
                f'<label for="d-file">{self.t("Or upload a file (PDF, JPG, PNG)")}</label><input id="d-file" type="file" name="file" '
                f'accept=".pdf,.jpg,.jpeg,.png" data-field="file" required><button type="submit" class="primary" data-action="upload">'
                f'{self.t("Upload")}</button></form><ul class="docs">{items}</ul>')
        return self._page(self.t("Documents"), body, status=400 if error else 200)

    async def profile(self, request: Request) -> Response:
        p = self.db.one("SELECT * FROM profile WHERE id = 1") or {}
        fields = ("address", "city", "state", "zip", "phone", "email", "preferred_contact", "ec_name", "ec_relation", "ec_phone")
        values = {k: str(p[k]) for k in fields}
        error, done = "", ""
        if request.method == "POST":
            form = await request.form()
            values = {k: clean(form.get(k), 160) for k in fields}
            try:
                if not values["address"] or not values["city"]:
                    raise Refused("Enter your street address and city.")
                values["state"] = values["state"].upper()
                if not re.fullmatch(r"[A-Z]{2}", values["state"]):
                    raise Refused("State: the two-letter code, such as CA.")
                if not re.fullmatch(r"\d{5}(-\d{4})?", values["zip"]):
                    raise Refused("ZIP code: five digits, such as 95814.")
                values["phone"] = phone_digits(values["phone"])
                if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", values["email"]):
                    raise Refused("Enter an email address such as name@example.com.")
                if values["preferred_contact"] not in CONTACT_WAYS:
                    raise Refused("Choose how we should contact you.")
                if not values["ec_name"]:
                    raise Refused("Enter your emergency contact's name.")
                if values["ec_relation"] not in EC_RELATIONS:
                    raise Refused("Choose your emergency contact's relationship to you.")
                values["ec_phone"] = phone_digits(values["ec_phone"])
                self.db.execute("UPDATE profile SET " + ", ".join(f"{k} = ?" for k in fields) + " WHERE id = 1",
                                [values[k] for k in fields])
                done = self.t("Your profile was saved.")
            except Refused as exc:
                error = exc.message

        def text(key: str, label: str, kind: str = "text", extra: str = "") -> str:
            return (f'<label for="p-{key}">{self.t(label)}</label><input id="p-{key}" type="{kind}" name="{key}" '
                    f'value="{esc(values[key])}" data-field="{key}" {extra}>')
        ways = "".join(f'<label class="choice"><input type="radio" name="preferred_contact" value="{w}" data-contact="{w}"'
                       f'{" checked" if values["preferred_contact"] == w else ""}> {self.t(w.title())}</label>' for w in CONTACT_WAYS)
        rels = "".join(f'<option value="{r}"{" selected" if values["ec_relation"] == r else ""}>{self.t(r.title())}</option>'
                       for r in EC_RELATIONS)
        body = (self._notice(done) + self._error(error) +
                f'<form method="post" action="/profile" class="panel form" data-form="profile"><fieldset><legend>{self.t("Contact details")}</legend>'
                + text("address", "Street address", extra='autocomplete="street-address" required')
                + text("city", "City", extra="required") + text("state", "State", extra='maxlength="2" required')
                + text("zip", "ZIP code", extra='inputmode="numeric" required') + text("phone", "Phone", "tel", "required")
                + text("email", "Email", "email", "required")
                + f'</fieldset><fieldset><legend>{self.t("Preferred contact")}</legend>{ways}</fieldset>'
                f'<fieldset data-section="emergency-contact"><legend>{self.t("Emergency contact")}</legend>'
                + text("ec_name", "Name", extra="required")
                + f'<label for="p-ec_relation">{self.t("Relationship")}</label><select id="p-ec_relation" name="ec_relation" '
                f'data-field="ec_relation">{rels}</select>'
                + text("ec_phone", "Emergency contact phone", "tel", "required")
                + f'</fieldset><button type="submit" class="primary" data-action="save-profile">{self.t("Save")}</button></form>')
        return self._page(self.t("Profile"), body, status=400 if error else 200)


APP = HealthApp
