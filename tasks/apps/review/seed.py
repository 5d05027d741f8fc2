"""Seeded data for the code-review forge: 20 people from several locales, 8 repositories
of one organisation with believable file trees (Go services, TypeScript front ends,
Python pipelines), about 60 pull requests whose diffs are real unified diffs of those
files, with a long tail of review comments, reviews, CI checks, labels, issues and
notifications. Every date is before the app's clock; every choice comes from `rng`."""

from __future__ import annotations

import datetime as dt
import difflib
import random

from cua.tasks.apps.base import AppDB

ORG = "lattice"
#: (name, login, locale, location). The first is the signed-in maintainer ("me").
PEOPLE = [
    ("Noor Haddad", "noor", "ar-JO", "Amman"),
    ("Lukas Becker", "lbecker", "de-DE", "Berlin"),
    ("Aiko Tanaka", "aiko-t", "ja-JP", "Osaka"),
    ("Mateo García", "mgarcia", "es-ES", "Valencia"),
    ("Priya Nair", "priyan", "en-IN", "Bengaluru"),
    ("Olusegun Adeyemi", "segun", "en-NG", "Lagos"),
    ("Ingrid Johansson", "ingridj", "sv-SE", "Gothenburg"),
    ("Wei Chen", "weichen", "zh-CN", "Shenzhen"),
    ("Camille Durand", "cdurand", "fr-FR", "Lyon"),
    ("João Pereira", "jpereira", "pt-BR", "Recife"),
    ("Dmitri Volkov", "dvolkov", "ru-RU", "Tbilisi"),
    ("Hannah Schmidt", "hschmidt", "de-AT", "Graz"),
    ("Kwame Mensah", "kmensah", "en-GH", "Accra"),
    ("Sofia Rossi", "srossi", "it-IT", "Bologna"),
    ("Min-jun Park", "minjun", "ko-KR", "Seoul"),
    ("Emily Clarke", "eclarke", "en-AU", "Melbourne"),
    ("Jakub Nowak", "jnowak", "pl-PL", "Kraków"),
    ("Ana Lucía Torres", "altorres", "es-MX", "Guadalajara"),
    ("Liam O'Brien", "liamob", "en-IE", "Cork"),
    ("Yuki Sato", "ysato", "ja-JP", "Sapporo"),
]
LABELS = [("bug", "Something is broken", "danger"), ("enhancement", "A new feature or an improvement", "accent"),
          ("security", "Touches authentication, secrets or permissions", "danger"),
          ("performance", "Makes something faster or lighter", "success"), ("docs", "Documentation only", "muted"),
          ("dependencies", "Bumps a dependency", "muted"), ("needs-tests", "Needs tests before it can merge", "warning"),
          ("breaking-change", "Changes a public interface", "warning"), ("good first issue", "Small and well scoped", "success"),
          ("refactor", "No change in behaviour", "muted")]
CHECKS = {"go": ["go vet", "go test ./...", "golangci-lint"], "ts": ["eslint", "vitest", "build"],
          "py": ["ruff", "pytest (3.11)", "pytest (3.12)", "mypy"], "md": ["markdownlint", "links"]}


def _go(pkg: str, kind: str, fields: list[str]) -> str:
    body = "\n".join(f"\t{f.title().replace('_', '')} string `json:\"{f}\"`" for f in fields)
    return (f"package {pkg}\n\nimport (\n\t\"context\"\n\t\"errors\"\n\t\"time\"\n)\n\n"
            f"// {kind} is one {kind.lower()} as the API returns it.\ntype {kind} struct {{\n\tID string `json:\"id\"`\n{body}\n"
            f"\tCreatedAt time.Time `json:\"created_at\"`\n}}\n\nvar Err{kind}NotFound = errors.New(\"{kind.lower()} not found\")\n\n"
            f"// Store reads and writes {kind.lower()}s.\ntype Store interface {{\n\tGet(ctx context.Context, id string) (*{kind}, error)\n"
            f"\tList(ctx context.Context, limit int) ([]{kind}, error)\n\tPut(ctx context.Context, v *{kind}) error\n}}\n\n"
            f"// Service holds the business rules around a Store.\ntype Service struct {{\n\tstore   Store\n\ttimeout time.Duration\n}}\n\n"
            f"func NewService(s Store) *Service {{\n\treturn &Service{{store: s, timeout: 5 * time.Second}}\n}}\n\n"
            f"func (s *Service) Get(ctx context.Context, id string) (*{kind}, error) {{\n\tctx, cancel := context.WithTimeout(ctx, s.timeout)\n"
            f"\tdefer cancel()\n\tv, err := s.store.Get(ctx, id)\n\tif err != nil {{\n\t\treturn nil, err\n\t}}\n\treturn v, nil\n}}\n\n"
            f"func (s *Service) List(ctx context.Context, limit int) ([]{kind}, error) {{\n\tif limit <= 0 {{\n\t\tlimit = 50\n\t}}\n"
            f"\treturn s.store.List(ctx, limit)\n}}\n")


