"""Seeded parameters of the office suite's Impress tasks: a deck made with python-pptx
(sent as the sandbox's binary file), the reader its judges run in the sandbox, and the
reader's expected output."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

from cua.tasks.suites.office.gen import PROFILE

#: Reads a .pptx with the standard library (the guest has no python-pptx), slides in the
#: presentation's order: one line per shape with text, "SLIDE<TAB>ROLE<TAB>TEXT" (ROLE:
#: title, body, or text for a shape that is no placeholder; a shape's paragraphs joined by
#: "|"), and "SLIDE<TAB>empty<TAB>" for a slide with no text at all.
READER = r"""
import sys, zipfile, posixpath, xml.etree.ElementTree as ET
P = '{http://schemas.openxmlformats.org/presentationml/2006/main}'
A = '{http://schemas.openxmlformats.org/drawingml/2006/main}'
R = '{http://schemas.openxmlformats.org/officeDocument/2006/relationships}'
REL = '{http://schemas.openxmlformats.org/package/2006/relationships}'
z = zipfile.ZipFile(sys.argv[1])
def targets(part):
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, '_rels', name + '.rels')
    if rels not in z.namelist():
        return {}
    return {r.get('Id'): posixpath.normpath(posixpath.join(folder, r.get('Target')))
            for r in ET.fromstring(z.read(rels)).iter(REL + 'Relationship')}
ROLES = {'ctrTitle': 'title', 'title': 'title', 'subTitle': 'body', 'body': 'body', 'obj': 'body'}
parts = targets('ppt/presentation.xml')
for n, sid in enumerate(ET.fromstring(z.read('ppt/presentation.xml')).iter(P + 'sldId'), start=1):
    slide = ET.fromstring(z.read(parts[sid.get(R + 'id')]))
    said = False
    for sp in slide.iter(P + 'sp'):
        ph = sp.find(P + 'nvSpPr/' + P + 'nvPr/' + P + 'ph')
        role = 'text' if ph is None else ROLES.get(ph.get('type', 'body'), ph.get('type', 'body'))
        text = '|'.join(t for t in (''.join(r.text or '' for r in p.iter(A + 't')) for p in sp.iter(A + 'p')) if t)
        if text:
            print(n, role, text, sep='\t')
            said = True
    if not said:
        print(n, 'empty', '', sep='\t')
"""

TOPICS = ("Quarterly review", "Hiring plan", "Next steps", "Budget", "Road map", "Risks", "Open questions",
          "Customer feedback", "Launch timeline", "Team updates")
POINTS = ("Numbers are up", "Two new roles", "Ship in May", "Costs fell", "Three markets", "Fewer bugs",
          "A new office", "Faster builds")
NEW_TITLES = ("Summary", "Thank you", "Appendix", "Lessons learned", "Questions")


def _pptx(slides: list[tuple[str, str]]) -> str:
    from pptx import Presentation

    deck = Presentation()
    for i, (title, point) in enumerate(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if i == 0 else 1])  # title slide, then title + content
        slide.shapes.title.text = title
        slide.placeholders[1].text = point
    buf = io.BytesIO()
    deck.save(buf)
    return base64.b64encode(buf.getvalue()).decode()


def _dump(slides: list[tuple[str, str]]) -> str:
    return "".join(f"{n}\ttitle\t{title}\n{n}\tbody\t{point}\n" for n, (title, point) in enumerate(slides, start=1))


def deck(_: Any, rng: random.Random) -> dict[str, Any]:
    """A deck of 4-5 slides, and a slide `k` (never the first) that tasks act on."""
    count = rng.randint(4, 5)
    slides = list(zip(rng.sample(TOPICS, count), rng.sample(POINTS, count)))
    k = rng.randint(2, count - 1)  # a middle slide: its neighbours on both sides are near misses
    new_title = rng.choice([t for t in NEW_TITLES if t not in dict(slides)])
    return {"binary_files": {"deck.pptx": _pptx(slides)},
            "files": {".config/libreoffice/4/user/registrymodifications.xcu": PROFILE.read_text()},
            "reader": READER, "count": count, "k": k, "title": slides[k - 1][0], "new_title": new_title,
            "slides": slides, "dump": _dump(slides)}


def impress_retitle(_: Any, rng: random.Random) -> dict[str, Any]:
    params = deck(_, rng)
    slides, k = params["slides"], params["k"]
    retitled = [(params["new_title"], p) if n == k else (t, p) for n, (t, p) in enumerate(slides, start=1)]
    return {**params, "expected": _dump(retitled), "pages": k - 1, "near_pages": k}


def impress_delete(_: Any, rng: random.Random) -> dict[str, Any]:
    params = deck(_, rng)
    slides, k = params["slides"], params["k"]
    return {**params, "expected": _dump(slides[:k - 1] + slides[k:]), "pages": k - 1, "near_pages": k}


def impress_add_last(_: Any, rng: random.Random) -> dict[str, Any]:
    params = deck(_, rng)
    n = params["count"] + 1
    # the new slide's content placeholder is empty: it has no line
    return {**params, "expected": params["dump"] + f"{n}\ttitle\t{params['new_title']}\n", "pages": params["count"] - 1,
            "near_pages": 0}


def impress_body(_: Any, rng: random.Random) -> dict[str, Any]:
    """New text for slide k's content box; the near miss types it over the title."""
    params = deck(_, rng)
    slides, k = params["slides"], params["k"]
    point = rng.choice([p for p in POINTS if p not in {q for _, q in slides}])
    changed = [(t, point) if n == k else (t, p) for n, (t, p) in enumerate(slides, start=1)]
    return {**params, "point": point, "old_point": slides[k - 1][1], "expected": _dump(changed), "pages": k - 1,
            "objects": 2, "near_objects": 1}
