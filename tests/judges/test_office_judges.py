"""The office suite's judges against wrong end states, without an app.

Judge QA (`cua tasks check office`) proves on a real desktop that each template's
initial state fails, its oracle passes and its near miss fails. It has no state probes
for files (they are built from an app's database), so this module plays the attacker:
for each new template it writes the files a careless agent could leave (the right change
on the wrong cell, slide or paragraph; half of it; collateral damage; the wrong format;
nothing saved) with openpyxl, python-docx, python-pptx and Pillow, answers the judge's
own queries by running its readers on them with the system Python (as the guest would),
and asserts that each fails, and that an equivalent right state written by another
program than the oracle's passes.
"""

from __future__ import annotations

import hashlib
import io
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cua.sandboxes.guest.manifest import manifest
from cua.state import CommandQuery, FileQuery, FilesQuery, StateQuery, StateResult
from cua.task import JudgeInput, TaskInstance, query_key
from cua.tasks.registry import get_template

openpyxl = pytest.importorskip("openpyxl")
docx = pytest.importorskip("docx")
pptx = pytest.importorskip("pptx")
PIL_Image = pytest.importorskip("PIL.Image")

#: The guest's Python: the readers must run on the standard library (and Pillow) alone.
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or ""
if not SYSTEM_PYTHON:
    pytest.skip("the judges' readers run on the system python3, which this machine lacks", allow_module_level=True)

SEEDS = (0, 1)


def _answer(query: StateQuery, home: Path) -> StateResult:
    """A query answered as the sandbox would, over files in `home`."""
    if isinstance(query, CommandQuery):
        argv = [SYSTEM_PYTHON if query.argv[0] == "python3" else query.argv[0], *query.argv[1:]]
        done = subprocess.run(argv, cwd=home, capture_output=True, text=True, timeout=60)
        return StateResult(value={"returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr,
                                  "truncated": False})
    if isinstance(query, FileQuery) and query.mode == "sha256":
        path = home / query.path
        if not path.exists():
            return StateResult.failure("not_found", f"{query.path} does not exist")
        return StateResult(value=hashlib.sha256(path.read_bytes()).hexdigest())
    if isinstance(query, FilesQuery):  # the manifest the guest agent reads, over the same folder
        return StateResult(value=manifest(str(home), list(query.roots), hidden=query.hidden,
                                          max_entries=query.max_entries))
    raise AssertionError(f"the office judges ask only commands, checksums and manifests, not {query!r}")


def _passes(instance: TaskInstance, files: dict[str, bytes], tmp_path: Path) -> bool:
    home = tmp_path / f"home-{len(list(tmp_path.iterdir()))}"
    home.mkdir()
    for name, data in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_bytes(data)
    answers = {query_key(q): _answer(q, home) for q in instance.judge.queries()}
    verdict = instance.judge.evaluate(JudgeInput(initial=answers, final=answers))
    return bool(verdict.passed)


def _initial(instance: TaskInstance) -> dict[str, bytes]:
    import base64

    return {name: base64.b64decode(data) for name, data in instance.sandbox_config["binary_files"].items()}


# ------------------------------------------------------------------ Calc


def _book(instance: TaskInstance) -> Any:
    return openpyxl.load_workbook(io.BytesIO(_initial(instance)["budget.xlsx"]))


def _saved(book: Any) -> dict[str, bytes]:
    buf = io.BytesIO()
    book.save(buf)
    return {"budget.xlsx": buf.getvalue()}


def _rows(book: Any) -> list[list[Any]]:
    return [[c.value for c in row] for row in book.active.iter_rows()]


def _rewrite(book: Any, rows: list[list[Any]]) -> Any:
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            book.active.cell(r, c, value)
    return book


def _sorted(instance: TaskInstance, key: Callable[[list[Any]], Any]) -> dict[str, bytes]:
    book = _book(instance)
    rows = _rows(book)
    return _saved(_rewrite(book, [rows[0], *sorted(rows[1:], key=key)]))


def _cost_column_only(instance: TaskInstance) -> dict[str, bytes]:
    """The costs sorted on their own: every item now has another item's cost."""
    book = _book(instance)
    rows = _rows(book)
    costs = sorted(r[1] for r in rows[1:])
    return _saved(_rewrite(book, [rows[0], *[[r[0], c] for r, c in zip(rows[1:], costs)]]))


