"""Seeded parameters of the office suite: spreadsheets made with openpyxl (sent as the
sandbox's binary files), and what their judges expect."""

from __future__ import annotations

import base64
import io
import random
from pathlib import Path
from typing import Any

ITEMS = ("rent", "power", "water", "phone", "books", "train", "coffee", "paper", "repairs", "insurance", "fees",
         "garden")
#: LibreOffice's profile for a sandbox: no first-start wizard, tips or "keep current format"
#: prompt (the office image ships the same file; the desktop kind gets it as a file).
PROFILE = (Path(__file__).resolve().parents[3] / "vm-images" / "office" / "home" / ".config" / "libreoffice" / "4"
           / "user" / "registrymodifications.xcu")

#: Reads sheet 1 of an .xlsx with the standard library only (the guest has no openpyxl):
#: one line per cell, "REF<TAB>f=FORMULA<TAB>v=VALUE", formulas as written, values as
#: the saving app computed them.
READER = r"""
import sys, zipfile, xml.etree.ElementTree as ET
M = '{http://schemas.openxmlformats.org/spreadsheetml/2006/main}'
z = zipfile.ZipFile(sys.argv[1])
names = z.namelist()
shared = []
if 'xl/sharedStrings.xml' in names:
    for si in ET.fromstring(z.read('xl/sharedStrings.xml')).iter(M + 'si'):
        shared.append(''.join(t.text or '' for t in si.iter(M + 't')))
sheet = ET.fromstring(z.read('xl/worksheets/sheet1.xml'))
for c in sheet.iter(M + 'c'):
    f, v = c.find(M + 'f'), c.find(M + 'v')
    val = v.text if v is not None and v.text is not None else ''
    if c.get('t') == 's' and val:
        val = shared[int(val)]
    elif c.get('t') == 'inlineStr':
        val = ''.join(t.text or '' for t in c.iter(M + 't'))
    if val.endswith('.0'):
        val = val[:-2]
    if val or f is not None:
        print(c.get('r'), 'f=' + (f.text or '' if f is not None else ''), 'v=' + val, sep='\t')
"""


def _xlsx(rows: list[list[Any]]) -> str:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Budget"
    for row in rows:
        sheet.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return base64.b64encode(buf.getvalue()).decode()


def _dump(rows: list[list[Any]]) -> list[str]:
    """The reader's lines for cells holding plain values (row-major, as saved)."""
    out = []
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row):
            if value is not None and value != "":
                out.append(f"{'ABCDEFGH'[c]}{r}\tf=\tv={value}")
    return out


def _budget(rng: random.Random) -> list[list[Any]]:
    n = rng.randint(4, 7)
    items = rng.sample(ITEMS, n)
    return [["Item", "Cost"], *[[item, rng.randint(5, 900)] for item in items]]


def _kept_re(rows: list[list[Any]]) -> str:
    """A regex: every original cell's line, in order, other lines allowed between them."""
    import re

    return "(?m)" + r"[\s\S]*".join(f"^{re.escape(line)}$" for line in _dump(rows))


def _common(rows: list[list[Any]]) -> dict[str, Any]:
    return {"binary_files": {"budget.xlsx": _xlsx(rows)}, "last": len(rows), "kept_re": _kept_re(rows),
            "files": {".config/libreoffice/4/user/registrymodifications.xcu": PROFILE.read_text()},
            "reader": READER}


