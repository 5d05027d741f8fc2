"""Seeded data for the drive: one person's cloud drive (Noor Haddad) with about 300 files
in nested folders, sizes that fit their types with a long tail (a note of a few hundred
bytes, a photo of megabytes, a screen recording of hundreds of megabytes), version
histories, 15 people from several locales, files shared out and shared in, a few labelled
confidential, and a trash. Text and CSV files hold real content whose UTF-8 length is
their size; other files have a size only. The quota leaves a few hundred megabytes free."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from cua.tasks.apps.base import AppDB

#: (name, email, locale). The first is the signed-in owner of the drive ("me").
PEOPLE = [
    ("Noor Haddad", "noor.haddad@lumen.example", "en-GB"),
    ("Jonas Weber", "jonas.weber@lumen.example", "de-DE"),
    ("Élodie Marchand", "elodie.marchand@lumen.example", "fr-FR"),
    ("Mateo Álvarez", "mateo.alvarez@lumen.example", "es-ES"),
    ("Giulia Ferri", "giulia.ferri@lumen.example", "it-IT"),
    ("Haruto Sato", "haruto.sato@lumen.example", "ja-JP"),
    ("Beatriz Lima", "beatriz.lima@lumen.example", "pt-BR"),
    ("Kasia Zielińska", "kasia.zielinska@lumen.example", "pl-PL"),
    ("Daan Bakker", "daan.bakker@lumen.example", "nl-NL"),
    ("Linnea Berg", "linnea.berg@lumen.example", "sv-SE"),
    ("Arjun Mehta", "arjun.mehta@lumen.example", "en-IN"),
    ("Seo-yeon Kim", "seoyeon.kim@lumen.example", "ko-KR"),
    ("Emre Yılmaz", "emre.yilmaz@lumen.example", "tr-TR"),
    ("Wei Zhang", "wei.zhang@lumen.example", "zh-CN"),
    ("Grace Okafor", "grace.okafor@lumen.example", "en-NG"),
]

#: type -> (extensions, mime, median bytes, spread (log-normal sigma), min, max)
TYPES: dict[str, tuple[tuple[str, ...], str, float, float, int, int]] = {
    "pdf": ((".pdf",), "application/pdf", 420_000, 1.1, 38_000, 24_000_000),
    "document": ((".docx",), "application/vnd.openxmlformats-officedocument.wordprocessingml.document", 64_000, 0.9,
                 11_000, 3_000_000),
    "spreadsheet": ((".xlsx",), "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", 48_000, 1.0,
                    8_000, 6_000_000),
    "presentation": ((".pptx",), "application/vnd.openxmlformats-officedocument.presentationml.presentation", 3_200_000,
                     0.8, 400_000, 60_000_000),
    "image": ((".jpg", ".png"), "image/jpeg", 2_600_000, 0.6, 90_000, 14_000_000),
    "video": ((".mp4",), "video/mp4", 180_000_000, 0.9, 12_000_000, 2_000_000_000),
    "audio": ((".mp3",), "audio/mpeg", 6_500_000, 0.5, 900_000, 40_000_000),
    "archive": ((".zip",), "application/zip", 38_000_000, 1.3, 200_000, 1_500_000_000),
    "text": ((".txt", ".md"), "text/plain", 0, 0, 0, 0),  # sized by their content
    "csv": ((".csv",), "text/csv", 0, 0, 0, 0),
}
TYPE_NAMES = tuple(TYPES)

#: folder path -> (file name patterns, types drawn, how many files). `{n}`, `{m}`, `{y}`,
#: `{client}`, `{place}` and `{topic}` are filled per file.
TREE: dict[str, tuple[list[str], list[str], int]] = {
    "Finance": (["Budget {y}", "Expense report {m} {y}", "Bank statement {m} {y}"], ["spreadsheet", "pdf", "csv"], 6),
    "Finance/Invoices 2025": (["Invoice INV-2025-{n:04d}", "Invoice {client} {m} 2025"], ["pdf"], 22),
    "Finance/Invoices 2026": (["Invoice INV-2026-{n:04d}", "Invoice {client} {m} 2026"], ["pdf"], 9),
    "Finance/Receipts": (["Receipt {place} {m}", "Taxi receipt {m} {n}", "Hotel folio {place}"], ["pdf", "image"], 18),
    "Finance/Taxes": (["Tax return {y}", "Payslips {y}", "Donation receipts {y}", "Tax notes {y}"], ["pdf", "spreadsheet", "text"], 8),
    "Projects": (["Roadmap {y}", "Project charter {topic}"], ["document", "presentation"], 4),
    "Projects/Atlas Redesign": (["Atlas brief v{n}", "Atlas user interviews", "Atlas sitemap", "Atlas timeline"],
                                ["document", "spreadsheet", "pdf", "csv"], 8),
    "Projects/Atlas Redesign/Drafts": (["Homepage copy draft {n}", "Landing page draft {n}", "Style notes {n}"],
                                       ["document", "text"], 10),
    "Projects/Atlas Redesign/Assets": (["Hero image {n}", "Icon set {n}", "Mockup {topic} {n}", "Logo variant {n}"],
                                       ["image", "archive"], 16),
    "Projects/Q1 Launch": (["Launch plan", "Press release draft {n}", "Launch checklist", "Launch metrics {m}", "Demo video {n}"],
                           ["document", "csv", "presentation", "video"], 9),
    "Projects/Research": (["Survey results {m}", "Competitor analysis {topic}", "Interview notes {n}", "Usability study {n}"],
                          ["csv", "pdf", "text", "document", "audio"], 12),
    "Photos": (["IMG_{n:04d}"], ["image"], 6),
    "Photos/Lisbon 2025": (["IMG_{n:04d}", "Lisbon {place} {n}"], ["image", "video"], 26),
    "Photos/Family": (["IMG_{n:04d}", "Birthday {n}", "Garden {n}"], ["image", "video"], 18),
    "Photos/Screenshots": (["Screenshot 2026-0{n1}-{n2:02d} at {h}.{mm:02d}"], ["image"], 12),
    "Reports": (["Weekly status {m} {n}"], ["document", "text"], 5),
    "Reports/Quarterly": (["Q{q} {y} report", "Q{q} {y} KPI export", "Q{q} {y} board deck"], ["pdf", "csv", "presentation"], 14),
    "Reports/Annual": (["Annual report {y}", "Annual summary {y}"], ["pdf", "document"], 5),
    "Personal": (["Reading list", "Packing list", "Gift ideas {y}", "Recipes {n}"], ["text", "document"], 6),
    "Personal/Travel": (["Boarding pass {place}", "Itinerary {place}", "Travel insurance {y}", "Visa application {place}"],
                        ["pdf", "document"], 9),
    "Personal/Health": (["Vaccination record", "Lab results {m} {y}", "Dental invoice {m}"], ["pdf"], 5),
    "Clients/Brightwater Ltd": (["Brightwater proposal v{n}", "Brightwater contract", "Brightwater meeting notes {m}",
                                 "Brightwater SOW {n}"], ["document", "pdf", "text"], 8),
    "Clients/Kessler GmbH": (["Kessler Angebot {n}", "Kessler contract", "Kessler workshop {m}", "Kessler data export {m}"],
                             ["pdf", "document", "presentation", "csv"], 8),
    "Clients/Nordlicht AB": (["Nordlicht proposal", "Nordlicht invoice summary {m}", "Nordlicht kickoff deck"],
                             ["document", "spreadsheet", "presentation"], 6),
    "HR": (["Employment contract", "Salary review {y}", "Performance review {y}", "Onboarding checklist"],
           ["pdf", "document", "spreadsheet"], 6),
    "Press kit": (["Company fact sheet", "Founder bio", "Press photo {n}", "Product screenshots", "Brand guidelines",
                   "Media contacts", "Boilerplate"], ["pdf", "image", "document", "archive"], 8),
    "Old drafts": (["Old draft {n}", "Unused intro {n}", "Scratch {n}"], ["document", "text"], 7),
    "Backups": (["Laptop backup {m} {y}", "Phone backup {y}", "Website backup {m}"], ["archive"], 5),
}
#: folders whose files are labelled confidential (some of them) and files labelled so elsewhere
CONFIDENTIAL_FOLDERS = ("HR", "Clients/Kessler GmbH", "Finance/Taxes")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
CLIENTS = ["Brightwater", "Kessler", "Nordlicht", "Oakridge", "Vantage Labs", "Marlow & Co", "Sunfield", "Tessera"]
PLACES = ["Lisbon", "Porto", "Berlin", "Madrid", "Kyoto", "Oslo", "Sintra", "Alfama", "Belém", "Cascais"]
TOPICS = ["onboarding", "checkout", "pricing", "search", "mobile", "dashboard", "accessibility"]
WORDS = ("the plan covers scope budget timeline risks owners next steps review feedback decision customer team draft "
         "launch metrics research design copy approval follow up call notes summary action items deadline").split()
ROLES = ("viewer", "commenter", "editor")


def _name(rng: random.Random, pattern: str, n: int) -> str:
    return pattern.format(n=n, m=rng.choice(MONTHS), y=rng.choice([2023, 2024, 2025]), client=rng.choice(CLIENTS),
                          place=rng.choice(PLACES), topic=rng.choice(TOPICS), q=rng.randint(1, 4), n1=rng.randint(1, 2),
                          n2=rng.randint(1, 28), h=rng.randint(9, 18), mm=rng.randint(0, 59))


def _size(rng: random.Random, kind: str) -> int:
    _, _, median, sigma, low, high = TYPES[kind]
    return max(low, min(high, int(rng.lognormvariate(0, sigma) * median)))


def text_content(rng: random.Random, title: str) -> str:
    """A short note: a heading and a few lines of realistic words."""
    lines = [f"# {title}", ""]
    for _ in range(rng.randint(2, 9)):
        lines.append("- " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize())
    return "\n".join(lines) + "\n"


def csv_content(rng: random.Random) -> str:
    """A small export: a header and rows of dates, names, regions and amounts."""
    rows = ["date,name,region,amount"]
    day = dt.date(2025, 1, 1)
    for _ in range(rng.randint(4, 40)):
        day += dt.timedelta(days=rng.randint(1, 9))
        rows.append(f"{day.isoformat()},{rng.choice(CLIENTS)},{rng.choice(['EMEA', 'APAC', 'AMER'])},"
                    f"{rng.randint(100, 99999) / 100:.2f}")
    return "\n".join(rows) + "\n"


def _stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")


def seed_drive(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for i, (name, email, locale) in enumerate(PEOPLE, start=1):
        db.insert("INSERT INTO people (id, name, email, locale) VALUES (?,?,?,?)", (i, name, email, locale))

    def when(lo_days: int = 1, hi_days: int = 700) -> dt.datetime:
        return now - dt.timedelta(days=rng.randint(lo_days, hi_days), minutes=rng.randint(0, 600))

    def add(parent: int | None, kind: str, name: str, owner: int, typ: str = "folder", label: str = "") -> int:
        created = when()
        return db.insert("INSERT INTO items (parent_id, kind, name, type, mime, size_bytes, owner_id, created_at, modified_at, "
                         "modified_by, starred, label) VALUES (?,?,?,?,?,0,?,?,?,?,0,?)",
                         (parent, kind, name, typ, "" if kind == "folder" else TYPES[typ][1], owner, _stamp(created),
                          _stamp(created), owner, label))

    def add_file(parent: int | None, title: str, typ: str, owner: int, label: str = "") -> int:
        exts = TYPES[typ][0]
        ext = exts[0] if len(exts) == 1 or typ != "image" or rng.random() < 0.8 else exts[1]
        if typ == "text" and rng.random() < 0.4:
            ext = ".md"
        fid = add(parent, "file", title + ext, owner, typ, label)
        created = dt.datetime.strptime(str(db.scalar("SELECT created_at FROM items WHERE id = ?", (fid,))), "%Y-%m-%d %H:%M")
        n_versions = 1 + (rng.choice([0, 0, 1, 1, 2, 3, 4]) if typ in ("text", "csv", "document", "spreadsheet", "presentation") else 0)
        t, size = created, 0
        for number in range(1, n_versions + 1):
            content = text_content(rng, title) if typ == "text" else csv_content(rng) if typ == "csv" else ""
            size = len(content.encode()) if content else _size(rng, typ)
            author = owner if number == 1 or rng.random() < 0.6 else rng.randint(2, len(PEOPLE))
            db.insert("INSERT INTO versions (item_id, number, size_bytes, content, author_id, created_at, note) VALUES (?,?,?,?,?,?,'')",
                      (fid, number, size, content, author, _stamp(t)))
            if number < n_versions:
                t = min(now - dt.timedelta(hours=1), t + dt.timedelta(days=rng.randint(1, 40), minutes=rng.randint(0, 900)))
        db.execute("UPDATE items SET size_bytes = ?, modified_at = ?, modified_by = (SELECT author_id FROM versions "
                   "WHERE item_id = ? ORDER BY number DESC LIMIT 1) WHERE id = ?", (size, _stamp(t), fid, fid))
        return fid

    root = add(None, "folder", "My Drive", 1)
    folders: dict[str, int] = {"": root}
    names_used: dict[int, set[str]] = {}
    for path in TREE:
        parts = path.split("/")
        for depth in range(1, len(parts) + 1):
            sub = "/".join(parts[:depth])
            if sub not in folders:
                folders[sub] = add(folders["/".join(parts[:depth - 1])], "folder", parts[-1] if depth == len(parts) else parts[depth - 1], 1)
    counter = 1000 + rng.randint(0, 800)
    for path, (patterns, types, count) in TREE.items():
        fid = folders[path]
        used = names_used.setdefault(fid, set())
        confidential = path in CONFIDENTIAL_FOLDERS
        for _ in range(count + rng.randint(0, 3)):
            counter += rng.randint(1, 7)
            typ = rng.choice(types)
            for _attempt in range(20):
                title = _name(rng, rng.choice(patterns), counter % 100 if "{n}" in "".join(patterns) and rng.random() < 0.7 else counter)
                if title not in used:
                    break
                counter += 1
            else:
                continue
            used.add(title)
            label = "confidential" if confidential and rng.random() < 0.6 else ""
            add_file(fid, title, typ, 1, label)
    # the press kit always holds one confidential file among public ones (link-sharing tasks)
    add_file(folders["Press kit"], "Embargoed launch figures", "pdf", 1, "confidential")
    add_file(folders["Press kit"], "Unreleased product roadmap", "presentation", 1, "confidential")
    # files other people own and shared with me: top-level shared items, some in their own folders
    for owner in range(2, len(PEOPLE)):
        if rng.random() < 0.25:
            continue
        shared_folder = add(None, "folder", f"{PEOPLE[owner - 1][0].split()[0]}'s {rng.choice(['handover', 'shared docs', 'project files'])}", owner) \
            if rng.random() < 0.4 else None
        for k in range(rng.randint(2, 7)):
            typ = rng.choice(["pdf", "pdf", "document", "spreadsheet", "presentation", "image", "csv", "text"])
            title = _name(rng, rng.choice(["Meeting notes {m}", "Proposal {client}", "Contract {client}", "Minutes {m} {y}",
                                           "Quarterly numbers Q{q}", "Photo {place}", "Specs {topic}", "Invoice {client} {m}"]), k)
            iid = add_file(shared_folder, f"{title} ({PEOPLE[owner - 1][0].split()[0]})", typ, owner)
            if shared_folder is None or k == 0:
                target = shared_folder if shared_folder is not None and k == 0 else iid
                db.execute("INSERT OR IGNORE INTO shares (item_id, person_id, role, created_at) VALUES (?,1,?,?)",
                           (target, rng.choice(ROLES), _stamp(when(1, 200))))
    # my files shared with others: a few people each, some with link sharing on
    mine = [r["id"] for r in db.all("SELECT id FROM items WHERE owner_id = 1 AND kind = 'file' AND parent_id IS NOT NULL ORDER BY id")]
    for iid in rng.sample(mine, 45):
        for pid in rng.sample(range(2, len(PEOPLE) + 1), rng.choice([1, 1, 2, 3])):
            db.execute("INSERT INTO shares (item_id, person_id, role, created_at) VALUES (?,?,?,?)",
                       (iid, pid, rng.choice(ROLES), _stamp(when(1, 300))))
        if rng.random() < 0.2 and not db.scalar("SELECT label FROM items WHERE id = ?", (iid,)):
            db.execute("UPDATE items SET link_access = 'anyone' WHERE id = ?", (iid,))
    for iid in rng.sample(mine, 18):
        db.execute("UPDATE items SET starred = 1 WHERE id = ?", (iid,))
    # the trash: files and one folder with its files, deleted in the last weeks
    trash_candidates = [r["id"] for r in db.all("SELECT id FROM items WHERE owner_id = 1 AND kind = 'file' AND parent_id IN (?, ?, ?, ?) "
                                                "AND starred = 0 ORDER BY id", (folders["Old drafts"], folders["Photos"],
                                                                                folders["Projects/Atlas Redesign/Drafts"], folders["Reports"]))]
    for iid in rng.sample(trash_candidates, min(9, len(trash_candidates))):
        db.execute("UPDATE items SET trashed = 1, trashed_at = ? WHERE id = ?", (_stamp(when(1, 25)), iid))
    old = add(root, "folder", "Conference 2024", 1)
    for k in range(rng.randint(3, 5)):
        add_file(old, _name(rng, rng.choice(["Talk slides {n}", "Badge scan export {n}", "Booth photo {n}"]), k + 1),
                 rng.choice(["presentation", "csv", "image"]), 1)
    db.execute("UPDATE items SET trashed = 1, trashed_at = ? WHERE id = ?", (_stamp(when(2, 20)), old))
    # a full drive: a whole-disk backup takes what is left of the 15 GiB plan but a few hundred megabytes
    quota = 15 * 1024 ** 3
    free = rng.randint(180, 420) * 1024 ** 2 + rng.randint(0, 1024 ** 2)
    used_bytes = int(db.scalar("SELECT COALESCE(SUM(size_bytes), 0) FROM items WHERE owner_id = 1"))
    if used_bytes + free < quota:
        big = add(folders["Backups"], "file", "Full disk image 2026-02-14.zip", 1, "archive")
        db.insert("INSERT INTO versions (item_id, number, size_bytes, content, author_id, created_at, note) VALUES (?,1,?,'',1,?,'')",
                  (big, quota - free - used_bytes, "2026-02-14 22:10"))
        db.execute("UPDATE items SET size_bytes = ?, created_at = '2026-02-14 22:10', modified_at = '2026-02-14 22:10' WHERE id = ?",
                   (quota - free - used_bytes, big))
    else:
        quota = used_bytes + free
    db.execute("INSERT INTO settings (id, quota_bytes) VALUES (1, ?)", (quota,))


def seed_summary(db: AppDB) -> dict[str, Any]:
    """Counts a test reads to see the seed is realistic (no logic depends on them)."""
    return {"files": db.scalar("SELECT COUNT(*) FROM items WHERE kind = 'file'"),
            "folders": db.scalar("SELECT COUNT(*) FROM items WHERE kind = 'folder'")}
