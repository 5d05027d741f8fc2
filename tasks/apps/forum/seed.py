"""Deterministic forum: ~60 members, ~400 posts over ten tags, nested comment threads."""

from __future__ import annotations

import datetime as dt
import random

from cua.tasks.apps.base import AppDB

ME = "morgan_k"
TAGS = ["python", "javascript", "databases", "devops", "career", "hardware", "gamedev", "security", "design", "meta"]
SUBJECTS = {
    "python": ["asyncio", "type hints", "packaging", "pytest fixtures", "dataclasses", "the GIL", "virtualenvs", "pandas"],
    "javascript": ["promises", "bundlers", "web components", "the event loop", "TypeScript", "service workers", "React hooks"],
    "databases": ["SQLite", "Postgres indexes", "migrations", "query planners", "connection pools", "sharding"],
    "devops": ["Kubernetes", "CI caching", "Terraform", "log retention", "blue-green deploys", "on-call rotations"],
    "career": ["code reviews", "first job", "remote work", "salary negotiation", "mentoring", "burnout"],
    "hardware": ["mechanical keyboards", "home servers", "ARM laptops", "monitors", "Raspberry Pi", "NAS builds"],
    "gamedev": ["ECS", "pathfinding", "shaders", "game jams", "physics engines", "level editors"],
    "security": ["password managers", "2FA", "supply chain attacks", "CSP headers", "secrets in git", "threat models"],
    "design": ["design systems", "dark mode", "typography", "accessibility", "icons", "empty states"],
    "meta": ["forum rules", "tag cleanup", "moderation", "feature requests", "the new editor"],
}
TITLES = ["How do you handle {s}?", "Is {s} worth it in 2026?", "{S}: lessons from a year in production",
          "Beginner question about {s}", "Why I stopped worrying about {s}", "Show and tell: my {s} setup",
          "What's your take on {s}?", "A gentle introduction to {s}", "{S} pitfalls nobody tells you about",
          "Help: {s} broke after upgrading", "Best resources for learning {s}?", "Unpopular opinion: {s} is overrated"]
SENTENCES = ["I've been going back and forth on this for weeks.", "Curious what the rest of you think.",
             "The docs are not very clear on this point.", "We tried the obvious approach first and it did not scale.",
             "Any pointers appreciated!", "Benchmarks attached below, numbers were surprising.",
             "It works on my machine, but not in CI.", "I wrote up a longer post about it last month.",
             "This is mostly a summary of a talk I gave.", "Happy to share the config if anyone wants it."]
REPLIES = ["Great write-up, thanks!", "We hit the same issue, pinning the version fixed it.", "Have you tried turning it off and on again?",
           "Strongly disagree, but good points.", "+1, this matches my experience.", "Do you have numbers for that?",
           "The trick is to keep it boring.", "Came here to say this.", "This saved me a day of debugging.",
           "I think the real problem is elsewhere.", "Could you share the repo?", "Bookmarked for later."]
HANDLES = ["ada_l", "bytebard", "cobalt", "devnull", "echo_k", "fernweh", "gigawatt", "hexagon", "ivy_t", "jetpack",
           "kilobyte", "lambda_l", "moonshot", "nullptr", "octavia", "pixelpush", "quasar", "rustacean", "sudo_sam",
           "tinker", "umlaut", "vectorv", "wombat", "xenon", "yakshaver", "zeroday", "amber_a", "bitflip", "cachemiss",
           "dijkstra_fan", "elm_tree", "fuzzbuzz", "greptile", "heapster", "inode", "jitter", "kernel_k", "latency",
           "mutex", "nibble", "opcode", "polyglot", "quine", "refactor", "segfault", "tabs_not_spaces", "unicode_u",
           "vimmer", "webhook", "yaml_hater", "zettel", "async_anna", "borrowck", "cronjob", "dotfiles", "emacsen",
           "flakey", "gitblame", "hotfix"]


def seed_forum(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for name in [ME, *HANDLES]:
        joined = (now - dt.timedelta(days=rng.randint(30, 1500))).date().isoformat()
        db.execute("INSERT INTO users (name, joined) VALUES (?, ?)", (name, joined))
    for tag in TAGS:
        db.execute("INSERT INTO tags (name) VALUES (?)", (tag,))
    user_count = len(HANDLES) + 1
    titles: set[str] = set()
    for _ in range(400):
        tag = rng.choice(TAGS)
        subject = rng.choice(SUBJECTS[tag])
        title = rng.choice(TITLES).format(s=subject, S=subject[:1].upper() + subject[1:])
        if title in titles:
            title = f"{title} (again)" if f"{title} (again)" not in titles else f"{title} #{rng.randint(2, 999)}"
        titles.add(title)
        created = now - dt.timedelta(minutes=rng.randint(10, 60 * 24 * 90))
        author = rng.randint(2, user_count) if rng.random() > 0.03 else 1
        body = "\n\n".join(" ".join(rng.sample(SENTENCES, rng.randint(2, 4))) for _ in range(rng.randint(1, 3)))
        pid = db.insert("INSERT INTO posts (author_id, title, body, tag, created, score) VALUES (?, ?, ?, ?, ?, ?)",
                             (author, title, body, tag, created.isoformat(timespec="minutes"), rng.randint(-3, 250)))
        comment_ids: list[int] = []
        for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 6, 8])):
            parent = rng.choice(comment_ids) if comment_ids and rng.random() < 0.45 else None
            created_c = created + dt.timedelta(minutes=rng.randint(5, 60 * 24 * 3))
            if created_c > now:
                created_c = now - dt.timedelta(minutes=rng.randint(1, 9))
            cid = db.insert(
                "INSERT INTO comments (post_id, parent_id, author_id, body, created, score) VALUES (?, ?, ?, ?, ?, ?)",
                (pid, parent, 1 if rng.random() < 0.05 else rng.randint(2, user_count), rng.choice(REPLIES),
                 created_c.isoformat(timespec="minutes"),
                 rng.randint(-2, 40)))
            comment_ids.append(cid)