def _ts(name: str, props: list[str]) -> str:
    fields = "\n".join(f"  {p}: string;" for p in props)
    cells = "\n".join(f"          <td>{{row.{p}}}</td>" for p in props)
    return (f"import {{ useEffect, useState }} from \"react\";\nimport {{ api }} from \"../lib/api\";\n\n"
            f"export interface {name}Row {{\n  id: string;\n{fields}\n}}\n\n"
            f"export function {name}Table({{ query }}: {{ query: string }}) {{\n  const [rows, setRows] = useState<{name}Row[]>([]);\n"
            f"  const [error, setError] = useState<string | null>(null);\n\n  useEffect(() => {{\n"
            f"    api.get<{name}Row[]>(`/{name.lower()}s?q=${{encodeURIComponent(query)}}`)\n      .then(setRows)\n"
            f"      .catch((e: Error) => setError(e.message));\n  }}, [query]);\n\n  if (error) return <p role=\"alert\">{{error}}</p>;\n"
            f"  return (\n    <table>\n      <tbody>\n        {{rows.map((row) => (\n          <tr key={{row.id}}>\n{cells}\n"
            f"          </tr>\n        ))}}\n      </tbody>\n    </table>\n  );\n}}\n")


def _py(module: str, thing: str, steps: list[str]) -> str:
    calls = "\n".join(f"    rows = {s}(rows)" for s in steps)
    defs = "\n\n\n".join(f"def {s}(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:\n    \"\"\"{s.replace('_', ' ').capitalize()}.\"\"\"\n"
                         f"    out = []\n    for row in rows:\n        if row.get(\"{thing}_id\") is None:\n            continue\n"
                         f"        out.append(row)\n    return out" for s in steps)
    return (f"\"\"\"{module.replace('_', ' ').capitalize()}: the {thing} stage of the nightly pipeline.\"\"\"\n\n"
            f"from __future__ import annotations\n\nimport logging\nfrom typing import Any\n\nlog = logging.getLogger(__name__)\n"
            f"BATCH_SIZE = 500\n\n\n{defs}\n\n\ndef run(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:\n"
            f"    log.info(\"{module}: %d rows in\", len(rows))\n{calls}\n    log.info(\"{module}: %d rows out\", len(rows))\n    return rows\n")


def _md(title: str, sections: list[str]) -> str:
    return f"# {title}\n\n" + "\n".join(f"## {s}\n\nThis section explains {s.lower()} for {title}.\nKeep it short and link to the code.\n"
                                          for s in sections)


