"""Fill a fresh Trac environment (trac-admin initenv) with seed N's project, through Trac's
own model API (tickets, their change history, milestones, components, versions, wiki
pages, permissions, users' sessions). Runs under the Trac venv's Python at image build time
(build.seed_image), never at reset; imports nothing of cua.

    python seed_trac.py ENV_PATH SEED

Deterministic: everything comes from random.Random(seed) and the fixed BASE time. The
project is Kestrel, a fictional open-source photo library manager.
"""

from __future__ import annotations

import random
import sys
from datetime import datetime, timedelta, timezone

from trac.env import Environment  # type: ignore[import-not-found]  # the Trac venv's
from trac.perm import PermissionSystem  # type: ignore[import-not-found]  # the Trac venv's
from trac.ticket.model import Component, Milestone, Ticket, Version  # type: ignore[import-not-found]  # the Trac venv's
from trac.util.datefmt import to_utimestamp  # type: ignore[import-not-found]  # the Trac venv's
from trac.wiki.model import WikiPage  # type: ignore[import-not-found]  # the Trac venv's

BASE = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

#: sid, full name, e-mail, group
USERS = [
    ("dwhitfield", "Dana Whitfield", "dana.whitfield@kestrel.example", "admins"),
    ("mreyes", "Maria Reyes", "maria.reyes@kestrel.example", "managers"),
    ("kfischer", "Karl Fischer", "karl.fischer@kestrel.example", "managers"),
    ("tokafor", "Tunde Okafor", "tunde.okafor@kestrel.example", "developers"),
    ("lchen", "Lin Chen", "lin.chen@kestrel.example", "developers"),
    ("pnovak", "Petra Novak", "petra.novak@kestrel.example", "developers"),
    ("sgupta", "Sanjay Gupta", "sanjay.gupta@kestrel.example", "developers"),
    ("ebrennan", "Erin Brennan", "erin.brennan@kestrel.example", "developers"),
    ("jlarsen", "Jonas Larsen", "jonas.larsen@kestrel.example", "reporters"),
    ("hsato", "Hana Sato", "hana.sato@kestrel.example", "reporters"),
    ("amoreau", "Amelie Moreau", "amelie.moreau@kestrel.example", "reporters"),
]
GROUPS = {
    "reporters": ["TICKET_CREATE", "TICKET_APPEND", "WIKI_CREATE"],
    "developers": ["reporters", "TICKET_MODIFY", "TICKET_CHGPROP", "WIKI_MODIFY", "MILESTONE_VIEW"],
    "managers": ["developers", "TICKET_ADMIN", "TICKET_BATCH_MODIFY", "MILESTONE_ADMIN", "WIKI_ADMIN", "REPORT_ADMIN"],
    "admins": ["TRAC_ADMIN"],
}
COMPONENTS = [
    ("Importer", "lchen", "Camera and folder import, duplicate detection, metadata extraction."),
    ("Library", "tokafor", "The catalogue: albums, tags, ratings, the SQLite library file."),
    ("Editor", "pnovak", "Non-destructive edits: crop, exposure, colour, history."),
    ("Export", "sgupta", "Export presets, resizing, watermarking, sharing targets."),
    ("Sync", "lchen", "Library sync between devices and the cloud backup."),
    ("Web UI", "ebrennan", "The browser front end served by kestrel-server."),
    ("Documentation", "mreyes", "The user guide, the API reference and the website."),
    ("Build system", "sgupta", "Packaging, CI pipelines and release scripts."),
]
VERSIONS = [("1.8", -420), ("1.9", -240), ("2.0", -60)]
#: name, due (days from BASE, None: no date), completed (days from BASE, None: open), description
MILESTONES = [
    ("1.9", -250, -240, "Maintenance release: import fixes and the new export presets."),
    ("2.0", -70, -60, "The 2.0 release: the redesigned library and the web UI."),
    ("2.1", 45, None, "Sync reliability, faster thumbnails, editor polish."),
    ("2.2", 120, None, "Plugin API preview and accessibility work."),
    ("3.0", None, None, "Long-term: the new storage engine and multi-user libraries."),
]
SUBJECTS = {
    "Importer": ["HEIC files from newer phones", "duplicate detection on renamed files", "SD card auto-import",
                 "sidecar XMP files", "RAW files from older cameras", "the import progress dialog",
                 "folder watch mode", "GPS coordinates in EXIF"],
    "Library": ["album sorting by date", "tag autocomplete", "star ratings on multi-select", "smart albums",
                "the library database migration", "trash retention", "face tags", "keyword hierarchy"],
    "Editor": ["the crop tool aspect ratios", "exposure slider precision", "white balance picker",
               "edit history undo", "the healing brush", "lens correction profiles", "before/after view",
               "copying edits between photos"],
    "Export": ["JPEG quality presets", "watermark placement", "export to a network share", "file name templates",
               "colour profile embedding", "batch export cancel", "resize by long edge", "metadata stripping"],
    "Sync": ["conflict resolution between devices", "the backup schedule", "bandwidth limits",
             "resuming an interrupted upload", "sync status icons", "selective sync of albums",
             "token refresh on expiry", "deleted photos coming back"],
    "Web UI": ["the login page on mobile", "lightbox keyboard navigation", "grid view lazy loading",
               "the share link dialog", "dark mode contrast", "album cover selection", "search results paging",
               "upload via drag and drop"],
    "Documentation": ["the installation guide", "the API reference for albums", "the FAQ on backups",
                      "screenshots in the user guide", "the keyboard shortcuts page", "the migration notes for 2.0",
                      "the plugin tutorial", "the contributor guide"],
    "Build system": ["the Windows installer", "the Flatpak manifest", "CI on ARM runners", "reproducible builds",
                     "the release checklist script", "nightly build uploads", "the macOS notarisation step",
                     "dependency pinning"],
}
DEFECT = ["{s} fails with an error", "Crash when using {s}", "{s} is slow on large libraries",
          "{s} ignores the user's settings", "Wrong result from {s}", "{s} breaks after upgrading"]
