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

#: Reads sheet 1 of an .xlsx with the standard library only (the guest has no openpyxl).
#: `reader FILE` (or `reader FILE cells`): one line per cell, "REF<TAB>f=FORMULA<TAB>v=VALUE",
#: formulas as written, values as the saving app computed them; a text cell that reads as a
#: number (a number entered as text, '5) has its value marked with a leading "'", as Calc
#: shows it, so a judge tells it from the number 5. `formats`: one line per
#: filled cell whose number format is not General or whose font is bold,
#: "REF<TAB>num=FORMAT CODE<TAB>bold=0|1". `filter`: "FILTER<TAB>RANGE" per AutoFilter.
#: `charts`: one line per chart series, "CHART<TAB>TYPE[:BAR DIRECTION]<TAB>cat=REF<TAB>val=REF".
READER = r"""
import re, sys, zipfile, xml.etree.ElementTree as ET
M = '{http://schemas.openxmlformats.org/spreadsheetml/2006/main}'
C = '{http://schemas.openxmlformats.org/drawingml/2006/chart}'
z = zipfile.ZipFile(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else 'cells'
names = z.namelist()
sheet = ET.fromstring(z.read('xl/worksheets/sheet1.xml'))
if mode == 'cells':
    shared = []
    if 'xl/sharedStrings.xml' in names:
        for si in ET.fromstring(z.read('xl/sharedStrings.xml')).iter(M + 'si'):
            shared.append(''.join(t.text or '' for t in si.iter(M + 't')))
    for c in sheet.iter(M + 'c'):
        f, v = c.find(M + 'f'), c.find(M + 'v')
        val = v.text if v is not None and v.text is not None else ''
        if c.get('t') == 's' and val:
            val = shared[int(val)]
        elif c.get('t') == 'inlineStr':
            val = ''.join(t.text or '' for t in c.iter(M + 't'))
        if c.get('t') in ('s', 'inlineStr', 'str'):
            if re.fullmatch(r"\s*[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?\s*%?\s*", val):
                val = "'" + val
        elif val.endswith('.0'):
            val = val[:-2]
        if val or f is not None:
            print(c.get('r'), 'f=' + (f.text or '' if f is not None else ''), 'v=' + val, sep='\t')
elif mode == 'formats':
    styles = ET.fromstring(z.read('xl/styles.xml'))
    codes = {'0': 'General', '1': '0', '2': '0.00', '3': '#,##0', '4': '#,##0.00', '9': '0%', '10': '0.00%'}
    for n in styles.iter(M + 'numFmt'):
        codes[n.get('numFmtId')] = n.get('formatCode')
    def bold(font):
        b = font.find(M + 'b')
        return b is not None and b.get('val', 'true') not in ('false', '0')
    fonts = [bold(f) for f in styles.find(M + 'fonts')]
    xfs = list(styles.find(M + 'cellXfs'))
    for c in sheet.iter(M + 'c'):
        if all(c.find(M + tag) is None for tag in ('v', 'f', 'is')):
            continue
        xf = xfs[int(c.get('s', '0'))]
        code = codes.get(xf.get('numFmtId', '0'), 'id' + xf.get('numFmtId', '0'))
        heavy = fonts[int(xf.get('fontId', '0'))]
        if code != 'General' or heavy:
            print(c.get('r'), 'num=' + code, 'bold=' + str(int(heavy)), sep='\t')
elif mode == 'filter':
    for a in sheet.iter(M + 'autoFilter'):
        print('FILTER', a.get('ref'), sep='\t')
elif mode == 'charts':
    for name in sorted(n for n in names if n.startswith('xl/charts/chart') and n.endswith('.xml')):
        plot = ET.fromstring(z.read(name)).find(C + 'chart/' + C + 'plotArea')
        for kind in (plot if plot is not None else []):
            if not kind.tag.endswith('Chart'):
                continue
            tag = kind.tag.split('}')[1]
            way = kind.find(C + 'barDir')
            if way is not None:
                tag += ':' + way.get('val')
            for ser in kind.iter(C + 'ser'):
                refs = {}
                for part in ('cat', 'val'):
                    node = ser.find(C + part)
                    refs[part] = ''.join(f.text or '' for f in node.iter(C + 'f')) if node is not None else ''
                print('CHART', tag, 'cat=' + refs['cat'], 'val=' + refs['val'], sep='\t')
else:
    sys.exit('unknown mode ' + mode)
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
            "tax_cells": {f"C{r}": {"formula": f"B{r}*{rate}"} for r in range(2, n + 1)},
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
import re, sys, zipfile, xml.etree.ElementTree as ET
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


# --- Calc: sorting, charts, number formats, filters, absolute references ---

def _prefix_re(x: float) -> str:
    """A regex for a computed number as Calc saves it (15 significant digits): its first
    six decimals, truncated, then any digits. The saved text's prefix is checked, not a
    rounding of it, so the judge never depends on how the last digit was rounded."""
    text = f"{x:.15g}"
    if "." not in text:
        return text
    whole, frac = text.split(".")
    return f"{whole}\\.{frac[:6]}\\d*"


def calc_sort_by_cost(_: Any, rng: random.Random) -> dict[str, Any]:
    """Sort the rows by cost; the near miss sorts them by item name (each row kept whole)."""
    while True:
        params = calc_sort(_, rng)
        if params["by_name_dump"] != params["expected_dump"]:
            return {**params, "entries": [], "cost_cell": [1, 1], "name_cell": [1, 0]}


#: Chart types the wizard lists, in its order (rows down from the default, Column), and
#: the plot element Calc writes for each to .xlsx.
CHART_TYPES = {"bar": (1, "barChart:bar"), "pie": (2, "pieChart"), "area": (3, "areaChart"), "line": (4, "lineChart")}


def calc_chart(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    kind = rng.choice(sorted(CHART_TYPES))
    down, tag = CHART_TYPES[kind]
    return {**_common(rows), "chart": kind, "chart_down": down, "near_chart_down": 0,
            "chart_line": f"CHART\t{tag}\tcat=Budget!$A$2:$A${n}\tval=Budget!$B$2:$B${n}\n"}


def calc_currency(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    # a dollar format code on every cost (the header may share it: a whole-column selection)
    cost = "\tnum=[^\\t\\n]*\\[\\$\\$-409\\][^\\t\\n]*\tbold=0\n"
    return {**_common(rows), "formats_re": "\\A(B1" + cost + ")?" + "".join(f"B{r}{cost}" for r in range(2, n + 1))
            + "\\Z", "select": [1, 1, n - 2, 0], "near_select": [1, 1, n - 3, 0], "format": "currency"}


def calc_bold_header(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    return {**_common(rows), "formats": "A1\tnum=General\tbold=1\nB1\tnum=General\tbold=1\n",
            "select": [0, 0, 0, 1], "near_select": [0, 0, 0, 0], "format": "bold"}


def calc_autofilter(_: Any, rng: random.Random) -> dict[str, Any]:
    rows = _budget(rng)
    n = len(rows)
    # the near miss filters a selection one row short (the last row outside the filter)
    return {**_common(rows), "filter": f"FILTER\tA1:B{n}\n", "select": [0, 0, 0, 0], "near_select": [0, 0, n - 2, 1],
            "format": "filter"}


def calc_share(_: Any, rng: random.Random) -> dict[str, Any]:
    """Each row's share of the total: the formula needs an absolute range, which the near
    miss leaves relative (as filling a formula down without $ would)."""
    rows = _budget(rng)
    n = len(rows)
    costs = [r[1] for r in rows[1:]]
    total = sum(costs)
    entries = [("C1", "Share"), *[(f"C{r}", f"=B{r}/SUM($B$2:$B${n})") for r in range(2, n + 1)]]
    near = [("C1", "Share"), *[(f"C{r}", f"=B{r}/SUM(B{r}:B{n + r - 2})") for r in range(2, n + 1)]]
    lines = [f"C{r}\tf=[^\\t\\n]+\tv={_prefix_re(cost / total)}" for r, cost in zip(range(2, n + 1), costs)]
    return {**_common(rows), "entries": _targets(rows, entries), "near_entries": _targets(rows, near),
            "shares_re": "(?m)^C1\tf=\tv=Share$" + "".join(f"[\\s\\S]*^{line}$" for line in lines)}


# --- Writer: styles, alignment, lists, find and replace ---

#: Reads a .docx's body with the standard library: per paragraph "P<TAB>STYLE<TAB>ALIGN
#: <TAB>MARKS<TAB>LIST<TAB>TEXT" (MARKS: b, i, u for bold, italic, underline on every run
#: with text, "-" for none; LIST: bullet, decimal, ... or "-"), and per table row
#: "T<TAB>CELL|CELL|...". Empty paragraphs are left out.
STYLED_READER = r"""
import re, sys, zipfile, xml.etree.ElementTree as ET
W = '{http://schemas.openxmlformats.org/wordprocessingml/2006/main}'
z = zipfile.ZipFile(sys.argv[1])
body = ET.fromstring(z.read('word/document.xml')).find(W + 'body')
formats = {}
if 'word/numbering.xml' in z.namelist():
    numbering = ET.fromstring(z.read('word/numbering.xml'))
    abstract = {}
    for a in numbering.iter(W + 'abstractNum'):
        lvl = a.find(W + 'lvl')
        fmt = lvl.find(W + 'numFmt') if lvl is not None else None
        abstract[a.get(W + 'abstractNumId')] = fmt.get(W + 'val') if fmt is not None else 'none'
    for num in numbering.iter(W + 'num'):
        ref = num.find(W + 'abstractNumId')
        formats[num.get(W + 'numId')] = abstract.get(ref.get(W + 'val') if ref is not None else '', 'none')