#: repo name -> (language, description, {path: content})
REPOS: list[tuple[str, str, str, dict[str, str]]] = [
    ("ledger-api", "go", "Billing ledger service: invoices, payments and refunds over HTTP", {
        "cmd/ledger/main.go": "package main\n\nimport (\n\t\"log\"\n\t\"net/http\"\n\n\t\"lattice/ledger-api/internal/invoice\"\n)\n\n"
                              "func main() {\n\tsvc := invoice.NewService(invoice.NewMemoryStore())\n\tmux := http.NewServeMux()\n"
                              "\tmux.Handle(\"/invoices/\", invoice.Handler(svc))\n\tlog.Println(\"listening on :8080\")\n"
                              "\tlog.Fatal(http.ListenAndServe(\":8080\", mux))\n}\n",
        "internal/invoice/invoice.go": _go("invoice", "Invoice", ["customer", "currency", "status"]),
        "internal/payment/payment.go": _go("payment", "Payment", ["invoice_id", "method", "reference"]),
        "internal/refund/refund.go": _go("refund", "Refund", ["payment_id", "reason"]),
        "go.mod": "module lattice/ledger-api\n\ngo 1.22\n\nrequire (\n\tgithub.com/google/uuid v1.6.0\n\tgithub.com/jackc/pgx/v5 v5.5.4\n)\n",
        "README.md": _md("ledger-api", ["Running locally", "Invoices", "Refunds"]),
    }),
    ("web-console", "ts", "The customer console: a React app over the public API", {
        "src/pages/Invoices.tsx": _ts("Invoice", ["customer", "total", "status"]),
        "src/pages/Users.tsx": _ts("User", ["name", "email", "role"]),
        "src/pages/AuditLog.tsx": _ts("Event", ["actor", "action", "at"]),
        "src/lib/api.ts": "export class ApiError extends Error {\n  constructor(public status: number, message: string) {\n"
                          "    super(message);\n  }\n}\n\nasync function request<T>(path: string, init?: RequestInit): Promise<T> {\n"
                          "  const res = await fetch(`/api${path}`, { credentials: \"include\", ...init });\n"
                          "  if (!res.ok) throw new ApiError(res.status, await res.text());\n  return (await res.json()) as T;\n}\n\n"
                          "export const api = {\n  get: <T>(path: string) => request<T>(path),\n"
                          "  post: <T>(path: string, body: unknown) =>\n    request<T>(path, { method: \"POST\", body: JSON.stringify(body) }),\n};\n",
        "package.json": "{\n  \"name\": \"web-console\",\n  \"private\": true,\n  \"scripts\": {\n    \"dev\": \"vite\",\n"
                        "    \"build\": \"tsc && vite build\",\n    \"test\": \"vitest run\"\n  },\n  \"dependencies\": {\n"
                        "    \"react\": \"^18.2.0\",\n    \"react-dom\": \"^18.2.0\"\n  }\n}\n",
        "README.md": _md("web-console", ["Development", "Testing", "Releases"]),
    }),
    ("pipeline", "py", "Nightly ETL: ingest, clean, enrich and publish the warehouse tables", {
        "pipeline/ingest.py": _py("ingest", "source", ["drop_empty", "parse_dates"]),
        "pipeline/clean.py": _py("clean", "customer", ["dedupe", "normalise_country"]),
        "pipeline/enrich.py": _py("enrich", "order", ["attach_fx_rates", "tag_segments"]),
        "pipeline/publish.py": _py("publish", "table", ["partition_by_day", "write_parquet"]),
        "pyproject.toml": "[project]\nname = \"pipeline\"\nversion = \"2.4.1\"\nrequires-python = \">=3.11\"\n"
                          "dependencies = [\"pyarrow>=15\", \"pandas>=2.2\"]\n",
        "README.md": _md("pipeline", ["Stages", "Backfills", "On call"]),
    }),
    ("authd", "go", "Authentication daemon: sessions, tokens and SSO", {
        "internal/session/session.go": _go("session", "Session", ["user_id", "ip", "user_agent"]),
        "internal/token/token.go": _go("token", "Token", ["subject", "scope", "issuer"]),
        "internal/sso/saml.go": _go("sso", "Assertion", ["issuer", "name_id", "audience"]),
        "go.mod": "module lattice/authd\n\ngo 1.22\n\nrequire github.com/golang-jwt/jwt/v5 v5.2.1\n",
        "README.md": _md("authd", ["Sessions", "Token rotation", "SSO setup"]),
    }),
    ("sdk-python", "py", "The Python client for the public API", {
        "lattice_sdk/client.py": _py("client", "request", ["sign_request", "retry_transient"]),
        "lattice_sdk/pagination.py": _py("pagination", "page", ["follow_cursor", "collect_pages"]),
        "lattice_sdk/models.py": _py("models", "invoice", ["from_json", "validate_amounts"]),
        "pyproject.toml": "[project]\nname = \"lattice-sdk\"\nversion = \"1.9.0\"\nrequires-python = \">=3.9\"\n"
                          "dependencies = [\"httpx>=0.27\"]\n",
        "README.md": _md("lattice-sdk", ["Install", "Authentication", "Pagination"]),
    }),
    ("ui-kit", "ts", "Shared React components and design tokens", {
        "src/Button.tsx": _ts("Button", ["label", "variant"]),
        "src/DataGrid.tsx": _ts("Grid", ["column", "value"]),
        "src/DatePicker.tsx": _ts("Date", ["day", "month"]),
        "src/tokens.ts": "export const tokens = {\n  radius: \"6px\",\n  gap: \"12px\",\n  font: \"Inter, sans-serif\",\n};\n",
        "README.md": _md("ui-kit", ["Components", "Theming", "Contributing"]),
    }),
    ("infra-scripts", "py", "Operations scripts: backups, rotation, cost reports", {
        "scripts/backup.py": _py("backup", "snapshot", ["select_volumes", "prune_old"]),
        "scripts/rotate_keys.py": _py("rotate_keys", "key", ["find_expiring", "issue_new"]),
        "scripts/cost_report.py": _py("cost_report", "account", ["group_by_team", "convert_currency"]),
        "README.md": _md("infra-scripts", ["Backups", "Key rotation", "Cost reports"]),
    }),
    ("handbook", "md", "The engineering handbook: on-call, reviews, releases", {
        "oncall.md": _md("On-call", ["Rotation", "Paging", "Handover"]),
        "code-review.md": _md("Code review", ["What to look for", "Response times", "Approvals"]),
        "releases.md": _md("Releases", ["Versioning", "Changelog", "Rollbacks"]),
        "security.md": _md("Security", ["Secrets", "Dependencies", "Incidents"]),
    }),
]

