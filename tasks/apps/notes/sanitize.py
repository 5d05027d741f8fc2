"""Allow-list HTML sanitizer for note bodies saved from the contenteditable editor.

The editor posts its innerHTML; we keep only the formatting the toolbar can produce
(bold, italic, underline, headings, lists, paragraphs, line breaks, links) and drop
every attribute except a link's http(s) href. Browsers' execCommand emits <b>/<i> or
<strong>/<em> depending on context; both are kept and judges read `text` or tags.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

ALLOWED = {"b", "strong", "i", "em", "u", "h1", "h2", "h3", "ul", "ol", "li", "p", "br", "div", "blockquote", "a"}
VOID = {"br"}
BLOCK = {"h1", "h2", "h3", "ul", "ol", "li", "p", "div", "blockquote"}
DROP_CONTENT = {"script", "style", "iframe", "object", "template"}


class _Sanitizer(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in DROP_CONTENT:
            self.skipping += 1
            return
        if self.skipping or tag not in ALLOWED:
            return
        if tag in BLOCK or tag == "br":
            self.text.append("\n")
        if tag == "a":
            href = dict(attrs).get("href") or ""
            safe = href if re.match(r"^https?://", href) else "#"
            self.out.append(f'<a href="{html.escape(safe, quote=True)}">')
        else:
            self.out.append(f"<{tag}>")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in self.stack and tag not in VOID:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in DROP_CONTENT:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping or tag not in ALLOWED or tag in VOID or tag not in self.stack:
            return
        while self.stack:
            top = self.stack.pop()
            self.out.append(f"</{top}>")
            if top == tag:
                break
        if tag in BLOCK:
            self.text.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        self.out.append(html.escape(data, quote=False))
        self.text.append(data)

    def close(self) -> None:
        super().close()
        while self.stack:
            self.out.append(f"</{self.stack.pop()}>")


def sanitize(body: str) -> str:
    parser = _Sanitizer()
    parser.feed(body)
    parser.close()
    return "".join(parser.out)


def plain_text(body: str) -> str:
    """Readable text of a body: blocks become lines, runs of blank space collapse."""
    parser = _Sanitizer()
    parser.feed(body)
    parser.close()
    lines = [re.sub(r"[ \t\u00a0]+", " ", ln).strip() for ln in "".join(parser.text).split("\n")]
    return "\n".join(ln for ln in lines if ln)