def calc_total(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    total = sum(r[1] for r in rows[1:])
    # a total typed as a number is the near miss; the formula and its value are the task
    wrong = total + rng.choice((-10, 10, 100))
    return {**_common(rows), "cell": f"B{n + 1}", "label_cell": f"A{n + 1}", "last": n, "total": total,
            "down": n, "formula": f"SUM(B2:B{n})", "near_value": str(wrong),
            "kept": "\n".join(_dump(rows))}


def calc_sort(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    while [r[1] for r in rows[1:]] == sorted(r[1] for r in rows[1:]):
        rows = _budget(rng)
    ordered = [rows[0], *sorted(rows[1:], key=lambda r: r[1])]
    return {**_common(rows), "last": len(rows), "expected_dump": "\n".join(_dump(ordered)),
            "by_name_dump": "\n".join(_dump([rows[0], *sorted(rows[1:], key=lambda r: r[0])]))}


def _targets(rows: list[list[Any]], entries: list[tuple[str, str]]) -> list[tuple[int, int, str]]:
    """(rows down, columns right, text) from A1 for each (cell ref, text)."""
    out = []
    for ref, text in entries:
        col, row = "ABCDEFGH".index(ref[0]), int(ref[1:])
        out.append((row - 1, col, text))
    return out


def calc_average(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    values = [r[1] for r in rows[1:]]
    avg = sum(values) / len(values)
    shown = str(int(avg)) if avg == int(avg) else repr(round(avg, 10)).rstrip("0")
    return {**_common(rows), "cell": f"B{n + 1}", "formula": f"AVERAGE(B2:B{n})", "value_re": _num_re(avg),
            "entries": _targets(rows, [(f"B{n + 1}", f"=AVERAGE(B2:B{n})")]),
            "near_entries": _targets(rows, [(f"B{n + 1}", f"=SUM(B2:B{n})/{len(values) + 1}")]),
            "kept": "\n".join(_dump(rows)), "shown": shown}


def calc_max(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    top = max(r[1] for r in rows[1:])
    return {**_common(rows), "formula": f"MAX(B2:B{n})", "top": top,
            "entries": _targets(rows, [("D1", "Largest"), ("D2", f"=MAX(B2:B{n})")]),
            "near_entries": _targets(rows, [("D1", "Largest"), ("D2", str(top))]),
            "kept": "\n".join(_dump(rows))}


def calc_tax_column(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    rate = rng.choice((1.1, 1.2, 1.25))
    entries = [("C1", "With tax"), *[(f"C{r}", f"=B{r}*{rate}") for r in range(2, n + 1)]]
    lines = [f"C{r}\tf=B{r}\\*{rate}\tv=" for r in range(2, n + 1)]
    return {**_common(rows), "rate": rate, "last": n,
            "entries": _targets(rows, entries), "near_entries": _targets(rows, entries[:-1]),
            "formulas_re": "".join(f"(?m)^{line}" if i == 0 else f"[\\s\\S]*^{line}" for i, line in enumerate(lines)),
            "kept": "\n".join(_dump(rows))}


def _num_re(x: float) -> str:
    """A regex for a number as a spreadsheet saves it (enough digits to be unambiguous)."""
    if x == int(x):
        return str(int(x))
    text = f"{x:.6f}".rstrip("0")
    return text.replace(".", "\\.") + "\\d*"


def calc_total_entries(_: Any, rng: random.Random) -> dict[str, Any]:
    params = calc_total(_, rng)
    n = params["last"]
    params["entries"] = _targets([], [(f"A{n + 1}", "Total"), (f"B{n + 1}", f"=SUM(B2:B{n})")])
    params["near_entries"] = _targets([], [(f"A{n + 1}", "Total"), (f"B{n + 1}", params["near_value"])])
    return params


# --- Writer ---

DOCX_READER = r"""
import sys, zipfile, xml.etree.ElementTree as ET
W = '{http://schemas.openxmlformats.org/wordprocessingml/2006/main}'
body = ET.fromstring(zipfile.ZipFile(sys.argv[1]).read('word/document.xml')).find(W + 'body')
for i, p in enumerate(body.iter(W + 'p')):
    runs = [r for r in p.iter(W + 'r') if ''.join(t.text or '' for t in r.iter(W + 't'))]
    text = ''.join(t.text or '' for t in p.iter(W + 't'))
    def bold(r):
        b = r.find(W + 'rPr/' + W + 'b')
        return b is not None and b.get(W + 'val', 'true') not in ('false', '0')
    if text:
        print('P', 'bold=' + str(int(bool(runs) and all(bold(r) for r in runs))), text, sep='\t')
"""

SENTENCES = ("The meeting moved to Thursday.", "Budgets are due at the end of the month.",
             "Please bring the signed forms.", "The office is closed on Friday.",
             "New badges arrive next week.", "Parking on level two is reserved.")


def _docx(paragraphs: list[str]) -> str:
    import docx

    doc = docx.Document()
    for text in paragraphs:
        doc.add_paragraph(text)
    buf = io.BytesIO()
    doc.save(buf)
    return base64.b64encode(buf.getvalue()).decode()


def writer_doc(_: Any, rng: random.Random) -> dict[str, Any]:
    title = f"Notes for {rng.choice(ITEMS).title()} {rng.randint(2, 28)} {rng.choice(('May', 'June', 'July'))}"
    body = rng.sample(SENTENCES, 3)
    extra = rng.choice([s for s in SENTENCES if s not in body])
    return {"binary_files": {"memo.docx": _docx([title, *body])},
            "files": {".config/libreoffice/4/user/registrymodifications.xcu": PROFILE.read_text()},
            "reader": DOCX_READER, "title": title, "body": body, "extra": extra,
            "body_plain": "\n".join(f"P\tbold=0\t{s}" for s in body)}


def _stat(rng: random.Random, func: str, label: str, pick: Any, near_func: str) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    value = pick([r[1] for r in rows[1:]])
    return {**_common(rows), "func": func, "label": label, "value": value, "formula": f"{func}(B2:B{n})",
            "entries": _targets(rows, [("D1", label), ("D2", f"={func}(B2:B{n})")]),
            "near_entries": _targets(rows, [("D1", label), ("D2", f"={near_func}(B2:B{n})")])}


def calc_min(_: Any, rng: random.Random) -> dict[str, Any]:
    return _stat(rng, "MIN", "Smallest", min, "MAX")


def calc_count(_: Any, rng: random.Random) -> dict[str, Any]:
    # the near miss counts the header too (COUNTA over the whole column block)
    params = _stat(rng, "COUNT", "Entries", len, "COUNTA")
    n = params["last"]
    params["near_entries"] = _targets([], [("D1", "Entries"), ("D2", f"=COUNTA(B1:B{n})")])
    return params


def calc_rename_header(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    header = rng.choice(("Amount", "Price", "Spent", "Total cost"))
    renamed = [[rows[0][0], header], *rows[1:]]
    return {**_common(rows), "header": header, "kept_re": _kept_re(renamed),
            "entries": _targets(rows, [("B1", header)]), "near_entries": _targets(rows, [("A1", header)])}


def writer_retitle(_: Any, rng: random.Random) -> dict[str, Any]:
    params = writer_doc(_, rng)
    params["new_title"] = f"Minutes of {rng.choice(('Monday', 'Tuesday', 'Wednesday'))}"
    return params