#: language -> (title template, lines to insert): a change a PR makes to one file
CHANGES: dict[str, list[tuple[str, list[str]]]] = {
    "go": [("Add a request timeout to {mod}", ["\tif s.timeout == 0 {", "\t\ts.timeout = 10 * time.Second", "\t}"]),
           ("Return ErrNotFound from {mod} lookups", ["\tif v == nil {", "\t\treturn nil, errors.New(\"not found\")", "\t}"]),
           ("Cap list size in {mod}", ["\tif limit > 500 {", "\t\tlimit = 500", "\t}"]),
           ("Log slow {mod} queries", ["\tstart := time.Now()", "\tdefer func() { logSlow(\"get\", time.Since(start)) }()"]),
           ("Propagate context cancellation in {mod}", ["\tif err := ctx.Err(); err != nil {", "\t\treturn nil, err", "\t}"])],
    "ts": [("Show a spinner while {mod} loads", ["  const [loading, setLoading] = useState(true);", "  if (loading) return <Spinner />;"]),
           ("Debounce the {mod} search", ["  const debounced = useDebounce(query, 300);"]),
           ("Handle empty results in {mod}", ["  if (rows.length === 0) return <EmptyState />;"]),
           ("Add aria labels to {mod}", ["    <table aria-label=\"Results\">"]),
           ("Retry failed fetches in {mod}", ["      .catch(() => retry(3))", "      .finally(() => setLoading(false))"])],
    "py": [("Skip rows without ids in {mod}", ["        if not row:", "            continue"]),
           ("Batch writes in {mod}", ["    for start in range(0, len(rows), BATCH_SIZE):", "        yield rows[start:start + BATCH_SIZE]"]),
           ("Log dropped rows in {mod}", ["            log.warning(\"dropped row %r\", row)"]),
           ("Type the {mod} helpers", ["Row = dict[str, Any]"]),
           ("Retry transient errors in {mod}", ["        for attempt in range(3):", "            log.debug(\"attempt %d\", attempt)"])],
    "md": [("Clarify {mod}", ["Ask in #eng-help if anything here is unclear."]),
           ("Fix broken links in {mod}", ["See also: [the runbook](./runbook.md)."]),
           ("Document the new approval rule in {mod}", ["Two approvals are needed for changes to security code."])],
}
BRANCH_WORDS = ["fix", "feat", "chore", "perf", "docs"]

