"""Settings: an organisation's admin console.

Pages: `/` → `/general` (org name, native timezone select, a custom language
dropdown (listbox), theme and date-format radio groups), `/notifications` (switches
that save on toggle), `/security` (require-2FA switch whose disabling needs a confirm
modal, a session-timeout `<duration-picker>` form-associated custom element in a
SHADOW DOM, password length, public links), `/users` (search, role/status filters,
pagination; `/users/{id}` edit, suspend, delete behind a typed-confirmation modal;
`/users/new` invite), `/api-keys` (create, reset secret and revoke behind confirm
modals), `/audit` (the audit trail). Every change is in SQLite before its response.

`state()` leaves out the audit trail (every change appends to it): judges read
settings, users and API keys; the trail is there for SqlQuery when a task needs it.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from cua.tasks.apps.base import AppDB, WebApp, esc, html_page
from cua.tasks.apps.settings.locale import DE, moment
from cua.tasks.apps.settings.seed import (
    DATE_FORMATS,
    DOMAIN,
    LANGUAGES,
    ROLES,
    SESSION_TIMEOUTS,
    TEAMS,
    THEMES,
    TIMEZONES,
    key_secret,
    seed_settings,
)
from cua.variant import LAYOUTS, LOCALES, VariantAxes

SCHEMA = """
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE users (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL CHECK (role IN ('owner','admin','member','viewer')),
    status TEXT NOT NULL CHECK (status IN ('active','suspended','invited')),
    team TEXT NOT NULL, last_login TEXT
);
CREATE TABLE api_keys (id INTEGER PRIMARY KEY, name TEXT NOT NULL, secret TEXT NOT NULL, created TEXT NOT NULL,
                       rotated TEXT, revoked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE audit (id INTEGER PRIMARY KEY, at TEXT NOT NULL, actor TEXT NOT NULL, action TEXT NOT NULL, detail TEXT NOT NULL);
"""
NAV = [("General", "/general"), ("Notifications", "/notifications"), ("Security", "/security"), ("Users", "/users"),
       ("API keys", "/api-keys"), ("Audit log", "/audit")]
SWITCHES = [("notify_email", "Email notifications", "Activity digests and mentions by email."),
            ("notify_sms", "SMS alerts", "Text messages for urgent incidents."),
            ("notify_weekly", "Weekly report", "A summary of the organisation's usage every Monday."),
            ("notify_security", "Security alerts", "New sign-ins, key resets and role changes."),
            ("notify_marketing", "Product news", "Occasional announcements about new features.")]
BOOL_KEYS = {k for k, _, _ in SWITCHES} | {"require_2fa", "allow_public_links"}
PAGE_SIZE = 20


class SettingsApp(WebApp):
    name = "settings"
    title = "Northwind Admin"
    schema = SCHEMA
    derived = {"settings.*": ("settings.key", "settings.value")}  # the state's settings: key -> value
    assigned = {"users": ("status", "last_login"), "api_keys": ("secret", "rotated", "revoked"), "audit": ("actor", "action", "detail")}
    static_dir = Path(__file__).parent / "static"
    #: sidebar: the app bar is the left rail and the sections become tabs above the page;
    #: dense: a compact console (narrow section list, tight rows and forms)
    variant_axes = VariantAxes(layouts=LAYOUTS, locales=LOCALES)

    def t(self, text: str) -> str:
        if self.variant.locale == "de-DE" and text in DE:
            return DE[text]
        return super().t(text)

    def _when(self, iso: str | None) -> str:
        return moment(iso, self.variant.locale, self.t("never"))

    def _flash(self, text: str) -> str:
        """A flash message carried in the address (`?flash=Saved`), in the page's locale."""
        head, _, rest = text.partition(" ")
        if text not in DE and head in DE and rest:  # `Deleted name@…`: a word and the record's own text
            return f"{self.t(head)} {rest}"
        return self.t(text)

    def seed(self, db: AppDB, rng: random.Random, seed: int) -> None:
        seed_settings(db, rng, self.now())

    def state(self) -> dict[str, Any]:
        settings = {r["key"]: r["value"] for r in self.db.all("SELECT key, value FROM settings ORDER BY key")}
        typed: dict[str, Any] = {k: (v == "1") if k in BOOL_KEYS else int(v) if v.isdigit() else v for k, v in settings.items()}
        return {"settings": typed, "users": self.db.all("SELECT * FROM users ORDER BY id"),
                "api_keys": [{**k, "revoked": bool(k["revoked"])} for k in self.db.all("SELECT * FROM api_keys ORDER BY id")]}

    # --- helpers ---

    def _settings(self) -> dict[str, str]:
        return {r["key"]: r["value"] for r in self.db.all("SELECT key, value FROM settings")}

    def _me(self) -> dict[str, Any]:
        me = self.db.one("SELECT * FROM users WHERE role = 'owner' ORDER BY id LIMIT 1")
        assert me is not None, "the seed always has an owner"
        return me

    def _audit(self, action: str, detail: str) -> None:
        self.db.execute("INSERT INTO audit (at, actor, action, detail) VALUES (?, ?, ?, ?)",
                        (self.now().isoformat(timespec="minutes"), self._me()["name"], action, detail))

    def _set(self, key: str, value: str) -> None:
        old = self.db.scalar("SELECT value FROM settings WHERE key = ?", (key,))
        if old != value:
            self.db.execute("UPDATE settings SET value = ? WHERE key = ?", (value, key))
            self._audit("setting.change", f"{key}: {old} → {value}")

    def _page(self, title: str, body: str, active: str) -> Response:
        me = self._me()
        side = "".join(f'<a class="side-link{" active" if href == active else ""}" href="{href}" data-nav="{href}"'
                       f'{" aria-current=page" if href == active else ""}>{self.t(label)}</a>' for label, href in NAV)
        layout = (f'<div class="console"><nav class="side" aria-label="{self.t("Settings sections")}">{side}</nav>'
                  f'<section class="content">{body}</section></div>')
        return html_page(self, title, layout, nav=[(f"{self.t('Signed in as')} {me['name']}", f"/users/{me['id']}")],
                         scripts=["/static/app/widgets.js", "/static/app/settings.js"])

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/", lambda r: RedirectResponse("/general", status_code=302)),
            Route("/general", self.general, methods=["GET", "POST"]),
            Route("/notifications", self.notifications),
            Route("/api/settings", self.api_setting, methods=["POST"]),
            Route("/security", self.security, methods=["GET", "POST"]),
            Route("/users", self.users),
            Route("/users/new", self.invite, methods=["GET", "POST"]),
            Route("/users/{user_id:int}", self.user, methods=["GET", "POST"]),
            Route("/users/{user_id:int}/delete", self.delete_user, methods=["POST"]),
            Route("/api-keys", self.api_keys, methods=["GET", "POST"]),
            Route("/api-keys/{key_id:int}/reset", self.reset_key, methods=["POST"]),
            Route("/api-keys/{key_id:int}/revoke", self.revoke_key, methods=["POST"]),
            Route("/audit", self.audit),
        ]

    # --- general ---

    async def general(self, request: Request) -> Response:
        if request.method == "POST":
            form = await request.form()
            org = str(form.get("org_name", "")).strip()[:80]
            if org:
                self._set("org_name", org)
            for key, allowed in (("timezone", TIMEZONES), ("language", [c for c, _ in LANGUAGES]), ("theme", THEMES),
                                 ("date_format", DATE_FORMATS)):
                value = str(form.get(key, ""))
                if value in allowed:
                    self._set(key, value)
            return RedirectResponse("/general?saved=1", status_code=303)
        s = self._settings()
        tz = "".join(f"<option{' selected' if t == s['timezone'] else ''}>{esc(t)}</option>" for t in TIMEZONES)
        lang_label = dict(LANGUAGES)[s["language"]]
        lang_opts = "".join(f'<li role="option" id="lang-{c}" data-value="{c}" aria-selected="{"true" if c == s["language"] else "false"}">{esc(n)}</li>'
                            for c, n in LANGUAGES)
        theme = "".join(f"<label class='radio'><input type='radio' name='theme' value='{t}'{' checked' if t == s['theme'] else ''}> "
                        f"{self.t(t) if self.variant.locale != 'en-US' else t.title()}</label>" for t in THEMES)
        datef = "".join(f"<label class='radio'><input type='radio' name='date_format' value='{d}'{' checked' if d == s['date_format'] else ''}> {d}</label>"
                        for d in DATE_FORMATS)
        t = self.t
        flash = f"<div class='flash' role='status'>{t('Settings saved.')}</div>" if request.query_params.get("saved") else ""
        body = (f"{flash}<h1>{t('General')}</h1><form class='card settings-form' method='post' action='/general' data-form='general'>"
                f"<label class='field'>{t('Organisation name')}<input type='text' name='org_name' value='{esc(s['org_name'])}'></label>"
                f"<label class='field'>{t('Time zone')}<select name='timezone'>{tz}</select></label>"
                f"<div class='field'><span id='lang-label'>{t('Language')}</span>"
                f"<div class='dropdown' data-dropdown><input type='hidden' name='language' value='{esc(s['language'])}'>"
                "<button type='button' class='dropdown-button' role='combobox' aria-haspopup='listbox' aria-expanded='false' "
                f"aria-labelledby='lang-label' aria-controls='lang-list'><span class='dropdown-value'>{esc(lang_label)}</span><span class='caret'>▾</span></button>"
                f"<ul class='dropdown-list' role='listbox' id='lang-list' aria-labelledby='lang-label' tabindex='-1' hidden>{lang_opts}</ul></div></div>"
                f"<fieldset class='field'><legend>{t('Theme')}</legend><div role='radiogroup' class='radios'>{theme}</div></fieldset>"
                f"<fieldset class='field'><legend>{t('Date format')}</legend><div role='radiogroup' class='radios'>{datef}</div></fieldset>"
                f"<button type='submit' class='primary' data-action='save'>{t('Save changes')}</button></form>")
        return self._page(t("General"), body, "/general")

    # --- notifications (switches save on toggle) ---

    def _switch(self, key: str, label: str, help_text: str, on: bool, *, confirm: str = "") -> str:
        extra = f" data-confirm='{esc(self.t(confirm))}'" if confirm else ""
        return (f"<div class='switch-row' data-setting='{key}'><div><div class='switch-label' id='{key}-label'>{esc(self.t(label))}</div>"
                f"<div class='muted small'>{esc(self.t(help_text))}</div></div>"
                f"<button type='button' class='switch' role='switch' data-key='{key}' aria-checked='{'true' if on else 'false'}' "
                f"aria-labelledby='{key}-label'{extra}><span class='knob'></span></button></div>")

    async def notifications(self, request: Request) -> Response:
        s = self._settings()
        rows = "".join(self._switch(k, label, help_text, s[k] == "1") for k, label, help_text in SWITCHES)
        t = self.t
        return self._page(t("Notifications"), f"<h1>{t('Notifications')}</h1><p class='muted'>{t('Changes save immediately.')}</p>"
                          f"<div class='card switches'>{rows}</div>", "/notifications")

    async def api_setting(self, request: Request) -> Response:
        try:
            payload = await request.json()
            key, value = str(payload["key"]), payload["value"]
        except (ValueError, KeyError, TypeError):
            return JSONResponse({"error": "expected {key, value}"}, status_code=400)
        if key not in BOOL_KEYS or not isinstance(value, bool):
            return JSONResponse({"error": f"{key!r} is not a switch setting"}, status_code=400)
        self._set(key, "1" if value else "0")
        return JSONResponse({"key": key, "value": value})

    # --- security ---

    async def security(self, request: Request) -> Response:
        if request.method == "POST":
            form = await request.form()
            timeout = str(form.get("session_timeout", ""))
            if timeout.isdigit() and int(timeout) in SESSION_TIMEOUTS:
                self._set("session_timeout", timeout)
            length = str(form.get("password_min_length", ""))
            if length.isdigit() and 8 <= int(length) <= 64:
                self._set("password_min_length", str(int(length)))
            return RedirectResponse("/security?saved=1", status_code=303)
        s = self._settings()
        t = self.t
        flash = f"<div class='flash' role='status'>{t('Security settings saved.')}</div>" if request.query_params.get("saved") else ""
        switches = (self._switch("require_2fa", "Require two-factor authentication", "Every member must set up 2FA to sign in.",
                                 s["require_2fa"] == "1", confirm="Turn off required two-factor authentication? Members will be able to sign in with a password only.")
                    + self._switch("allow_public_links", "Allow public share links", "Anyone with a link can view shared documents.",
                                   s["allow_public_links"] == "1"))
        options = ",".join(str(t) for t in SESSION_TIMEOUTS)
        body = (f"{flash}<h1>{t('Security')}</h1><div class='card switches'>{switches}</div>"
                "<form class='card settings-form' method='post' action='/security' data-form='security'>"
                f"<div class='field'><span id='timeout-label'>{t('Session timeout')}</span>"
                f"<duration-picker name='session_timeout' value='{esc(s['session_timeout'])}' options='{options}' aria-labelledby='timeout-label'></duration-picker></div>"
                f"<label class='field'>{t('Minimum password length')}"
                f"<input type='number' name='password_min_length' min='8' max='64' value='{esc(s['password_min_length'])}'></label>"
                f"<button type='submit' class='primary' data-action='save'>{t('Save security settings')}</button></form>"
                "<div class='modal-backdrop' id='confirm-modal' hidden><div class='modal' role='dialog' aria-modal='true' aria-labelledby='confirm-text'>"
                f"<p id='confirm-text'></p><div class='row'><button type='button' class='danger' id='confirm-yes'>{t('Turn off')}</button>"
                f"<button type='button' id='confirm-no'>{t('Cancel')}</button></div></div></div>")
        return self._page(t("Security"), body, "/security")

    # --- users ---

    async def users(self, request: Request) -> Response:
        q = request.query_params.get("q", "").strip()
        role = request.query_params.get("role", "")
        status = request.query_params.get("status", "")
        page = max(1, int(request.query_params.get("page", "1")) if request.query_params.get("page", "1").isdigit() else 1)
        where, params = ["1=1"], []
        if q:
            where.append("(name LIKE ? OR email LIKE ? OR team LIKE ?)")
            params += [f"%{q}%"] * 3
        if role in ROLES:
            where.append("role = ?")
            params.append(role)
        if status in ("active", "suspended", "invited"):
            where.append("status = ?")
            params.append(status)
        clause = " AND ".join(where)
        total = self.db.scalar(f"SELECT COUNT(*) FROM users WHERE {clause}", params)
        rows = self.db.all(f"SELECT * FROM users WHERE {clause} ORDER BY name LIMIT ? OFFSET ?", [*params, PAGE_SIZE, (page - 1) * PAGE_SIZE])
        pages = max(1, -(-total // PAGE_SIZE))
        t = self.t
        trs = "".join(
            f"<tr data-user='{esc(u['email'])}' data-role='{u['role']}' data-status='{u['status']}'><td><a href='/users/{u['id']}'>{esc(u['name'])}</a></td><td>{esc(u['email'])}</td>"
            f"<td><span class='role {u['role']}'>{t(u['role'])}</span></td><td><span class='status {u['status']}'>{t(u['status'])}</span></td>"
            f"<td>{esc(u['team'])}</td><td class='muted'>{esc(self._when(u['last_login']))}</td></tr>" for u in rows)

        def link(p: int) -> str:
            return "/users?" + urlencode({k: v for k, v in (("q", q), ("role", role), ("status", status), ("page", str(p))) if v})

        prev_link = f"<a href='{link(page - 1)}' rel=prev>← {t('Previous')}</a>" if page > 1 else ""
        next_link = f"<a href='{link(page + 1)}' rel=next>{t('Next')} →</a>" if page < pages else ""
        pager = (f"<div class='pager row'>{prev_link}"
                 f"<span class='muted'>{t('Page')} {page} {t('of')} {pages} · {total} {t('users')}</span>{next_link}</div>")
        role_opts = "".join(f"<option value='{r}'{' selected' if r == role else ''}>{self._label(r)}</option>" for r in ROLES)
        status_opts = "".join(f"<option value='{s}'{' selected' if s == status else ''}>{self._label(s)}</option>" for s in ("active", "suspended", "invited"))
        flash = f"<div class='flash' role='status'>{esc(self._flash(request.query_params['flash']))}</div>" if request.query_params.get("flash") else ""
        heads = "".join(f"<th>{t(h)}</th>" for h in ("Name", "Email", "Role", "Status", "Team", "Last sign-in"))
        body = (f"{flash}<div class='row head-row'><h1>{t('Users')}</h1><a class='button primary' href='/users/new' data-action='invite'>{t('Invite user')}</a></div>"
                "<form class='card row filters' method='get' action='/users' data-form='filter'>"
                f"<input type='search' name='q' value='{esc(q)}' placeholder='{t('Search name, email or team')}' aria-label='{t('Search users')}'>"
                f"<select name='role' aria-label='{t('Role')}'><option value=''>{t('All roles')}</option>{role_opts}</select>"
                f"<select name='status' aria-label='{t('Status')}'><option value=''>{t('All statuses')}</option>{status_opts}</select>"
                f"<button type='submit' data-action='filter'>{t('Filter')}</button></form>"
                f"<table class='users'><thead><tr>{heads}</tr></thead>"
                f"<tbody>{trs}</tbody></table>{pager}")
        return self._page(t("Users"), body, "/users")

    def _label(self, value: str) -> str:
        """A role's or status's label: `Admin` in en-US (its stored word, capitalised), the locale's word otherwise."""
        return value.title() if self.variant.locale == "en-US" else self.t(value)

    async def invite(self, request: Request) -> Response:
        error = ""
        if request.method == "POST":
            form = await request.form()
            name, email = str(form.get("name", "")).strip()[:80], str(form.get("email", "")).strip().lower()[:120]
            role, team = str(form.get("role", "member")), str(form.get("team", TEAMS[0]))
            if not name or "@" not in email:
                error = self.t("Enter a name and a valid email.")
            elif self.db.one("SELECT id FROM users WHERE email = ?", (email,)):
                error = f"{email} {self.t('is already a member.')}"
            elif role not in ROLES[1:] or team not in TEAMS:
                error = self.t("Choose a role and a team.")
            else:
                new_id = self.db.insert("INSERT INTO users (name, email, role, status, team, last_login) VALUES (?, ?, ?, 'invited', ?, NULL)",
                                      (name, email, role, team))
                self._audit("user.invite", f"invited {email} as {role}")
                return RedirectResponse(f"/users/{new_id}?flash=Invitation+sent", status_code=303)
        t = self.t
        roles = "".join(f"<option value='{r}'{' selected' if r == 'member' else ''}>{self._label(r)}</option>" for r in ROLES[1:])
        teams = "".join(f"<option>{team}</option>" for team in TEAMS)
        body = (f"<h1>{t('Invite user')}</h1>{'<div class=error>' + esc(error) + '</div>' if error else ''}"
                "<form class='card settings-form' method='post' action='/users/new' data-form='invite'>"
                f"<label class='field'>{t('Full name')}<input type='text' name='name' required></label>"
                f"<label class='field'>{t('Email')}<input type='email' name='email' required placeholder='name@{DOMAIN}'></label>"
                f"<label class='field'>{t('Role')}<select name='role'>{roles}</select></label>"
                f"<label class='field'>{t('Team')}<select name='team'>{teams}</select></label>"
                f"<button type='submit' class='primary' data-action='send-invitation'>{t('Send invitation')}</button></form>")
        return self._page(t("Invite user"), body, "/users")

    async def user(self, request: Request) -> Response:
        uid = request.path_params["user_id"]
        u = self.db.one("SELECT * FROM users WHERE id = ?", (uid,))
        t = self.t
        if u is None:
            return self._page(t("Not found"), f"<div class='error'>{t('No such user.')}</div>", "/users")
        error = ""
        if request.method == "POST":
            form = await request.form()
            name = str(form.get("name", "")).strip()[:80] or u["name"]
            role, team, status = str(form.get("role", u["role"])), str(form.get("team", u["team"])), str(form.get("status", u["status"]))
            if u["role"] == "owner" and (role != "owner" or status != u["status"]):
                error = t("The owner's role and status cannot be changed.")
            elif role not in ROLES[1:] and u["role"] != "owner" or team not in TEAMS or status not in ("active", "suspended", "invited"):
                error = t("Invalid role, team or status.")
            else:
                changes = [f"{k}: {u[k]} → {v}" for k, v in (("name", name), ("role", role), ("team", team), ("status", status)) if u[k] != v]
                self.db.execute("UPDATE users SET name = ?, role = ?, team = ?, status = ? WHERE id = ?", (name, role, team, status, uid))
                if changes:
                    self._audit("user.update", f"{u['email']}: " + "; ".join(changes))
                return RedirectResponse(f"/users/{uid}?flash=Saved", status_code=303)
        is_owner = u["role"] == "owner"
        roles = "".join(f"<option value='{r}'{' selected' if r == u['role'] else ''}>{self._label(r)}</option>"
                        for r in (ROLES if is_owner else ROLES[1:]))
        teams = "".join(f"<option{' selected' if team == u['team'] else ''}>{team}</option>" for team in TEAMS)
        statuses = "".join(f"<label class='radio'><input type='radio' name='status' value='{s}'{' checked' if s == u['status'] else ''}"
                           f"{' disabled' if is_owner else ''}> {self._label(s)}</label>" for s in ("active", "suspended", "invited"))
        flash = f"<div class='flash' role='status'>{esc(self._flash(request.query_params['flash']))}</div>" if request.query_params.get("flash") else ""
        danger = "" if is_owner else (
            f"<div class='card danger-zone'><h2>{t('Danger zone')}</h2><p>{t('Deleting a user removes their access immediately.')}</p>"
            f"<button type='button' class='danger' id='delete-open' data-action='delete'>{t('Delete user…')}</button></div>"
            f"<div class='modal-backdrop' id='delete-modal' hidden><div class='modal' role='dialog' aria-modal='true' aria-label='{t('Delete user')}'>"
            f"<p>{t('Delete')} <strong>{esc(u['name'])}</strong>? {t('Type their email to confirm.')}</p>"
            f"<form method='post' action='/users/{uid}/delete'><input type='text' name='confirm' id='delete-confirm-input' "
            f"aria-label='{t('Type')} {esc(u['email'])} {t('to confirm')}' autocomplete='off' data-expect='{esc(u['email'])}'>"
            f"<div class='row modal-actions'><button type='submit' class='danger' id='delete-confirm' disabled>{t('Delete user')}</button>"
            f"<button type='button' id='delete-cancel'>{t('Cancel')}</button></div></form></div></div>")
        body = (f"{flash}{'<div class=error>' + esc(error) + '</div>' if error else ''}<h1>{esc(u['name'])}</h1>"
                f"<p class='muted'>{esc(u['email'])} · {t('last sign-in')} {esc(self._when(u['last_login']))}</p>"
                f"<form class='card settings-form' method='post' action='/users/{uid}' data-form='user'>"
                f"<label class='field'>{t('Full name')}<input type='text' name='name' value='{esc(u['name'])}'></label>"
                f"<label class='field'>{t('Role')}<select name='role'{' disabled' if is_owner else ''}>{roles}</select></label>"
                + (f"<input type='hidden' name='role' value='owner'><input type='hidden' name='status' value='{u['status']}'>" if is_owner else "")
                + f"<label class='field'>{t('Team')}<select name='team'>{teams}</select></label>"
                f"<fieldset class='field'><legend>{t('Status')}</legend><div role='radiogroup' class='radios'>{statuses}</div></fieldset>"
                f"<button type='submit' class='primary' data-action='save'>{t('Save user')}</button> "
                f"<a class='button' href='/users' data-action='back'>{t('Back to users')}</a></form>{danger}")
        return self._page(u["name"], body, "/users")

    async def delete_user(self, request: Request) -> Response:
        uid = request.path_params["user_id"]
        u = self.db.one("SELECT * FROM users WHERE id = ?", (uid,))
        if u is None or u["role"] == "owner":
            return RedirectResponse("/users", status_code=303)
        if str((await request.form()).get("confirm", "")).strip().lower() != u["email"]:
            return RedirectResponse(f"/users/{uid}?flash=Not+deleted:+the+email+did+not+match", status_code=303)
        self.db.execute("DELETE FROM users WHERE id = ?", (uid,))
        self._audit("user.delete", f"deleted {u['email']}")
        return RedirectResponse(f"/users?flash=Deleted+{u['email']}", status_code=303)

    # --- API keys ---

    async def api_keys(self, request: Request) -> Response:
        if request.method == "POST":
            name = str((await request.form()).get("name", "")).strip()[:60]
            if name:
                n = self.db.scalar("SELECT COUNT(*) FROM api_keys")
                new_id = self.db.insert("INSERT INTO api_keys (name, secret, created, rotated, revoked) VALUES (?, ?, ?, NULL, 0)",
                                      (name, key_secret(f"{self.current_seed}:{n}:{name}"), self.now().isoformat(timespec="minutes")))
                self._audit("key.create", f"created key {name}")
                return RedirectResponse(f"/api-keys?shown={new_id}", status_code=303)
            return RedirectResponse("/api-keys", status_code=303)
        shown = request.query_params.get("shown", "")
        keys = self.db.all("SELECT * FROM api_keys ORDER BY id")
        reveal = ""
        t = self.t
        revoked = f'<span class="status suspended">{t("revoked")}</span>'
        active = f'<span class="status active">{t("active")}</span>'
        for k in keys:
            if str(k["id"]) == shown:
                reveal = (f"<div class='flash secret' role='status'>{t('New secret for')} <strong>{esc(k['name'])}</strong> "
                          f"{t('(copy it now, it will not be shown again)')}: "
                          f"<code id='new-secret'>{esc(k['secret'])}</code></div>")
        rows = "".join(
            f"<tr data-key='{esc(k['name'])}' class='{'revoked' if k['revoked'] else ''}'><td>{esc(k['name'])}</td>"
            f"<td><code>{esc(k['secret'][:12])}…</code></td><td>{esc(self._when(k['created'][:10]))}</td>"
            f"<td>{esc(self._when(k['rotated'][:10]) if k['rotated'] else '—')}</td>"
            f"<td>{revoked if k['revoked'] else active}</td>"
            "<td class='row'>" + ("" if k["revoked"] else
                                  f"<button type='button' class='confirm-open' data-action='/api-keys/{k['id']}/reset' data-op='reset' "
                                  f"data-text='{t('Reset the secret of')} “{esc(k['name'])}”? {t('Apps using the old secret stop working at once.')}' "
                                  f"data-yes='{t('Reset secret')}'>{t('Reset…')}</button>"
                                  f"<button type='button' class='confirm-open danger' data-action='/api-keys/{k['id']}/revoke' data-op='revoke' "
                                  f"data-text='{t('Revoke')} “{esc(k['name'])}”? {t('This cannot be undone.')}' data-yes='{t('Revoke key')}'>{t('Revoke…')}</button>")
            + "</td></tr>" for k in keys)
        heads = "".join(f"<th>{t(h)}</th>" for h in ("Name", "Secret", "Created", "Last reset", "Status"))
        body = (f"{reveal}<h1>{t('API keys')}</h1><table class='keys'><thead><tr>{heads}<th></th></tr></thead><tbody>{rows}</tbody></table>"
                f"<form class='card row' method='post' action='/api-keys' data-form='new-key'><label for='key-name'>{t('New key name')}</label>"
                f"<input id='key-name' type='text' name='name' required><button type='submit' class='primary' data-action='create-key'>{t('Create key')}</button></form>"
                "<div class='modal-backdrop' id='action-modal' hidden><div class='modal' role='dialog' aria-modal='true' aria-labelledby='action-text'>"
                f"<p id='action-text'></p><form method='post' id='action-form' class='row'><button type='submit' class='danger' id='action-yes'>{t('Confirm')}</button>"
                f"<button type='button' id='action-no'>{t('Cancel')}</button></form></div></div>")
        return self._page(t("API keys"), body, "/api-keys")

    async def reset_key(self, request: Request) -> Response:
        kid = request.path_params["key_id"]
        k = self.db.one("SELECT * FROM api_keys WHERE id = ? AND revoked = 0", (kid,))
        if k is None:
            return RedirectResponse("/api-keys", status_code=303)
        self.db.execute("UPDATE api_keys SET secret = ?, rotated = ? WHERE id = ?",
                        (key_secret(f"{k['secret']}:reset"), self.now().isoformat(timespec="minutes"), kid))
        self._audit("key.reset", f"reset key {k['name']}")
        return RedirectResponse(f"/api-keys?shown={kid}", status_code=303)

    async def revoke_key(self, request: Request) -> Response:
        kid = request.path_params["key_id"]
        k = self.db.one("SELECT * FROM api_keys WHERE id = ?", (kid,))
        if k is not None and not k["revoked"]:
            self.db.execute("UPDATE api_keys SET revoked = 1 WHERE id = ?", (kid,))
            self._audit("key.revoke", f"revoked key {k['name']}")
        return RedirectResponse("/api-keys", status_code=303)

    async def audit(self, request: Request) -> Response:
        rows = self.db.all("SELECT * FROM audit ORDER BY at DESC, id DESC LIMIT 200")
        t = self.t
        trs = "".join(f"<tr data-audit='{r['id']}'><td class='muted'><time datetime='{esc(r['at'])}'>{esc(self._when(r['at']))}</time></td>"
                      f"<td>{esc(r['actor'])}</td><td><code>{esc(r['action'])}</code></td>"
                      f"<td>{esc(r['detail'])}</td></tr>" for r in rows)
        heads = "".join(f"<th>{t(h)}</th>" for h in ("When", "Who", "Action", "Detail"))
        return self._page(t("Audit log"), f"<h1>{t('Audit log')}</h1><table class='audit'><thead><tr>{heads}</tr></thead>"
                          f"<tbody>{trs}</tbody></table>", "/audit")


APP = SettingsApp