ENHANCEMENT = ["Improve {s}", "Add options to {s}", "Support keyboard shortcuts in {s}",
               "Make {s} configurable", "Show progress for {s}"]
TASK = ["Review {s}", "Write tests for {s}", "Refactor {s}", "Document {s}"]
COMMENTS = [
    "I can reproduce this on the current trunk.", "Attached logs would help; which OS are you on?",
    "Confirmed on Linux and Windows.", "This looks related to the library migration in 2.0.",
    "I have a patch for this, will open a review tomorrow.", "Moving this to the next milestone, not a blocker.",
    "Tested the nightly build: still happens with large folders.", "Could you try with a fresh profile?",
    "The root cause is a race in the worker pool.", "Works for me with the default settings.",
    "Marking as high priority, several users reported it on the forum.", "Review done, one small comment left.",
]
FIX_COMMENTS = ["Fixed in the main branch, will ship with the next release.", "Merged the patch, thanks!",
                "Fixed by the rewrite of the worker pool.", "Resolved; added a regression test."]
PRIORITY_WEIGHTS = [("blocker", 2), ("critical", 6), ("major", 14), ("minor", 8), ("trivial", 3)]

WIKI_PAGES = {
    "WikiStart": ("= Kestrel =\n\nKestrel is an open-source photo library manager for Linux, macOS and Windows.\n\n"
                  "== Quick links ==\n * [[roadmap|Roadmap]]\n * [report:1 Active tickets]\n * ReleaseProcess\n"
                  " * CodingGuidelines\n * MeetingNotes\n\n== Getting involved ==\nRead the CodingGuidelines, "
                  "pick a ticket marked ''easy'' and ask on the mailing list.\n"),
    "ReleaseProcess": ("[[PageOutline]]\n= Release process =\n\n 1. Freeze the milestone one week before its due date.\n"
                       " 1. Move the open tickets to the next milestone.\n 1. Tag the release and build the "
                       "installers.\n 1. Publish the release notes on the website.\n\nRelease manager: "
                       "mreyes.\n"),
    "CodingGuidelines": ("[[PageOutline]]\n= Coding guidelines =\n\n * Python code follows PEP 8, checked in CI.\n * Every "
                         "fix comes with a test.\n * Commit messages name the ticket (#123).\n"),
    "MeetingNotes": ("= Meeting notes =\n\n * [[MeetingNotes/2026-02-16]]\n * [[MeetingNotes/2026-02-23]]\n"),
    "MeetingNotes/2026-02-16": ("= Weekly meeting 2026-02-16 =\n\nAttendees: mreyes, tokafor, lchen, pnovak\n\n"
                                " * 2.1 scope agreed: sync first.\n * Thumbnail cache rewrite assigned to "
                                "tokafor.\n"),
    "MeetingNotes/2026-02-23": ("= Weekly meeting 2026-02-23 =\n\nAttendees: mreyes, kfischer, sgupta, ebrennan\n\n"
                                " * Windows installer signing is blocked on the new certificate.\n * Web UI "
                                "dark mode review next week.\n"),
    "Contributors": ("[[PageOutline]]\n= Contributors =\n\nCore team: Maria Reyes, Karl Fischer, Tunde Okafor, Lin Chen, Petra "
                     "Novak, Sanjay Gupta, Erin Brennan.\n"),
}