COMMENTS = [
    "Nit: could this be a named constant?", "Should we log the error here instead of swallowing it?",
    "What happens when the input is empty?", "Can we add a test for the timeout path?", "LGTM once CI is green.",
    "This reads much better, thanks.", "I'd rather keep this behind a flag for one release.",
    "Is this covered by the integration suite?", "Small thing: the name is a bit vague.",
    "We had the same bug in authd last year, good catch.", "Could you split the refactor from the fix?",
    "Does this change the public API?", "Please rebase on main, there is a conflict in go.mod.",
    "Why 500 and not the page size from the config?", "Let's not retry on 4xx responses.",
    "This needs a changelog entry.", "Could this leak the token into the logs?", "+1 to the approach.",
    "Benchmarks before and after would help here.", "I think the off-by-one is still there on the last page.",
]
REPLIES = ["Done, thanks!", "Good point, fixed in the latest push.", "I'd prefer to leave it for a follow-up.",
           "Agreed, added a test.", "Renamed.", "It does not: the interface is unchanged.", "Yes, see the test in the same PR."]
SUMMARIES = {"approve": ["Looks good to me.", "Ship it.", "Nice cleanup.", "Approved, thanks for the tests."],
             "changes": ["A couple of blocking issues, see the comments.", "Needs a test for the error path.",
                         "This breaks the public API; please keep the old name."],
             "comment": ["Left a few questions.", "Mostly nits.", "Not blocking, just thoughts."]}
ISSUE_TITLES = [
    "Login loop when the SSO session expires", "Export to CSV drops the last row", "Dark mode: table borders invisible",
    "Pagination cursor ignored after the second page", "Backups fail silently when the bucket is full",
    "Document the release checklist", "Invoice totals round differently from the PDF", "Flaky test: TestRefundTimeout",
    "Slow audit log page for large tenants", "Support SAML metadata refresh", "Typo in the on-call handover guide",
    "Key rotation script leaves old keys active", "DatePicker loses focus on month change", "Rate limit the token endpoint",
    "Nightly pipeline misses late-arriving orders", "Cost report double counts shared accounts", "Add retries to the SDK",
    "Button variants missing in the docs", "Upgrade pgx to v5.5", "Users page crashes with an empty role",
]


def _kind(path: str) -> str:
    """The language of a file a change can touch ("" for a manifest no PR here edits)."""
    ext = path.rsplit(".", 1)[-1]
    return {"go": "go", "ts": "ts", "tsx": "ts", "py": "py", "md": "md"}.get(ext, "")


def _when(rng: random.Random, now: dt.datetime, lo_days: int, hi_days: int) -> dt.datetime:
    return now - dt.timedelta(days=rng.uniform(lo_days, hi_days), minutes=rng.randrange(0, 600))


def _stamp(t: dt.datetime) -> str:
    return t.strftime("%Y-%m-%d %H:%M")


def _patch(old: str, new: str, path: str) -> str:
    lines = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{path}", f"b/{path}", n=3, lineterm=""))
    return "\n".join(lines[2:])  # the hunks, without the ---/+++ header