def test_calc_sort_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_sort_by_cost@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _sorted(task, lambda r: r[1]), tmp_path)  # equivalent: openpyxl's sort
        assert not _passes(task, _sorted(task, lambda r: -r[1]), tmp_path)  # descending
        assert not _passes(task, _sorted(task, lambda r: r[0]), tmp_path)  # by name
        assert not _passes(task, _cost_column_only(task), tmp_path)  # rows broken apart


def _formatted(instance: TaskInstance, cells: list[str], fmt: str | None = None, bold: bool = False) -> dict[str, bytes]:
    from openpyxl.styles import Font

    book = _book(instance)
    for ref in cells:
        if fmt is not None:
            book.active[ref].number_format = fmt
        if bold:
            book.active[ref].font = Font(bold=True)
    return _saved(book)


DOLLARS = "[$$-409]#,##0.00;[RED]\\-[$$-409]#,##0.00"


def test_calc_currency_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_currency@1").instantiate(seed)
        n = task.params["last"]
        costs = [f"B{r}" for r in range(2, n + 1)]
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _formatted(task, costs, DOLLARS), tmp_path)
        assert _passes(task, _formatted(task, ["B1", *costs], DOLLARS), tmp_path)  # the whole column
        assert not _passes(task, _formatted(task, costs[:-1], DOLLARS), tmp_path)  # half done
        assert not _passes(task, _formatted(task, costs, "0.00%"), tmp_path)  # another format
        assert not _passes(task, _formatted(task, costs, "[$€-407]#,##0.00"), tmp_path)  # another currency
        assert not _passes(task, _formatted(task, [f"A{r}" for r in range(2, n + 1)], DOLLARS), tmp_path)  # wrong column
        assert not _passes(task, _formatted(task, [*costs, "A2"], DOLLARS), tmp_path)  # collateral


def test_calc_bold_header_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_bold_header@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _formatted(task, ["A1", "B1"], bold=True), tmp_path)
        assert not _passes(task, _formatted(task, ["A1"], bold=True), tmp_path)
        assert not _passes(task, _formatted(task, ["A1", "B1", "A2", "B2"], bold=True), tmp_path)
        assert not _passes(task, _formatted(task, ["A1", "B1"], fmt="0.00", bold=True), tmp_path)


def _filtered(instance: TaskInstance, ref: str) -> dict[str, bytes]:
    book = _book(instance)
    book.active.auto_filter.ref = ref
    return _saved(book)


def test_calc_autofilter_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_autofilter@1").instantiate(seed)
        n = task.params["last"]
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _filtered(task, f"A1:B{n}"), tmp_path)
        assert not _passes(task, _filtered(task, f"A1:A{n}"), tmp_path)
        assert not _passes(task, _filtered(task, f"A1:B{n - 1}"), tmp_path)


def _charted(instance: TaskInstance, kind: str, last: int) -> dict[str, bytes]:
    from openpyxl.chart import BarChart, LineChart, PieChart, Reference

    book = _book(instance)
    sheet = book.active
    chart = {"pie": PieChart, "line": LineChart}.get(kind, BarChart)()
    if kind == "column":
        chart.type = "col"
    chart.add_data(Reference(sheet, min_col=2, min_row=1, max_row=last), titles_from_data=True)
    chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=last))
    sheet.add_chart(chart, "D2")
    return _saved(book)


def test_calc_chart_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_chart@1").instantiate(seed)
        n = task.params["last"]
        assert not _passes(task, _initial(task), tmp_path)
        wrong = "column" if task.params["chart"] != "column" else "pie"
        assert not _passes(task, _charted(task, wrong, n), tmp_path)  # the wizard's default type
        if task.params["chart"] in ("pie", "line"):  # openpyxl writes the same plot element Calc does
            assert not _passes(task, _charted(task, task.params["chart"], n - 1), tmp_path)  # a row short


def _typed(instance: TaskInstance, entries: list[list[Any]]) -> dict[str, bytes]:
    """Entries written as values (a typed number, not a formula)."""
    book = _book(instance)
    for down, right, text in entries:
        book.active.cell(down + 1, right + 1, text)
    return _saved(book)


