"""Contacts: a small CRM with 500 contacts, companies, deals and bulk edits.

Pages: `/contacts` (a sortable, paginated, filterable table; checkboxes select rows and a
bulk bar sets the owner or adds/removes a tag for all of them through custom div-based
dropdowns), `/contacts/{id}` (details, tags, deals, delete with a confirm),
`/contacts/new` and `/contacts/{id}/edit` (a form with server-side validation of email
and phone formats, errors shown by the fields; a custom owner dropdown), `/companies`,
`/companies/{id}`, `/deals` (pipeline table; stage changes). Forms post and redirect.

Method evidence (`cua.tasks.apps.activity.used_method`): an owner set by the bulk bar is
`bulk_edit` for each selected contact, one changed on the contact's own form is `form`.
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

from cua.judges.values.web import QueryRule
from cua.tasks.apps.activity import used_method
from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.contacts.locale_de import DE
from cua.tasks.apps.contacts.seed import STAGES, seed_contacts
from cua.tasks.apps.i18n import format_day, format_number
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE owners (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE companies (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, industry TEXT NOT NULL, city TEXT NOT NULL,
                        website TEXT NOT NULL);
CREATE TABLE contacts (
    id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    email TEXT NOT NULL,
    phone TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    company_id INTEGER REFERENCES companies(id),
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    status TEXT NOT NULL CHECK (status IN ('lead','prospect','customer','churned')),
    created_at TEXT NOT NULL
);
CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE contact_tags (contact_id INTEGER NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
                           tag_id INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE, PRIMARY KEY (contact_id, tag_id));
CREATE TABLE deals (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    company_id INTEGER REFERENCES companies(id),
    contact_id INTEGER REFERENCES contacts(id) ON DELETE SET NULL,
    owner_id INTEGER NOT NULL REFERENCES owners(id),
    amount_cents INTEGER NOT NULL,
    stage TEXT NOT NULL,
    close_date TEXT NOT NULL
);
"""

STATUSES = ["lead", "prospect", "customer", "churned"]
SORTS = {"name": "c.last_name COLLATE NOCASE, c.first_name COLLATE NOCASE", "company": "co.name COLLATE NOCASE",
         "email": "c.email", "owner": "o.name", "status": "c.status", "created": "c.created_at"}
PER_PAGE = (25, 50, 100)
EMAIL_RE = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}$")
PHONE_RE = re.compile(r"^\+?[0-9 ()\-.]{7,20}$")


def valid_phone(phone: str) -> bool:
    return bool(PHONE_RE.match(phone)) and 7 <= sum(ch.isdigit() for ch in phone) <= 15


def listbox(name: str, label: str, options: list[tuple[str, str]], value: str, *, placeholder: str, ident: str) -> str:
    """A custom div-based dropdown (see tasks/apps/static/listbox.js) posting its value as `name`."""
    current = dict(options).get(value, placeholder)
    opts = "".join(f'<li role="option" id="{ident}-opt-{i}" data-value="{esc(v)}" aria-selected="{"true" if v == value else "false"}">{esc(t)}</li>'
                   for i, (v, t) in enumerate(options))
    return (f'<div class="listbox" data-name="{name}" id="{ident}"><span class="lb-label" id="{ident}-label">{esc(label)}</span>'
            f'<input type="hidden" name="{name}" value="{esc(value)}">'
            f'<button type="button" class="lb-button" aria-haspopup="listbox" aria-expanded="false" aria-labelledby="{ident}-label {ident}-value">'
            f'<span id="{ident}-value" class="lb-value">{esc(current)}</span><span class="lb-caret">▾</span></button>'
            f'<ul class="lb-options" role="listbox" aria-labelledby="{ident}-label" tabindex="-1" hidden>{opts}</ul></div>')