def seed_review(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    for i, (name, login, locale, location) in enumerate(PEOPLE, 1):
        db.execute("INSERT INTO people (id, login, name, locale, location, email) VALUES (?,?,?,?,?,?)",
                   (i, login, name, locale, location, f"{login.replace('-', '.')}@lattice.dev"))
    for name, desc, tone in LABELS:
        db.execute("INSERT INTO labels (name, description, tone) VALUES (?,?,?)", (name, desc, tone))
    n_people = len(PEOPLE)
    repo_files: dict[int, list[tuple[str, str]]] = {}
    for rid, (name, lang, desc, files) in enumerate(REPOS, 1):
        db.execute("INSERT INTO repos (id, owner, name, language, description, default_branch, stars) VALUES (?,?,?,?,?,?,?)",
                   (rid, ORG, name, lang, desc, "main", int(20 + 2000 * rng.random() ** 3)))
        for path, content in sorted(files.items()):
            db.execute("INSERT INTO files (repo_id, path, content) VALUES (?,?,?)", (rid, path, content))
        repo_files[rid] = sorted(files.items())
    statuses = ["open"] * 26 + ["draft"] * 6 + ["merged"] * 20 + ["closed"] * 8
    rng.shuffle(statuses)
    numbers = {rid: rng.randrange(40, 400) for rid in repo_files}
    label_ids = list(range(1, len(LABELS) + 1))
    for pid, status in enumerate(statuses, 1):
        rid = rng.choices(list(repo_files), weights=[5, 4, 4, 3, 3, 2, 2, 1])[0]
        lang = REPOS[rid - 1][1]
        numbers[rid] += rng.randrange(1, 6)
        author = rng.randrange(1, n_people + 1) if rng.random() > 0.15 else 1
        created = _when(rng, now, 1, 120 if status in ("merged", "closed") else 40)
        touched = rng.sample(repo_files[rid], min(len(repo_files[rid]), rng.choice([1, 1, 2, 2, 3])))
        touched = [t for t in touched if _kind(t[0])] or [next(t for t in repo_files[rid] if _kind(t[0]))]
        touched.sort(key=lambda t: (t[0].endswith(".md") and lang != "md", t[0]))  # the code first: it names the PR
        change_title, _ = rng.choice(CHANGES[_kind(touched[0][0])])
        mod = touched[0][0].rsplit("/", 1)[-1].split(".")[0].replace("_", " ")
        title = change_title.format(mod=mod)
        branch = f"{rng.choice(BRANCH_WORDS)}/{mod.replace(' ', '-').lower()}-{pid}"
        body = (f"{title}.\n\nTouches {', '.join(p for p, _ in touched)}. "
                + rng.choice(["Tested locally against staging.", "Covered by the new unit test.", "No behaviour change for existing callers.",
                              "Follow-up to the incident review.", "Part of the Q1 reliability work."]))
        merged_at = closed_at = None
        merged_by = None
        strategy = ""
        updated = created + dt.timedelta(hours=rng.uniform(1, 200))
        updated = min(updated, now - dt.timedelta(hours=1))
        if status == "merged":
            merged_at, merged_by, strategy = _stamp(updated), rng.choice([1, 2, 5, 7]), rng.choice(["merge", "squash", "squash"])
        elif status == "closed":
            closed_at = _stamp(updated)
        db.execute("INSERT INTO pulls (id, repo_id, number, title, body, author_id, base, head, status, created_at, updated_at, "
                   "merged_at, merged_by, merge_strategy, merge_sha, closed_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (pid, rid, numbers[rid], title, body, author, "main", branch, status, _stamp(created), _stamp(updated),
                    merged_at, merged_by, strategy, f"{rng.getrandbits(40):010x}" if merged_at else "", closed_at))
        for path, content in touched:
            _, added = rng.choice(CHANGES[_kind(path)])
            old = content.splitlines()
            at = rng.randrange(3, max(4, len(old) - 2))
            drop = rng.choice([0, 0, 1])
            new = old[:at] + added + old[at + drop:]
            patch = _patch(content, "\n".join(new) + "\n", path)
            db.execute("INSERT INTO pull_files (pull_id, path, additions, deletions, patch) VALUES (?,?,?,?,?)",
                       (pid, path, len(added), drop, patch))
            for line in diff_lines(patch):  # the diff line by line, for a query (which line says what)
                if line.kind != "hunk":
                    db.execute("INSERT INTO pull_lines (pull_id, path, kind, old_line, new_line, text) VALUES (?,?,?,?,?,?)",
                               (pid, path, line.kind, line.old, line.new, line.text))
        for lid in rng.sample(label_ids, rng.choice([0, 1, 1, 2, 3])):
            db.execute("INSERT INTO pull_labels (pull_id, label_id) VALUES (?,?)", (pid, lid))
        others = [p for p in range(1, n_people + 1) if p != author]
        reviewers = rng.sample(others, rng.choice([1, 2, 2, 3]))
        if author != 1 and status == "open" and rng.random() < 0.45 and 1 not in reviewers:
            reviewers[0] = 1
        for r in reviewers:
            db.execute("INSERT INTO pull_reviewers (pull_id, person_id) VALUES (?,?)", (pid, r))
        if rng.random() < 0.5:
            db.execute("INSERT INTO pull_assignees (pull_id, person_id) VALUES (?,?)", (pid, author))
        for check in CHECKS[lang]:
            roll = rng.random()
            result = ("pass" if status != "open" and status != "draft" or roll < 0.72 else "fail" if roll < 0.88 else "pending")
            if status == "merged":
                result = "pass"
            db.execute("INSERT INTO checks (pull_id, name, status, summary) VALUES (?,?,?,?)",
                       (pid, check, result, {"pass": "Successful", "fail": "Failing after 2m", "pending": "In progress"}[result]))
        # reviews and their threads: a long tail (most PRs get few comments, a few get many)
        n_threads = min(9, int(rng.paretovariate(1.6)) - 1) if status != "draft" else 0
        t = created
        spots = _commentable(db, pid)
        for _ in range(n_threads):
            path, spot = rng.choice(spots)
            who = rng.choice([r for r in reviewers if r != 1] or others)
            t = min(t + dt.timedelta(minutes=rng.randrange(20, 900)), now - dt.timedelta(minutes=30))
            resolved = rng.random() < (0.3 if status == "open" else 0.85)
            tid = db.insert("INSERT INTO threads (pull_id, path, line, resolved, resolved_by, created_at) VALUES (?,?,?,?,?,?)",
                            (pid, path, spot, int(resolved), author if resolved else None, _stamp(t)))
            db.execute("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,?,?,?,?)",
                       (pid, tid, who, rng.choice(COMMENTS), _stamp(t)))
            for _ in range(rng.choice([0, 0, 1, 1, 2])):
                t = min(t + dt.timedelta(minutes=rng.randrange(5, 300)), now - dt.timedelta(minutes=20))
                db.execute("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,?,?,?,?)",
                           (pid, tid, rng.choice([author, who]), rng.choice(REPLIES), _stamp(t)))
        for _ in range(rng.choice([0, 0, 1, 1, 2, 4])):
            t = min(t + dt.timedelta(minutes=rng.randrange(20, 900)), now - dt.timedelta(minutes=30))
            db.execute("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,NULL,?,?,?)",
                       (pid, rng.choice([author, *reviewers]), rng.choice(COMMENTS), _stamp(t)))
        if status != "draft":
            for r in reviewers:
                if r == 1 and status == "open":
                    continue  # the reviews asked of me are still to do
                roll = rng.random()
                verdict = "approve" if status == "merged" or roll < 0.5 else "changes" if roll < 0.7 else "comment" if roll < 0.85 else ""
                if not verdict:
                    continue
                t = min(t + dt.timedelta(minutes=rng.randrange(30, 600)), now - dt.timedelta(minutes=10))
                db.execute("INSERT INTO reviews (pull_id, author_id, verdict, body, submitted_at, dismissed) VALUES (?,?,?,?,?,0)",
                           (pid, r, verdict, rng.choice(SUMMARIES[verdict]), _stamp(t)))
    _keep_open_threads(db, rng, now)
    # issues: a few per repo, with labels
    for k in range(34):
        rid = rng.randrange(1, len(REPOS) + 1)
        numbers[rid] += rng.randrange(1, 4)
        title = ISSUE_TITLES[k % len(ISSUE_TITLES)] + ("" if k < len(ISSUE_TITLES) else f" ({REPOS[rid - 1][0]})")
        status = "open" if rng.random() < 0.65 else "closed"
        iid = db.insert("INSERT INTO issues (repo_id, number, title, body, author_id, status, created_at) VALUES (?,?,?,?,?,?,?)",
                        (rid, numbers[rid], title, f"Steps to reproduce and expected behaviour for: {title.lower()}.",
                         rng.randrange(1, n_people + 1), status, _stamp(_when(rng, now, 1, 150))))
        for lid in rng.sample(label_ids, rng.choice([0, 1, 1, 2])):
            db.execute("INSERT INTO issue_labels (issue_id, label_id) VALUES (?,?)", (iid, lid))
    # my notifications: review requests, mentions, CI on my PRs
    asked = db.all("SELECT p.id, p.title, p.created_at FROM pulls p JOIN pull_reviewers r ON r.pull_id = p.id "
                   "WHERE r.person_id = 1 AND p.status = 'open' ORDER BY p.id")
    for p in asked:
        db.execute("INSERT INTO notifications (pull_id, kind, text, at, read) VALUES (?,?,?,?,?)",
                   (p["id"], "review_requested", f"Your review was requested on “{p['title']}”", p["created_at"], int(rng.random() < 0.3)))
    for p in db.all("SELECT id, title, updated_at FROM pulls WHERE author_id = 1 ORDER BY id"):
        db.execute("INSERT INTO notifications (pull_id, kind, text, at, read) VALUES (?,?,?,?,?)",
                   (p["id"], "activity", f"New activity on your pull request “{p['title']}”", p["updated_at"], int(rng.random() < 0.5)))