def on(props, tag):
    e = props.find(W + tag) if props is not None else None
    return e is not None and e.get(W + 'val', 'true') not in ('false', '0', 'none')
def text(node):
    return ''.join(t.text or '' for t in node.iter(W + 't'))
def paragraph(p):
    t = text(p)
    if not t:
        return
    ppr = p.find(W + 'pPr')
    style = ppr.find(W + 'pStyle') if ppr is not None else None
    jc = ppr.find(W + 'jc') if ppr is not None else None
    align = jc.get(W + 'val') if jc is not None else 'left'
    align = {'start': 'left', 'end': 'right', 'both': 'justify'}.get(align, align)
    runs = [r for r in p.iter(W + 'r') if text(r)]
    marks = ''.join(m for m, tag in (('b', 'b'), ('i', 'i'), ('u', 'u'))
                    if runs and all(on(r.find(W + 'rPr'), tag) for r in runs)) or '-'
    num = ppr.find(W + 'numPr/' + W + 'numId') if ppr is not None else None
    listed = formats.get(num.get(W + 'val'), 'none') if num is not None and num.get(W + 'val') != '0' else '-'
    print('P', style.get(W + 'val') if style is not None else 'Normal', align, marks, listed, t, sep='\t')
for child in body:
    if child.tag == W + 'p':
        paragraph(child)
    elif child.tag == W + 'tbl':
        for tr in child.iter(W + 'tr'):
            print('T', '|'.join(text(tc) for tc in tr.iter(W + 'tc')), sep='\t')