def test_calc_share_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.calc_share_column@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        rows = _rows(_book(task))
        total = sum(r[1] for r in rows[1:])
        numbers = [[0, 2, "Share"], *[[r, 2, rows[r][1] / total] for r in range(1, len(rows))]]
        assert not _passes(task, _typed(task, numbers), tmp_path)  # right values, no formulas
        # formulas written by openpyxl carry no computed values: a file never recalculated fails
        assert not _passes(task, _typed(task, task.params["entries"]), tmp_path)


# ------------------------------------------------------------------ Writer


def _memo(paragraphs: list[tuple[str, dict[str, Any]]]) -> dict[str, bytes]:
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    doc = docx.Document()
    for text, how in paragraphs:
        p = doc.add_paragraph(text, style=how.get("style"))
        if how.get("align"):
            p.alignment = {"center": WD_ALIGN_PARAGRAPH.CENTER, "right": WD_ALIGN_PARAGRAPH.RIGHT}[how["align"]]
        if how.get("bold"):
            for run in p.runs:
                run.bold = True
    buf = io.BytesIO()
    doc.save(buf)
    return {"memo.docx": buf.getvalue()}


def _lines(task: TaskInstance, title: dict[str, Any], body: dict[int, dict[str, Any]] | None = None,
           title_text: str | None = None) -> dict[str, bytes]:
    body = body or {}
    return _memo([(title_text or task.params["title"], title),
                  *[(s, body.get(i, {})) for i, s in enumerate(task.params["body"])]])


def test_writer_heading_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.writer_heading@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _lines(task, {"style": "Heading 1"}), tmp_path)
        assert not _passes(task, _lines(task, {"bold": True}), tmp_path)  # looks like one, is not
        assert not _passes(task, _lines(task, {"style": "Heading 2"}), tmp_path)
        assert not _passes(task, _lines(task, {}, {0: {"style": "Heading 1"}}), tmp_path)  # wrong paragraph
        assert not _passes(task, _lines(task, {"style": "Heading 1"}, {1: {"style": "Heading 1"}}), tmp_path)


def test_writer_center_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.writer_center_title@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _lines(task, {"align": "center"}), tmp_path)
        assert not _passes(task, _lines(task, {"align": "right"}), tmp_path)
        assert not _passes(task, _lines(task, {"align": "center"}, {2: {"align": "center"}}), tmp_path)  # collateral
        assert not _passes(task, _lines(task, {"align": "center", "bold": True}), tmp_path)


def test_writer_bullets_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.writer_bullets@1").instantiate(seed)
        assert not _passes(task, _initial(task), tmp_path)
        # a paragraph style named like a list is no list: Writer's own list writes numbering
        assert not _passes(task, _lines(task, {}, {i: {"style": "List Bullet"} for i in range(3)}), tmp_path)


def test_writer_replace_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.writer_replace_all@1").instantiate(seed)
        old, new = task.params["old"], task.params["new"]
        doc = docx.Document(io.BytesIO(_initial(task)["memo.docx"]))
        texts = [p.text for p in doc.paragraphs]
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _memo([(t.replace(old, new), {}) for t in texts]), tmp_path)
        assert not _passes(task, _memo([(texts[0].replace(old, new), {}), *[(t, {}) for t in texts[1:]]]), tmp_path)
        if any(t.count(old) > 1 for t in texts):  # one occurrence a paragraph
            assert not _passes(task, _memo([(t.replace(old, new, 1), {}) for t in texts]), tmp_path)
        assert not _passes(task, _memo([(t.replace(old, new.upper()), {}) for t in texts]), tmp_path)
        assert not _passes(task, _memo([(t.replace(old, new), {}) for t in texts[1:]]), tmp_path)  # title lost


def _tabled(task: TaskInstance, rows: list[tuple[str, str]], first: bool = False) -> dict[str, bytes]:
    doc = docx.Document(io.BytesIO(_initial(task)["memo.docx"]))
    table = doc.add_table(rows=len(rows), cols=2)
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.cell(r, c).text = text
    if first:  # the table above the memo's text
        doc.element.body.insert(0, table._tbl)
    buf = io.BytesIO()
    doc.save(buf)
    return {"memo.docx": buf.getvalue()}