def _keep_open_threads(db: AppDB, rng: random.Random, now: dt.datetime) -> None:
    """At least three unresolved conversations on open pull requests, whatever the draw:
    a reviewer's queue always has something to resolve."""
    open_threads = db.all("SELECT t.id, t.resolved FROM threads t JOIN pulls p ON p.id = t.pull_id WHERE p.status = 'open' ORDER BY t.id")
    if sum(1 for t in open_threads if not t["resolved"]) >= 3:
        return
    for t in open_threads[:3]:
        db.execute("UPDATE threads SET resolved = 0, resolved_by = NULL WHERE id = ?", (t["id"],))
    pulls = db.all("SELECT id, author_id FROM pulls WHERE status = 'open' ORDER BY id")
    for k in range(3 - len(open_threads[:3])):
        p = pulls[k % len(pulls)]
        path, line = rng.choice(_commentable(db, p["id"]))
        who = db.scalar("SELECT person_id FROM pull_reviewers WHERE pull_id = ? AND person_id != 1 ORDER BY id", (p["id"],)) or (
            2 if p["author_id"] != 2 else 3)
        at = _stamp(now - dt.timedelta(hours=5 + k))
        tid = db.insert("INSERT INTO threads (pull_id, path, line, resolved, resolved_by, created_at) VALUES (?,?,?,0,NULL,?)",
                        (p["id"], path, line, at))
        db.execute("INSERT INTO comments (pull_id, thread_id, author_id, body, created_at) VALUES (?,?,?,?,?)",
                   (p["id"], tid, who, rng.choice(COMMENTS), at))