"""


def _styled(paragraphs: list[tuple[str, str]], heading: int = -1, align: dict[int, str] | None = None,
            listed: dict[int, str] | None = None) -> str:
    """The styled reader's lines for paragraphs of (style-agnostic) text: all Normal, left,
    unmarked and unlisted but where `heading`, `align` or `listed` say otherwise."""
    out = []
    for i, (_, text) in enumerate(paragraphs):
        style = "Heading1" if i == heading else "Normal"
        out.append(f"P\t{style}\t{(align or {}).get(i, 'left')}\t-\t{(listed or {}).get(i, '-')}\t{text}\n")
    return "".join(out)


def _writer_styled(rng: random.Random, steps: str, near_steps: str, **changes: Any) -> dict[str, Any]:
    """The memo, the styled reader, and its expected dump with `changes` (see `_styled`);
    `steps` / `near_steps` name the oracle's and the near miss's keys."""
    params = writer_doc(None, rng)
    paragraphs = [("title", params["title"]), *[("body", s) for s in params["body"]]]
    return {**params, "reader": STYLED_READER, "expected": _styled(paragraphs, **changes), "steps": steps,
            "near_steps": near_steps}


def writer_heading(_: Any, rng: random.Random) -> dict[str, Any]:
    # the near miss makes the title look like a heading (bold) without its style
    return _writer_styled(rng, "heading", "bold_title", heading=0)


def writer_center(_: Any, rng: random.Random) -> dict[str, Any]:
    return _writer_styled(rng, "center", "right", align={0: "center"})


def writer_bullets(_: Any, rng: random.Random) -> dict[str, Any]:
    # the near miss numbers the paragraphs instead
    return _writer_styled(rng, "bullets", "numbers", listed={1: "bullet", 2: "bullet", 3: "bullet"})


WORDS_OLD_NEW = (("meeting", "session"), ("office", "studio"), ("report", "summary"), ("budget", "plan"))


def writer_replace(_: Any, rng: random.Random) -> dict[str, Any]:
    """A word that occurs in several paragraphs (three to five times): replace every one."""
    old, new = rng.choice(WORDS_OLD_NEW)
    templates = (f"The {old} starts at nine.", f"Send the {old} notes to Dana.", f"Nobody liked the last {old}.",
                 f"A short {old} is a good {old}.", f"Rooms for the {old} are booked.")
    chosen = rng.sample(templates, rng.randint(3, 4))
    title = f"Notes on the {old}"
    paragraphs = [title, *chosen]
    after = [p.replace(old, new) for p in paragraphs]
    first_only = [paragraphs[0].replace(old, new, 1), *paragraphs[1:]]
    return {"binary_files": {"memo.docx": _docx(paragraphs)},
            "files": {".config/libreoffice/4/user/registrymodifications.xcu": PROFILE.read_text()},
            "reader": STYLED_READER, "old": old, "new": new, "count": sum(p.count(old) for p in paragraphs),
            "expected": _styled([("", p) for p in after]), "first_only": _styled([("", p) for p in first_only])}


def writer_table(_: Any, rng: random.Random) -> dict[str, Any]:
    """A table of items and costs at the end of the memo. Items are capitalised, as
    Writer's autocorrect would make a cell's first letter; the near miss leaves the last
    row out."""
    params = writer_doc(_, rng)
    paragraphs = [("title", params["title"]), *[("body", s) for s in params["body"]]]
    items = [(item.title(), str(rng.randint(5, 900))) for item in rng.sample(ITEMS, rng.randint(2, 3))]
    rows = [("Item", "Cost"), *items]
    return {**params, "reader": STYLED_READER, "rows": len(rows), "items": items,
            "listing": "; ".join(f"{a} {b}" for a, b in items),
            "expected": _styled(paragraphs) + "".join(f"T\t{a}|{b}\n" for a, b in rows),
            "cells": "\t".join(c for row in rows for c in row), "near_rows": len(rows) - 1,
            "near_cells": "\t".join(c for row in rows[:-1] for c in row)}
