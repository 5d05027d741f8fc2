"""Deterministic organisation settings, ~100 users, API keys and an audit trail."""

from __future__ import annotations

import datetime as dt
import hashlib
import random

from cua.tasks.apps.base import AppDB

TIMEZONES = ["UTC", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Madrid", "Europe/Warsaw", "Africa/Lagos",
             "Asia/Dubai", "Asia/Kolkata", "Asia/Singapore", "Asia/Tokyo", "Australia/Sydney", "Pacific/Auckland",
             "America/Sao_Paulo", "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"]
LANGUAGES = [("en", "English"), ("de", "Deutsch"), ("es", "Español"), ("fr", "Français"), ("it", "Italiano"),
             ("ja", "日本語"), ("nl", "Nederlands"), ("pl", "Polski"), ("pt", "Português"), ("sv", "Svenska")]
THEMES = ["light", "dark", "system"]
DATE_FORMATS = ["YYYY-MM-DD", "DD/MM/YYYY", "MM/DD/YYYY"]
SESSION_TIMEOUTS = [15, 30, 60, 240, 480]
ROLES = ["owner", "admin", "member", "viewer"]
TEAMS = ["Engineering", "Design", "Sales", "Support", "Finance", "Marketing", "Operations", "Legal"]
FIRST = ["Aaliyah", "Bruno", "Carmen", "Dmitri", "Esther", "Farid", "Gemma", "Hugo", "Isla", "Jamal", "Keiko", "Lars",
         "Maya", "Nikolai", "Olga", "Pedro", "Quentin", "Rosa", "Sven", "Tamara", "Umar", "Vera", "Wei", "Ximena",
         "Yusuf", "Zoe", "Aiden", "Beatriz", "Cyrus", "Daria"]
LAST = ["Abbott", "Bianchi", "Castro", "Dubois", "Eriksen", "Fischer", "Gallo", "Horvat", "Ibrahim", "Jansen",
        "Kowalczyk", "Lindqvist", "Moreau", "Nakamura", "Oyelaran", "Petrov", "Quinn", "Rossi", "Schmidt", "Tanaka",
        "Ueda", "Varga", "Weber", "Xu", "Yamamoto", "Zielinski"]
KEY_NAMES = ["CI pipeline", "Billing webhook", "Data warehouse sync", "Mobile app", "Zapier", "Status page"]
ORG = "Northwind Labs"
DOMAIN = "northwind.io"


def key_secret(seed_text: str) -> str:
    return "nw_live_" + hashlib.sha256(seed_text.encode()).hexdigest()[:28]


def seed_settings(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    values = {
        "org_name": ORG, "timezone": rng.choice(TIMEZONES), "language": rng.choice(LANGUAGES)[0],
        "theme": rng.choice(THEMES), "date_format": rng.choice(DATE_FORMATS),
        "notify_email": rng.choice(["1", "0"]), "notify_sms": rng.choice(["1", "0"]),
        "notify_weekly": rng.choice(["1", "0"]), "notify_security": "1", "notify_marketing": rng.choice(["1", "0"]),
        "require_2fa": rng.choice(["1", "0"]), "session_timeout": str(rng.choice(SESSION_TIMEOUTS)),
        "password_min_length": str(rng.choice([8, 10, 12])), "allow_public_links": rng.choice(["1", "0"]),
    }
    for key, value in values.items():
        db.execute("INSERT INTO settings (key, value) VALUES (?, ?)", (key, value))
    names: set[str] = set()
    for i in range(100):
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        while name in names:
            name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        names.add(name)
        role = "owner" if i == 0 else rng.choices(ROLES[1:], weights=[8, 70, 22])[0]
        status = "active" if i == 0 else rng.choices(["active", "suspended", "invited"], weights=[82, 8, 10])[0]
        last = None if status == "invited" else (now - dt.timedelta(days=rng.randint(0, 120), minutes=rng.randint(0, 1440))).isoformat(timespec="minutes")
        email = f"{name.lower().replace(' ', '.')}@{DOMAIN}"
        db.execute("INSERT INTO users (name, email, role, status, team, last_login) VALUES (?, ?, ?, ?, ?, ?)",
                   (name, email, role, status, rng.choice(TEAMS), last))
    for i, key_name in enumerate(rng.sample(KEY_NAMES, 4)):
        created = now - dt.timedelta(days=rng.randint(30, 500))
        db.execute("INSERT INTO api_keys (name, secret, created, rotated, revoked) VALUES (?, ?, ?, ?, 0)",
                   (key_name, key_secret(f"{key_name}:{i}:{rng.random()}"), created.isoformat(timespec="minutes"), None))
    for _ in range(30):
        at = now - dt.timedelta(days=rng.randint(1, 60), minutes=rng.randint(0, 1440))
        actor = rng.choice(sorted(names))
        action, detail = rng.choice([("user.login", "signed in"), ("setting.change", "changed theme"),
                                     ("user.invite", "invited a user"), ("key.create", "created an API key")])
        db.execute("INSERT INTO audit (at, actor, action, detail) VALUES (?, ?, ?, ?)", (at.isoformat(timespec="minutes"), actor, action, detail))