def test_writer_table_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.writer_table@1").instantiate(seed)
        rows = [("Item", "Cost"), *[(a, b) for a, b in task.params["items"]]]
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _tabled(task, rows), tmp_path)
        assert not _passes(task, _tabled(task, rows[:-1]), tmp_path)  # a row short
        assert not _passes(task, _tabled(task, [(b, a) for a, b in rows]), tmp_path)  # columns swapped
        assert not _passes(task, _tabled(task, rows, first=True), tmp_path)  # not at the end
        assert not _passes(task, _tabled(task, [rows[0], *rows[:0:-1]]), tmp_path)  # rows out of order


# ------------------------------------------------------------------ Impress


def _deck(task: TaskInstance, edit: Callable[[Any], None]) -> dict[str, bytes]:
    deck = pptx.Presentation(io.BytesIO(_initial(task)["deck.pptx"]))
    edit(deck)
    buf = io.BytesIO()
    deck.save(buf)
    return {"deck.pptx": buf.getvalue()}


def _retitle(n: int, text: str) -> Callable[[Any], None]:
    def edit(deck: Any) -> None:
        deck.slides[n - 1].shapes.title.text = text
    return edit


def _drop(n: int) -> Callable[[Any], None]:
    def edit(deck: Any) -> None:
        ids = deck.slides._sldIdLst
        ids.remove(list(ids)[n - 1])
    return edit


def _add(title: str, at: int | None = None) -> Callable[[Any], None]:
    def edit(deck: Any) -> None:
        slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
        slide.shapes.title.text = title
        if at is not None:
            ids = deck.slides._sldIdLst
            node = list(ids)[-1]
            ids.remove(node)
            ids.insert(at, node)
    return edit


def test_impress_judges(tmp_path: Path) -> None:
    for seed in SEEDS:
        retitle = get_template("office.impress_retitle_slide@1").instantiate(seed)
        k, new = retitle.params["k"], retitle.params["new_title"]
        assert not _passes(retitle, _initial(retitle), tmp_path)
        assert _passes(retitle, _deck(retitle, _retitle(k, new)), tmp_path)
        assert not _passes(retitle, _deck(retitle, _retitle(k + 1, new)), tmp_path)  # wrong slide
        assert not _passes(retitle, _deck(retitle, _retitle(k, new + " " + retitle.params["title"])), tmp_path)

        def both(deck: Any, k: int = k, new: str = new) -> None:
            _retitle(k, new)(deck)
            _retitle(1, new)(deck)  # collateral

        assert not _passes(retitle, _deck(retitle, both), tmp_path)

        delete = get_template("office.impress_delete_slide@1").instantiate(seed)
        k = delete.params["k"]
        assert not _passes(delete, _initial(delete), tmp_path)
        assert _passes(delete, _deck(delete, _drop(k)), tmp_path)
        assert not _passes(delete, _deck(delete, _drop(k + 1)), tmp_path)
        assert not _passes(delete, _deck(delete, _retitle(k, "")), tmp_path)  # emptied, not deleted

        add = get_template("office.impress_add_slide@1").instantiate(seed)
        title = add.params["new_title"]
        assert not _passes(add, _initial(add), tmp_path)
        assert _passes(add, _deck(add, _add(title)), tmp_path)
        assert not _passes(add, _deck(add, _add(title, at=1)), tmp_path)  # not at the end
        assert not _passes(add, _deck(add, _add(title.lower())), tmp_path)


def _body(n: int, text: str) -> Callable[[Any], None]:
    def edit(deck: Any) -> None:
        deck.slides[n - 1].placeholders[1].text = text
    return edit


def test_impress_body_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.impress_edit_body@1").instantiate(seed)
        k, point = task.params["k"], task.params["point"]
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _deck(task, _body(k, point)), tmp_path)
        assert not _passes(task, _deck(task, _retitle(k, point)), tmp_path)  # over the title
        assert not _passes(task, _deck(task, _body(k + 1, point)), tmp_path)  # wrong slide
        assert not _passes(task, _deck(task, _body(k, task.params["old_point"] + "\n" + point)), tmp_path)  # added


# ------------------------------------------------------------------ GIMP