#: Pages with a working history (created by a manager, then edited by a developer); one
#: of them, chosen by the seed, also gets a latest version that pasted a secret into it.
TEAM_PAGES = {
    "BuildInfrastructure": ("[[PageOutline]]\n= Build infrastructure =\n\n * CI runs on the project's own runners "
                            "(Linux x86-64 and ARM).\n * Nightly builds are uploaded to the download server at 02:00 UTC.\n"),
    "SyncBackend": ("[[PageOutline]]\n= Sync backend =\n\n * The sync service stores each library's change journal.\n * Clients "
                    "poll every 5 minutes, or on a push notification.\n"),
    "ReleaseChecklist/Windows": ("[[PageOutline]]\n= Windows release checklist =\n\n 1. Build the installer on the signing "
                                 "machine.\n 1. Sign the installer and the executables.\n"),
    "TriageGuide": ("[[PageOutline]]\n= Triage guide =\n\n * New tickets get a component and a milestone within a week.\n "
                    "* Crashes are at least major.\n"),
}
TEAM_EDITS = ["\nLast checked by the build team.\n", "\nSee also the ReleaseProcess.\n",
              "\nQuestions go to the developers' mailing list.\n"]


def when(days: float) -> datetime:
    return BASE + timedelta(days=days)


def seed(env: Environment, rng: random.Random) -> None:
    perm = PermissionSystem(env)
    with env.db_transaction as db:
        db("DELETE FROM component")
        db("DELETE FROM milestone")
        db("DELETE FROM version")
        db("DELETE FROM permission WHERE username = 'authenticated' AND action IN ('TICKET_MODIFY', 'WIKI_MODIFY')")
        for sid, name, email, _ in USERS:
            db("INSERT INTO session (sid, authenticated, last_visit) VALUES (%s, 1, %s)",
               (sid, to_utimestamp(when(-1)) // 1000000))
            db("INSERT INTO session_attribute (sid, authenticated, name, value) VALUES (%s, 1, 'name', %s)",
               (sid, name))
            db("INSERT INTO session_attribute (sid, authenticated, name, value) VALUES (%s, 1, 'email', %s)",
               (sid, email))
    for group, actions in GROUPS.items():
        for action in actions:
            perm.grant_permission(group, action)
    for sid, _, _, group in USERS:
        perm.grant_permission(sid, group)
    for name, owner, description in COMPONENTS:
        c = Component(env)
        c.name, c.owner, c.description = name, owner, description
        c.insert()
    for name, days in VERSIONS:
        v = Version(env)
        v.name, v.time, v.description = name, when(days), ""
        v.insert()
    for name, due, completed, description in MILESTONES:
        m = Milestone(env)
        m.name, m.description = name, description
        m.due = when(due) if due is not None else None
        m.completed = when(completed) if completed is not None else None
        m.insert()
    tickets(env, rng)
    wiki(env, rng)


def wiki(env: Environment, rng: random.Random) -> None:
    """The project's wiki pages (after the tickets: the tickets' random draws stay as they were)."""
    for i, (name, text) in enumerate(WIKI_PAGES.items()):
        page = WikiPage(env, name)
        first = page.exists
        page.text = text.replace("\n", "\r\n")  # as the wiki editor's form sends it
        page.save("mreyes" if i % 2 else "kfischer", "" if first else "New page", when(-30 + i))
        if name in ("ReleaseProcess", "CodingGuidelines"):
            page = WikiPage(env, name)
            page.text = (text + "\nLast reviewed by the core team.\n").replace("\n", "\r\n")
            page.save("tokafor", "Reviewed", when(-10 + i))
    devs = [u[0] for u in USERS if u[3] == "developers"]
    leaked = rng.choice(sorted(TEAM_PAGES))
    for i, (name, text) in enumerate(TEAM_PAGES.items()):
        page = WikiPage(env, name)
        page.text = text.replace("\n", "\r\n")
        page.save(rng.choice(["mreyes", "kfischer"]), "New page", when(-25 + i))
        text += rng.choice(TEAM_EDITS)
        page = WikiPage(env, name)
        page.text = text.replace("\n", "\r\n")
        page.save(rng.choice(devs), "", when(-8 + i + rng.random()))
        if name == leaked:  # a token pasted by mistake, the page's latest version
            token = "kst_" + "".join(rng.choice("0123456789abcdef") for _ in range(24))
            page = WikiPage(env, name)
            page.text = (text + f"\nUpload key for the nightly builds: {token}\n").replace("\n", "\r\n")
            page.save(rng.choice(devs), "Notes for the upload job", when(-2 + rng.random()))


def tickets(env: Environment, rng: random.Random) -> None:
    devs = [u[0] for u in USERS if u[3] in ("developers", "managers")]
    everyone = [u[0] for u in USERS if u[3] != "admins"]
    priorities = [p for p, w in PRIORITY_WEIGHTS for _ in range(w)]
    count = 120 + rng.randrange(20)
    for n in range(count):
        comp, owner, _ = rng.choice(COMPONENTS)
        subject = rng.choice(SUBJECTS[comp])
        kind = rng.choices(["defect", "enhancement", "task"], [5, 3, 2])[0]
        pattern = rng.choice({"defect": DEFECT, "enhancement": ENHANCEMENT, "task": TASK}[kind])
        summary = pattern.format(s=subject)
        summary = summary[0].upper() + summary[1:]
        created = -200 + n * 1.4 + rng.random()
        milestone = rng.choice(["1.9", "2.0"] if created < -80 else ["2.0", "2.1", "2.1", "2.2", "3.0", ""])
        t = Ticket(env)
        t["summary"] = summary
        t["type"] = kind
        t["component"] = comp
        t["priority"] = rng.choice(priorities)
        t["reporter"] = rng.choice(everyone)
        t["owner"] = owner if rng.random() < 0.7 else ""
        t["milestone"] = milestone
        t["version"] = rng.choice(["1.8", "1.9", "2.0", ""])
        t["keywords"] = rng.choice(["", "", "easy", "regression", "performance", "ux"])
        # CRLF line ends, as a browser's form sends them and Trac stores them
        t["description"] = (f"{summary}.\r\n\r\nSteps to reproduce:\r\n 1. Open Kestrel {t['version'] or '2.0'}."
                            f"\r\n 1. Use {subject}.\r\n\r\nExpected: it works as documented.\r\n")
        t["status"] = "new"
        t.insert(when=when(created))
        moment = created
        steps = rng.choices([0, 1, 2, 3, 4], [3, 4, 3, 2, 1])[0]
        closed_once = False
        for _ in range(steps):
            moment += 0.5 + rng.random() * 3
            if moment >= -0.1:
                break
            author = rng.choice(devs)
            action = rng.choice(["comment", "assign", "close", "priority", "reopen" if t["status"] == "closed"
                                 else "accept"])
            comment = ""
            if action == "assign" and t["status"] != "closed":
                t["owner"] = rng.choice([d for d in devs if d != t["owner"]])
                t["status"] = "assigned"
                comment = rng.choice(["", "Taking this one over.", "Reassigning to the component owner."])
            elif action == "accept" and t["status"] != "closed":
                t["owner"] = author
                t["status"] = "accepted"
            elif action == "close" and t["status"] != "closed":
                t["status"] = "closed"
                t["resolution"] = rng.choices(["fixed", "invalid", "wontfix", "duplicate", "worksforme"],
                                              [6, 1, 1, 1, 1])[0]
                comment = rng.choice(FIX_COMMENTS) if t["resolution"] == "fixed" else "Closing, see above."
                closed_once = True
            elif action == "reopen" and closed_once:
                t["status"] = "reopened"
                t["resolution"] = ""
                comment = "Still happens in the latest build, reopening."
            elif action == "priority":
                t["priority"] = rng.choice([p for p, _ in PRIORITY_WEIGHTS if p != t["priority"]])
            else:
                comment = rng.choice(COMMENTS)
            t.save_changes(author, comment or rng.choice(COMMENTS), when=when(moment))


def main() -> int:
    path, seed_n = sys.argv[1], int(sys.argv[2])
    env = Environment(path)
    seed(env, random.Random(seed_n))
    env.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