def _commentable(db: AppDB, pid: int) -> list[tuple[str, int]]:
    """(path, new-side line number) of every added or context line of pull `pid`'s diff."""
    out: list[tuple[str, int]] = []
    for f in db.all("SELECT path, patch FROM pull_files WHERE pull_id = ? ORDER BY id", (pid,)):
        out += [(f["path"], line.new) for line in diff_lines(f["patch"]) if line.new is not None]
    return out


class DiffLine:
    """One line of a unified diff, with its line numbers on the old and new side (None where absent)."""

    __slots__ = ("kind", "old", "new", "text")

    def __init__(self, kind: str, old: int | None, new: int | None, text: str) -> None:
        self.kind, self.old, self.new, self.text = kind, old, new, text


def diff_lines(patch: str) -> list[DiffLine]:
    """A patch's hunks as lines: kind is `hunk` (its header), `add`, `del` or `ctx`."""
    out: list[DiffLine] = []
    old = new = 0
    for raw in patch.splitlines():
        if raw.startswith("@@"):
            head = raw.split("@@")[1].split()
            old = int(head[0][1:].split(",")[0])
            new = int(head[1][1:].split(",")[0])
            out.append(DiffLine("hunk", None, None, raw))
        elif raw.startswith("+"):
            out.append(DiffLine("add", None, new, raw[1:]))
            new += 1
        elif raw.startswith("-"):
            out.append(DiffLine("del", old, None, raw[1:]))
            old += 1
        else:
            out.append(DiffLine("ctx", old, new, raw[1:]))
            old += 1
            new += 1
    return out