def _picture(task: TaskInstance) -> Any:
    return PIL_Image.open(io.BytesIO(_initial(task)[task.params["source"]])).convert("RGB")


def _export(task: TaskInstance, picture: Any, fmt: str = "PNG", overwrite: bool = False) -> dict[str, bytes]:
    buf = io.BytesIO()
    picture.save(buf, fmt)
    files = dict(_initial(task))
    files[task.params["out"]] = buf.getvalue()
    if overwrite:
        files[task.params["source"]] = buf.getvalue()
    return files


def test_gimp_judges(tmp_path: Path) -> None:
    T = PIL_Image.Transpose
    for seed in SEEDS:
        flip = get_template("office.gimp_flip_export@1").instantiate(seed)
        picture = _picture(flip)
        assert not _passes(flip, _initial(flip), tmp_path)
        assert _passes(flip, _export(flip, picture.transpose(T.FLIP_LEFT_RIGHT)), tmp_path)
        assert not _passes(flip, _export(flip, picture), tmp_path)  # the view flipped, not the picture
        assert not _passes(flip, _export(flip, picture.transpose(T.FLIP_TOP_BOTTOM)), tmp_path)
        assert not _passes(flip, _export(flip, picture.transpose(T.FLIP_LEFT_RIGHT), "JPEG"), tmp_path)
        assert not _passes(flip, _export(flip, picture.transpose(T.FLIP_LEFT_RIGHT), overwrite=True), tmp_path)

        rotate = get_template("office.gimp_rotate_export@1").instantiate(seed)
        picture = _picture(rotate)
        assert _passes(rotate, _export(rotate, picture.transpose(T.ROTATE_270)), tmp_path)
        assert not _passes(rotate, _export(rotate, picture.transpose(T.ROTATE_90)), tmp_path)  # the other way
        assert not _passes(rotate, _export(rotate, picture.transpose(T.ROTATE_180)), tmp_path)

        scale = get_template("office.gimp_scale_export@1").instantiate(seed)
        picture = _picture(scale)
        w, h = scale.params["width"], scale.params["height"]
        assert not _passes(scale, _initial(scale), tmp_path)
        assert _passes(scale, _export(scale, picture.resize((w, h), PIL_Image.Resampling.BICUBIC)), tmp_path)
        assert _passes(scale, _export(scale, picture.resize((w, h), PIL_Image.Resampling.NEAREST)), tmp_path)
        assert not _passes(scale, _export(scale, picture.resize((w, h + 3))), tmp_path)  # ratio not kept
        assert not _passes(scale, _export(scale, picture.crop((0, 0, w, h))), tmp_path)  # canvas cut, not scaled
        assert not _passes(scale, _export(scale, picture.resize((w, h)).transpose(T.FLIP_LEFT_RIGHT)), tmp_path)
        assert not _passes(scale, _export(scale, picture.resize((w, h)), overwrite=True), tmp_path)


# ------------------------------------------------------------------ VLC


def _xspf(task: TaskInstance, tracks: list[str], name: str | None = None, m3u: bool = False) -> dict[str, bytes]:
    files = dict(_initial(task))
    if m3u:
        body = "#EXTM3U\n" + "".join(f"/home/user/{t}\n" for t in tracks)
    else:
        body = ('<?xml version="1.0" encoding="UTF-8"?>\n<playlist xmlns="http://xspf.org/ns/0/" version="1">'
                "<trackList>" + "".join(f"<track><location>file:///home/agent/{t}</location></track>" for t in tracks)
                + "</trackList></playlist>\n")
    files[name or task.params["out"]] = body.encode()
    return files


def test_vlc_playlist_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.vlc_save_playlist@1").instantiate(seed)
        tracks = list(task.params["tracks"])
        assert not _passes(task, _initial(task), tmp_path)
        assert _passes(task, _xspf(task, tracks), tmp_path)  # another home folder: the file names count
        assert not _passes(task, _xspf(task, tracks[::-1]), tmp_path)  # out of order
        assert not _passes(task, _xspf(task, tracks[:-1]), tmp_path)  # a track lost
        assert not _passes(task, _xspf(task, [*tracks, tracks[0]]), tmp_path)  # a track twice
        assert not _passes(task, _xspf(task, tracks, m3u=True), tmp_path)  # another format under the name
        assert not _passes(task, _xspf(task, tracks, name=task.params["near_out"]), tmp_path)  # another name