class ContactsApp(WebApp):
    name = "contacts"
    title = "Contacts CRM"
    schema = SCHEMA
    derived = {"contacts.company": ("contacts.company_id",), "contacts.owner": ("contacts.owner_id",),
               "contacts.name": ("contacts.first_name", "contacts.last_name"), "contacts.tags": ("contact_tags.tag_id",),
               "deals.company": ("deals.company_id",), "deals.owner": ("deals.owner_id",)}
    static_dir = Path(__file__).parent / "static"
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)
    query_params = {
        "q": QueryRule(strip=True),
        "owner": QueryRule(integer=True),
        "tag": QueryRule(),
        "status": QueryRule(choices=tuple(STATUSES)),
        "sort": QueryRule(default="name", choices=tuple(SORTS)),
        "dir": QueryRule(default="asc", choices=("asc", "desc")),
        "per": QueryRule(default="25", integer=True, choices=tuple(str(n) for n in PER_PAGE)),
        "page": QueryRule(default="1", integer=True, minimum=1),
        "msg": QueryRule(),
        "stage": QueryRule(choices=tuple(STAGES)),
    }

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_contacts(db, rng, self.now())

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _money(self, cents: int) -> str:
        """Whole dollars as the locale writes them: `$12,500` in en-US, `12.500 $` in de-DE (the data's currency)."""
        number = format_number(cents / 100, self.variant.locale)
        return f"{number}\u00a0$" if self.variant.locale == "de-DE" else f"${number}"

    def _day(self, stamp: str) -> str:
        """A stored `YYYY-MM-DD[ HH:MM]` as the locale writes it (en-US: as stored)."""
        day, sep, clock = stamp.partition(" ")
        if self.variant.locale == "en-US":
            return stamp
        try:
            return format_day(dt.date.fromisoformat(day), self.variant.locale, with_year=True) + sep + clock
        except ValueError:
            return stamp

    def _status(self, status: str) -> str:
        return f'<span class="status {status}" data-status="{status}">{self.t(status)}</span>'

    def _tags_by_contact(self) -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for r in self.db.all("SELECT ct.contact_id, t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id ORDER BY t.name"):
            out.setdefault(r["contact_id"], []).append(r["name"])
        return out

    def state(self) -> dict[str, Any]:
        tags = self._tags_by_contact()
        contacts = [{**c, "name": f"{c['first_name']} {c['last_name']}", "tags": tags.get(c["id"], [])}
                    for c in self.db.all("SELECT c.*, co.name AS company, o.name AS owner FROM contacts c LEFT JOIN companies co "
                                         "ON co.id = c.company_id JOIN owners o ON o.id = c.owner_id ORDER BY c.id")]
        return {
            "owners": self.db.all("SELECT * FROM owners ORDER BY id"),
            "tags": self.db.all("SELECT * FROM tags ORDER BY id"),
            "companies": self.db.all("SELECT * FROM companies ORDER BY id"),
            "contacts": contacts,
            "deals": self.db.all("SELECT d.*, co.name AS company, o.name AS owner FROM deals d LEFT JOIN companies co ON co.id = d.company_id "
                                 "JOIN owners o ON o.id = d.owner_id ORDER BY d.id"),
        }

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse("/contacts", status_code=302)),
            Route("/contacts", self.contacts),
            Route("/contacts/bulk", self.bulk, methods=["POST"]),
            Route("/contacts/new", self.new_contact, methods=["GET", "POST"]),
            Route("/contacts/{cid:int}", self.contact),
            Route("/contacts/{cid:int}/edit", self.edit_contact, methods=["GET", "POST"]),
            Route("/contacts/{cid:int}/delete", self.delete_contact, methods=["POST"]),
            Route("/companies", self.companies),
            Route("/companies/{coid:int}", self.company),
            Route("/deals", self.deals),
            Route("/deals/{did:int}/stage", self.deal_stage, methods=["POST"]),
        ]

    def _page(self, title: str, body: str, request: Request | None = None) -> Response:
        msg = (self.query(request)["msg"] or "") if request is not None else ""
        flash = f'<div class="flash" role="status">{esc(msg)}</div>' if msg else ""
        return html_page(self, title, flash + body, nav=[("Contacts", "/contacts"), ("Companies", "/companies"), ("Deals", "/deals")],
                         scripts=["/static/cua/modal.js", "/static/cua/listbox.js", "/static/app/contacts.js"])

    # --- the table ---

    async def contacts(self, request: Request) -> Response:
        qp = self.query(request)
        q = qp["q"] or ""
        owner, tag, status = qp["owner"] or "", qp["tag"] or "", qp["status"] or ""
        sort = str(qp["sort"])
        desc = qp["dir"] == "desc"
        per = int(qp["per"])
        where: list[str] = ["1"]
        params: list[Any] = []
        if q:
            like = f"%{q}%"
            where.append("(c.first_name || ' ' || c.last_name LIKE ? OR c.email LIKE ? OR co.name LIKE ? OR c.phone LIKE ?)")
            params += [like, like, like, like]
        if owner.isdigit():
            where.append("c.owner_id = ?"); params.append(int(owner))
        if tag:
            where.append("c.id IN (SELECT contact_id FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE t.name = ?)"); params.append(tag)
        if status in STATUSES:
            where.append("c.status = ?"); params.append(status)
        w = " AND ".join(where)
        base = "FROM contacts c LEFT JOIN companies co ON co.id = c.company_id JOIN owners o ON o.id = c.owner_id"
        total = self.db.scalar(f"SELECT COUNT(*) {base} WHERE {w}", params)
        pages = max(1, (total + per - 1) // per)
        page = min(pages, int(qp["page"]))
        order = ", ".join(f"{part} DESC" if desc else part for part in SORTS[sort].split(", "))
        rows = self.db.all(f"SELECT c.*, co.name AS company, o.name AS owner {base} WHERE {w} ORDER BY {order}, c.id LIMIT ? OFFSET ?",
                           [*params, per, (page - 1) * per])
        tags = self._tags_by_contact()
        state = {k: v for k, v in {"q": q, "owner": owner, "tag": tag, "status": status, "sort": sort,
                                   "dir": "desc" if desc else "asc", "per": str(per)}.items() if v}
        back = "/contacts?" + urlencode({**state, "page": page})

        def head(key: str, label: str) -> str:
            active = key == sort
            nxt = "asc" if active and desc else "desc" if active else "asc"
            aria = f' aria-sort="{"descending" if desc else "ascending"}"' if active else ""
            arrow = (" ▼" if desc else " ▲") if active else ""
            return (f'<th{aria}><a href="/contacts?{urlencode({**state, "sort": key, "dir": nxt})}" class="sort" data-sort="{key}">'
                    f'{self.t(label)}{arrow}</a></th>')

        trs = "".join(
            f'<tr data-id="{c["id"]}" data-email="{esc(c["email"])}"><td><input type="checkbox" name="ids" value="{c["id"]}" class="rowbox" '
            f'aria-label="{esc(self.t("Select {name}").format(name=c["first_name"] + " " + c["last_name"]))}"></td>'
            f'<td><a href="/contacts/{c["id"]}">{esc(c["first_name"])} {esc(c["last_name"])}</a><div class="muted small">{esc(c["title"])}</div></td>'
            f'<td>{esc(c["company"] or "")}</td><td>{esc(c["email"])}</td><td class="nowrap">{esc(c["phone"])}</td><td>{esc(c["owner"])}</td>'
            f'<td>{self._status(c["status"])}</td>'
            f'<td>{"".join(f"<span class=tag>{esc(t)}</span>" for t in tags.get(c["id"], []))}</td><td class="nowrap">{self._day(c["created_at"][:10])}</td></tr>'
            for c in rows)
        owners = self.db.all("SELECT * FROM owners ORDER BY name")
        tag_names = [t["name"] for t in self.db.all("SELECT name FROM tags ORDER BY name")]
        owner_opts = "".join(f'<option value="{o["id"]}"{" selected" if str(o["id"]) == owner else ""}>{esc(o["name"])}</option>' for o in owners)
        tag_opts = "".join(f'<option{" selected" if t == tag else ""}>{esc(t)}</option>' for t in tag_names)
        st_opts = "".join(f'<option value="{s}"{" selected" if s == status else ""}>{self.t(s)}</option>' for s in STATUSES)
        per_opts = "".join(f'<option{" selected" if n == per else ""}>{n}</option>' for n in PER_PAGE)
        t = self.t
        filters = (
            '<form method="get" action="/contacts" class="card filters" id="filters">'
            f'<input type="search" name="q" value="{esc(q)}" placeholder="{t("Search name, email, company, phone")}" '
            f'aria-label="{t("Search contacts")}">'
            f'<label>{t("Owner")} <select name="owner"><option value="">{t("Any")}</option>{owner_opts}</select></label>'
            f'<label>{t("Tag")} <select name="tag"><option value="">{t("Any")}</option>{tag_opts}</select></label>'
            f'<label>{t("Status")} <select name="status"><option value="">{t("Any")}</option>{st_opts}</select></label>'
            f'<label>{t("Per page")} <select name="per">{per_opts}</select></label>'
            f'<input type="hidden" name="sort" value="{sort}"><input type="hidden" name="dir" value="{"desc" if desc else "asc"}">'
            f'<button type="submit" data-action="apply">{t("Apply")}</button><a href="/contacts" data-action="reset">{t("Reset")}</a></form>')
        bulk = (
            f'<div class="bulkbar" id="bulkbar"><span id="selected-count" data-template="{esc(t("{n} selected"))}">'
            f'{esc(t("{n} selected").format(n=0))}</span>'
            + listbox("owner_id", t("Owner"), [(str(o["id"]), o["name"]) for o in owners], "", placeholder=t("Choose owner…"),
                      ident="bulk-owner")
            + f'<button type="submit" name="op" value="owner" id="bulk-set-owner">{t("Set owner")}</button>'
            + listbox("tag", t("Tag"), [(x, x) for x in tag_names], "", placeholder=t("Choose tag…"), ident="bulk-tag")
            + f'<button type="submit" name="op" value="add_tag" id="bulk-add-tag">{t("Add tag")}</button>'
            f'<button type="submit" name="op" value="remove_tag" id="bulk-remove-tag">{t("Remove tag")}</button></div>')
        first = (page - 1) * per + 1 if total else 0
        pager = self._pager(page, pages, state)
        shown = t("{first}–{last} of {total}").format(first=first, last=min(total, page * per), total=total)
        body = (f'<div class="titlebar"><h1>{t("Contacts")}</h1>'
                f'<a class="button primary" href="/contacts/new" data-action="new-contact">{t("New contact")}</a></div>{filters}'
                f'<form method="post" action="/contacts/bulk" id="bulk-form"><input type="hidden" name="back" value="{esc(back)}">{bulk}'
                f'<table class="contacts"><thead><tr><th><input type="checkbox" id="select-page" aria-label="{t("Select all on this page")}"></th>'
                f'{head("name", "Name")}{head("company", "Company")}{head("email", "Email")}<th>{t("Phone")}</th>{head("owner", "Owner")}'
                f'{head("status", "Status")}<th>{t("Tags")}</th>{head("created", "Created")}</tr></thead><tbody>{trs}</tbody></table></form>'
                f'<div class="pagerow"><span class="muted">{shown}</span>{pager}</div>')
        return self._page(t("Contacts"), body, request)

    def _pager(self, page: int, pages: int, state: dict[str, str]) -> str:
        shown = sorted({1, pages, *range(max(1, page - 2), min(pages, page + 2) + 1)})
        out, last = [], 0
        if page > 1:
            out.append(f'<a class="page" rel="prev" href="/contacts?{urlencode({**state, "page": page - 1})}">{self.t("‹ Prev")}</a>')
        for n in shown:
            if n - last > 1:
                out.append('<span class="gap">…</span>')
            cur = ' aria-current="page"' if n == page else ""
            out.append(f'<a class="page{" active" if n == page else ""}"{cur} href="/contacts?{urlencode({**state, "page": n})}">{n}</a>')
            last = n
        if page < pages:
            out.append(f'<a class="page" rel="next" href="/contacts?{urlencode({**state, "page": page + 1})}">{self.t("Next ›")}</a>')
        return f'<nav class="pager" aria-label="{self.t("Pages")}">{"".join(out)}</nav>'

    async def bulk(self, request: Request) -> Response:
        form = await request.form()
        ids = sorted({int(str(v)) for v in form.getlist("ids") if str(v).isdigit()})
        op = str(form.get("op", ""))
        back = str(form.get("back", "")) if str(form.get("back", "")).startswith("/contacts") else "/contacts"
        sep = "&" if "?" in back else "?"
        if not ids:
            return RedirectResponse(back + sep + urlencode({"msg": self.t("Select at least one contact.")}), status_code=303)
        marks = ",".join("?" * len(ids))
        if op == "owner":
            owner = self.db.one("SELECT * FROM owners WHERE id = ?", (str(form.get("owner_id", "")),))
            if owner is None:
                return RedirectResponse(back + sep + urlencode({"msg": self.t("Choose an owner first.")}), status_code=303)
            n = self.db.execute(f"UPDATE contacts SET owner_id = ? WHERE id IN ({marks})", [owner["id"], *ids]).rowcount
            for cid in ids:  # method evidence: these owners were set by one bulk edit
                used_method(request.scope, "bulk_edit", f"contacts[id={cid}].owner_id")
            msg = self.t("Owner set to {owner} for {n} contact(s).").format(owner=owner["name"], n=n)
        elif op in ("add_tag", "remove_tag"):
            tag = self.db.one("SELECT * FROM tags WHERE name = ?", (str(form.get("tag", "")),))
            if tag is None:
                return RedirectResponse(back + sep + urlencode({"msg": self.t("Choose a tag first.")}), status_code=303)
            if op == "add_tag":
                for cid in ids:
                    self.db.execute("INSERT OR IGNORE INTO contact_tags (contact_id, tag_id) SELECT id, ? FROM contacts WHERE id = ?", (tag["id"], cid))
                msg = self.t("Tag {tag} added to {n} contact(s).").format(tag=tag["name"], n=len(ids))
            else:
                self.db.execute(f"DELETE FROM contact_tags WHERE tag_id = ? AND contact_id IN ({marks})", [tag["id"], *ids])
                msg = self.t("Tag {tag} removed from {n} contact(s).").format(tag=tag["name"], n=len(ids))
        else:
            msg = self.t("Unknown bulk action.")
        return RedirectResponse(back + sep + urlencode({"msg": msg}), status_code=303)

    # --- one contact ---

    async def contact(self, request: Request) -> Response:
        c = self.db.one("SELECT c.*, co.name AS company, o.name AS owner FROM contacts c LEFT JOIN companies co ON co.id = c.company_id "
                        "JOIN owners o ON o.id = c.owner_id WHERE c.id = ?", (request.path_params["cid"],))
        if c is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such contact.')}</div>")
        t = self.t
        tags = self._tags_by_contact().get(c["id"], [])
        deals = self.db.all("SELECT * FROM deals WHERE contact_id = ? ORDER BY close_date", (c["id"],))
        deal_rows = "".join(f'<tr data-id="{d["id"]}"><td>{esc(d["name"])}</td><td>{self._money(d["amount_cents"])}</td>'
                            f'<td data-stage="{d["stage"]}">{t(d["stage"])}</td><td>{self._day(d["close_date"])}</td></tr>'
                            for d in deals) or f"<tr><td colspan=4 class=muted>{t('No deals.')}</td></tr>"
        company = f'<a href="/companies/{c["company_id"]}">{esc(c["company"])}</a>' if c["company_id"] else "—"
        body = (f'<div class="titlebar"><h1>{esc(c["first_name"])} {esc(c["last_name"])}</h1>'
                f'<a class="button primary" href="/contacts/{c["id"]}/edit" data-action="edit">{t("Edit")}</a>'
                f'<button type="button" class="danger" data-open="delete-modal" data-action="delete">{t("Delete…")}</button></div>'
                f'<div class="card contact" data-id="{c["id"]}"><dl class="props">'
                f'<dt>{t("Title")}</dt><dd>{esc(c["title"])}</dd><dt>{t("Company")}</dt><dd>{company}</dd>'
                f'<dt>{t("Email")}</dt><dd class="email">{esc(c["email"])}</dd>'
                f'<dt>{t("Phone")}</dt><dd class="phone">{esc(c["phone"])}</dd><dt>{t("Owner")}</dt><dd class="owner">{esc(c["owner"])}</dd>'
                f'<dt>{t("Status")}</dt><dd>{self._status(c["status"])}</dd>'
                f'<dt>{t("Tags")}</dt><dd>{"".join(f"<span class=tag>{esc(x)}</span>" for x in tags) or "—"}</dd>'
                f'<dt>{t("Created")}</dt><dd>{self._day(c["created_at"])}</dd></dl></div>'
                f'<h2>{t("Deals")}</h2><table><thead><tr><th>{t("Deal")}</th><th>{t("Amount")}</th><th>{t("Stage")}</th>'
                f'<th>{t("Close date")}</th></tr></thead><tbody>{deal_rows}</tbody></table>'
                f'<div class="modal-backdrop" id="delete-modal" hidden><div class="modal" role="dialog" aria-label="{t("Confirm delete")}">'
                f'<p>{esc(t("Delete {name}? Their deals stay, without a contact.").format(name=c["first_name"] + " " + c["last_name"]))}</p>'
                f'<form method="post" action="/contacts/{c["id"]}/delete" class="row">'
                f'<button type="submit" class="danger" id="delete-confirm">{t("Delete")}</button>'
                f'<button type="button" data-close="delete-modal" data-action="keep">{t("Cancel")}</button></form></div></div>')
        return self._page(f"{c['first_name']} {c['last_name']}", body, request)

    def _form(self, action: str, heading: str, v: dict[str, Any], tags: set[str], errors: dict[str, str]) -> Response:
        owners = self.db.all("SELECT * FROM owners ORDER BY name")
        companies = "".join(f'<option value="{co["id"]}"{" selected" if str(co["id"]) == str(v.get("company_id") or "") else ""}>{esc(co["name"])}</option>'
                            for co in self.db.all("SELECT id, name FROM companies ORDER BY name"))

        t = self.t

        def field(name: str, label: str, kind: str = "text") -> str:
            err = errors.get(name)
            aria = f' aria-invalid="true" aria-describedby="{name}-error"' if err else ""
            msg = f'<span class="field-error" id="{name}-error">{esc(t(err))}</span>' if err else ""
            return (f'<label class="field{" invalid" if err else ""}">{t(label)}<input type="{kind}" name="{name}" id="{name}" '
                    f'value="{esc(v.get(name) or "")}"{aria}>{msg}</label>')

        status_radios = "".join(f'<label><input type="radio" name="status" value="{s}"{" checked" if s == v.get("status") else ""}> {t(s)}</label>'
                                for s in STATUSES)
        tag_boxes = "".join(f'<label><input type="checkbox" name="tags" value="{esc(x["name"])}"{" checked" if x["name"] in tags else ""}> '
                            f'{esc(x["name"])}</label>' for x in self.db.all("SELECT name FROM tags ORDER BY name"))
        owner_err = f'<span class="field-error" id="owner_id-error">{esc(t(errors["owner_id"]))}</span>' if "owner_id" in errors else ""
        summary = (f'<div class="error" role="alert">{t("Please fix {n} field(s) below.").format(n=len(errors))}</div>' if errors else "")
        body = (f"<h1>{heading}</h1>{summary}<form method='post' action='{action}' class='card cform' id='contact-form' novalidate>"
                f"<div class='grid2'>{field('first_name', 'First name')}{field('last_name', 'Last name')}"
                f"{field('email', 'Email', 'email')}{field('phone', 'Phone', 'tel')}{field('title', 'Job title')}"
                f"<label class='field'>{t('Company')}<select name='company_id'><option value=''>{t('No company')}</option>{companies}</select></label>"
                f"<div class='field'>" + listbox("owner_id", t("Owner"), [(str(o["id"]), o["name"]) for o in owners], str(v.get("owner_id") or ""),
                                                placeholder=t("Choose owner…"), ident="owner") + owner_err + "</div>"
                f"<fieldset class='field'><legend>{t('Status')}</legend><div class='row'>{status_radios}</div></fieldset></div>"
                f"<fieldset><legend>{t('Tags')}</legend><div class='row wrap'>{tag_boxes}</div></fieldset>"
                f"<p class='row'><button type='submit' class='primary' id='save-contact'>{t('Save')}</button>"
                f"<a class='button' href='/contacts' data-action='cancel'>{t('Cancel')}</a></p></form>")
        return self._page(heading, body)

    def _validate(self, form: Any) -> tuple[dict[str, Any], set[str], dict[str, str]]:
        v = {k: str(form.get(k, "") or "").strip() for k in ("first_name", "last_name", "email", "phone", "title", "company_id", "owner_id", "status")}
        tags = {str(t) for t in form.getlist("tags")}
        errors: dict[str, str] = {}
        if not v["first_name"]:
            errors["first_name"] = "First name is required."
        if not v["last_name"]:
            errors["last_name"] = "Last name is required."
        if not EMAIL_RE.match(v["email"]):
            errors["email"] = "Enter a valid email address, like name@example.com."
        if v["phone"] and not valid_phone(v["phone"]):
            errors["phone"] = "Enter a valid phone number: 7 to 15 digits, optionally with +, spaces, dashes or parentheses."
        if not self.db.one("SELECT id FROM owners WHERE id = ?", (v["owner_id"],)):
            errors["owner_id"] = "Choose an owner."
        if v["status"] not in STATUSES:
            errors["status"] = "Choose a status."
            v["status"] = "lead"
        if v["company_id"] and not self.db.one("SELECT id FROM companies WHERE id = ?", (v["company_id"],)):
            v["company_id"] = ""
        return v, tags, errors

    def _write_tags(self, cid: int, tags: set[str]) -> None:
        self.db.execute("DELETE FROM contact_tags WHERE contact_id = ?", (cid,))
        for t in sorted(tags):
            self.db.execute("INSERT INTO contact_tags (contact_id, tag_id) SELECT ?, id FROM tags WHERE name = ?", (cid, t))

    async def new_contact(self, request: Request) -> Response:
        if request.method == "GET":
            return self._form("/contacts/new", self.t("New contact"), {"status": "lead", "owner_id": "1"}, set(), {})
        v, tags, errors = self._validate(await request.form())
        if errors:
            return self._form("/contacts/new", self.t("New contact"), v, tags, errors)
        cid = self.db.insert(
            "INSERT INTO contacts (first_name, last_name, email, phone, title, company_id, owner_id, status, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (v["first_name"][:80], v["last_name"][:80], v["email"][:200], v["phone"][:30], v["title"][:100], v["company_id"] or None,
             int(v["owner_id"]), v["status"], self.now().strftime("%Y-%m-%d %H:%M")))
        assert cid is not None
        self._write_tags(cid, tags)
        return RedirectResponse(f"/contacts/{cid}?" + urlencode({"msg": self.t("Contact created.")}), status_code=303)

    async def edit_contact(self, request: Request) -> Response:
        cid = request.path_params["cid"]
        c = self.db.one("SELECT * FROM contacts WHERE id = ?", (cid,))
        if c is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such contact.')}</div>")
        action = f"/contacts/{cid}/edit"
        if request.method == "GET":
            return self._form(action, self.t("Edit contact"), c, set(self._tags_by_contact().get(cid, [])), {})
        v, tags, errors = self._validate(await request.form())
        if errors:
            return self._form(action, self.t("Edit contact"), v, tags, errors)
        if int(v["owner_id"]) != c["owner_id"]:
            used_method(request.scope, "form", f"contacts[id={cid}].owner_id")
        self.db.execute("UPDATE contacts SET first_name=?, last_name=?, email=?, phone=?, title=?, company_id=?, owner_id=?, status=? WHERE id=?",
                        (v["first_name"][:80], v["last_name"][:80], v["email"][:200], v["phone"][:30], v["title"][:100],
                         v["company_id"] or None, int(v["owner_id"]), v["status"], cid))
        self._write_tags(cid, tags)
        return RedirectResponse(f"/contacts/{cid}?" + urlencode({"msg": self.t("Contact saved.")}), status_code=303)

    async def delete_contact(self, request: Request) -> Response:
        self.db.execute("DELETE FROM contacts WHERE id = ?", (request.path_params["cid"],))
        return RedirectResponse("/contacts?" + urlencode({"msg": self.t("Contact deleted.")}), status_code=303)

    # --- companies and deals ---

    async def companies(self, request: Request) -> Response:
        rows = self.db.all("SELECT co.*, (SELECT COUNT(*) FROM contacts c WHERE c.company_id = co.id) AS n, "
                           "(SELECT COALESCE(SUM(amount_cents), 0) FROM deals d WHERE d.company_id = co.id AND d.stage NOT IN ('won','lost')) AS open_cents "
                           "FROM companies co ORDER BY co.name")
        trs = "".join(f'<tr data-id="{r["id"]}"><td><a href="/companies/{r["id"]}">{esc(r["name"])}</a></td><td>{esc(r["industry"])}</td>'
                      f'<td>{esc(r["city"])}</td><td>{r["n"]}</td><td>{self._money(r["open_cents"])}</td></tr>' for r in rows)
        t = self.t
        return self._page(t("Companies"), f"<h1>{t('Companies')}</h1><table class='companies'><thead><tr><th>{t('Company')}</th>"
                          f"<th>{t('Industry')}</th><th>{t('City')}</th><th>{t('Contacts')}</th>"
                          f"<th>{t('Open pipeline')}</th></tr></thead><tbody>{trs}</tbody></table>", request)

    async def company(self, request: Request) -> Response:
        co = self.db.one("SELECT * FROM companies WHERE id = ?", (request.path_params["coid"],))
        if co is None:
            return self._page(self.t("Not found"), f"<div class='error'>{self.t('No such company.')}</div>")
        people = self.db.all("SELECT c.*, o.name AS owner FROM contacts c JOIN owners o ON o.id = c.owner_id WHERE c.company_id = ? "
                             "ORDER BY c.last_name, c.first_name", (co["id"],))
        deals = self.db.all("SELECT * FROM deals WHERE company_id = ? ORDER BY close_date", (co["id"],))
        t = self.t
        ptr = "".join(f'<tr data-id="{p["id"]}"><td><a href="/contacts/{p["id"]}">{esc(p["first_name"])} {esc(p["last_name"])}</a></td><td>{esc(p["title"])}</td>'
                      f'<td>{esc(p["email"])}</td><td>{esc(p["owner"])}</td></tr>' for p in people)
        dtr = "".join(f'<tr data-id="{d["id"]}"><td>{esc(d["name"])}</td><td>{self._money(d["amount_cents"])}</td>'
                      f'<td data-stage="{d["stage"]}">{t(d["stage"])}</td><td>{self._day(d["close_date"])}</td></tr>' for d in deals)
        body = (f'<h1>{esc(co["name"])}</h1><p class="muted">{esc(co["industry"])} · {esc(co["city"])} · {esc(co["website"])}</p>'
                f'<h2>{t("People ({n})").format(n=len(people))}</h2><table><thead><tr><th>{t("Name")}</th><th>{t("Title")}</th>'
                f'<th>{t("Email")}</th><th>{t("Owner")}</th></tr></thead><tbody>{ptr}</tbody></table>'
                f'<h2>{t("Deals ({n})").format(n=len(deals))}</h2><table><thead><tr><th>{t("Deal")}</th><th>{t("Amount")}</th>'
                f'<th>{t("Stage")}</th><th>{t("Close")}</th></tr></thead><tbody>{dtr}</tbody></table>')
        return self._page(co["name"], body, request)

    async def deals(self, request: Request) -> Response:
        stage = self.query(request)["stage"] or ""
        where, params = ("WHERE d.stage = ?", [stage]) if stage in STAGES else ("", [])
        rows = self.db.all(f"SELECT d.*, co.name AS company, o.name AS owner, c.first_name || ' ' || c.last_name AS contact FROM deals d "
                           f"LEFT JOIN companies co ON co.id = d.company_id JOIN owners o ON o.id = d.owner_id LEFT JOIN contacts c ON c.id = d.contact_id "
                           f"{where} ORDER BY d.close_date, d.id", params)
        t = self.t
        tabs = "".join(f'<a class="filter{" active" if s == stage else ""}" href="/deals{"?stage=" + s if s else ""}" data-stage="{s or "all"}"'
                       f'{" aria-current=page" if s == stage else ""}>{t(s or "all")}</a>' for s in ["", *STAGES])
        trs = "".join(
            f'<tr data-id="{d["id"]}"><td>{esc(d["name"])}</td><td>{esc(d["contact"] or "—")}</td><td>{esc(d["owner"])}</td>'
            f'<td class="num">{self._money(d["amount_cents"])}</td><td>{self._day(d["close_date"])}</td>'
            f'<td><form method="post" action="/deals/{d["id"]}/stage" class="row">'
            f'<select name="stage" aria-label="{esc(t("Stage of {name}").format(name=d["name"]))}">'
            + "".join(f'<option value="{s}"{" selected" if s == d["stage"] else ""}>{t(s)}</option>' for s in STAGES)
            + f'</select><input type="hidden" name="back" value="/deals{"?stage=" + stage if stage else ""}">'
            f'<button type="submit" data-action="save-stage">{t("Save")}</button></form></td></tr>'
            for d in rows)
        total = sum(d["amount_cents"] for d in rows)
        summary = t("{n} deals · {total}").format(n=len(rows), total=self._money(total))
        body = (f"<h1>{t('Deals')}</h1><div class='filters tabs'>{tabs}</div><p class='muted'>{summary}</p>"
                f"<table class='deals'><thead><tr><th>{t('Deal')}</th><th>{t('Contact')}</th><th>{t('Owner')}</th><th>{t('Amount')}</th>"
                f"<th>{t('Close date')}</th><th>{t('Stage')}</th></tr></thead><tbody>{trs}</tbody></table>")
        return self._page(t("Deals"), body, request)

    async def deal_stage(self, request: Request) -> Response:
        form = await request.form()
        stage = str(form.get("stage", ""))
        if stage in STAGES:
            self.db.execute("UPDATE deals SET stage = ? WHERE id = ?", (stage, request.path_params["did"]))
        back = str(form.get("back", ""))
        return RedirectResponse(back if back.startswith("/deals") else "/deals", status_code=303)


APP = ContactsApp