# ------------------------------------------------------------------ Thunderbird


def _mail_home(task: TaskInstance, tmp_path: Path, sends: list[tuple[list[str], bytes]]) -> dict[str, bytes]:
    """What the task's own SMTP server (its `smtp_sink.py`, on the system Python, on a free
    loopback port) stored after `sends`, each a message sent with smtplib to an envelope:
    another mailer than Thunderbird, so the judge is proven on the format, not on one app."""
    import smtplib
    import socket
    import time

    home = tmp_path / f"mail-{len(list(tmp_path.iterdir()))}"
    sink = home / task.params["sink"]
    sink.parent.mkdir(parents=True)
    sink.write_text(task.sandbox_config["files"][task.params["sink"]])
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([SYSTEM_PYTHON, str(sink), str(home / task.params["outbox"]), str(port)])
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                client = smtplib.SMTP("127.0.0.1", port, timeout=10)
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "the task's SMTP server did not start"
                time.sleep(0.05)
        with client:
            for envelope, data in sends:
                client.sendmail("me@example.test", envelope, data)
    finally:
        server.terminate()
        server.wait(10)
    outbox = home / task.params["outbox"]
    return {f"{task.params['outbox']}/{p.name}": p.read_bytes() for p in sorted(outbox.glob("*.eml"))} if outbox.exists() else {}


def _message(to: list[str], cc: list[str], subject: str, body: str, *, html: bool = False) -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Someone <me@example.test>"
    message["To"] = ", ".join(to)
    if cc:
        message["Cc"] = ", ".join(cc)
    message["Subject"] = subject
    message.set_content(body)
    if html:
        message.add_alternative(f"<p>{body}</p>", subtype="html")
    return bytes(message)


def test_thunderbird_send_judge(tmp_path: Path) -> None:
    for seed in SEEDS:
        task = get_template("office.thunderbird_send_mail@1").instantiate(seed)
        to, cc, subject, body = (str(task.params[k]) for k in ("to", "cc", "subject", "body"))
        right = _message([to], [cc], subject, body)

        def passes(*sends: tuple[list[str], bytes]) -> bool:
            return _passes(task, _mail_home(task, tmp_path, list(sends)), tmp_path)

        assert not passes()  # nothing sent
        assert passes(([to, cc], right))
        assert passes(([cc, to], _message([to.upper()], [cc], subject, body, html=True)))  # text and HTML, case
        assert not passes(([to, cc], right), ([to, cc], right))  # sent twice
        assert not passes(([to, cc], _message([to, cc], [], subject, body)))  # both on the To line
        assert not passes(([to, cc], _message([cc], [to], subject, body)))  # to and copy swapped
        assert not passes(([to], _message([to], [], subject, body)))  # no copy
        assert not passes(([to, cc, "boss@example.test"], right))  # a blind copy to someone else
        assert not passes(([to, cc], _message([to], [cc], subject + " (draft)", body)))  # subject off
        assert not passes(([to, cc], _message([to], [cc], subject, body + " Thanks!")))  # body added to
        assert not passes(([to, cc], _message([to], [cc], subject, "")))  # no body
        assert not passes(([to, cc], _message([to], [cc], "", f"{subject}\n{body}")))  # subject in the body


def test_the_suite_has_oracles_near_misses_and_runs_on_both_kinds() -> None:
    """At least 25 templates (the issue's count), each instantiating at several seeds with an
    oracle and a near miss, as a desktop config and, with --kind vm, as a VM config."""
    from cua.tasks.selection import selected_templates

    for kind in ("desktop", "vm"):
        templates = selected_templates(["office"], kind=kind)
        assert len(templates) >= 25
        apps = set()
        for template in templates:
            apps.add(template.tags.app)
            for seed in SEEDS:
                instance = template.instantiate(seed)
                assert instance.sandbox_kind == kind
                assert instance.oracle is not None and instance.near_miss is not None and instance.instruction
        assert apps >= {"libreoffice_calc", "libreoffice_writer", "libreoffice_impress", "gimp", "vlc", "thunderbird"}
