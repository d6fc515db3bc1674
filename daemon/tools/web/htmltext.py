"""HTML reduced to readable text with the standard library's HTML parser.

Scripts, styles, navigation and other non-content elements are dropped, and
so are comments (a favourite hiding place for instructions aimed at agents).
Headings become `#` lines, list items `- ` lines, table cells are joined with
` | `, `<pre>` keeps its layout, and everything else flows as paragraphs. Zero-
width and bidirectional control characters are removed from the result.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_SKIPPED = frozenset(
    {"script", "style", "noscript", "template", "svg", "nav", "iframe", "object", "canvas"}
)
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt",
        "figcaption", "figure", "footer", "form", "header", "hr", "main", "ol", "p",
        "section", "summary", "table", "tbody", "thead", "tfoot", "ul", "caption",
    }
)  # fmt: skip
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad]")
_SPACES = re.compile(r"\s+")
# Inside <pre>, line breaks and spaces are carried by private-use stand-ins so the
# whitespace clean-up at the end leaves them alone.
_PRE_NEWLINE, _PRE_SPACE = "\ue000", "\ue001"


class _TextExtractor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []
        self._skipping: list[str] = []
        self._pre = 0
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._skipping or tag in _SKIPPED:
            if tag in _SKIPPED:
                self._skipping.append(tag)
            return
        if tag == "title":
            self._in_title = True
        elif tag in _HEADINGS:
            self.parts.append("\n\n" + "#" * _HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "br":
            self.parts.append(_PRE_NEWLINE if self._pre else "\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag == "pre":
            self.parts.append("\n")
            self._pre += 1
        elif tag == "tr" or tag in _BLOCKS:
            self.parts.append("\n")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("br", "hr") and not self._skipping:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if self._skipping:
            if tag == self._skipping[-1]:
                self._skipping.pop()
            return
        if tag == "title":
            self._in_title = False
        elif tag in _HEADINGS:
            self.parts.append("\n\n")
        elif tag == "pre":
            self._pre = max(self._pre - 1, 0)
            self.parts.append("\n")
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        if self._in_title:
            self.title.append(data)
        elif self._pre:
            self.parts.append(data.replace("\n", _PRE_NEWLINE).replace(" ", _PRE_SPACE))
        else:
            self.parts.append(_SPACES.sub(" ", data))


def html_to_text(html: str) -> str:
    """The readable text of an HTML document, title first."""
    extractor = _TextExtractor()
    extractor.feed(html)
    extractor.close()
    title = _SPACES.sub(" ", "".join(extractor.title)).strip()
    body = _tidy("".join(extractor.parts))
    text = f"Title: {title}\n\n{body}" if title else body
    return _INVISIBLE.sub("", text).strip()


def _tidy(text: str) -> str:
    """Trim every line, keep at most one blank line in a row, restore <pre> layout."""
    lines: list[str] = []
    for raw in text.split("\n"):
        line = raw.strip()
        line = line.replace(_PRE_NEWLINE, "\n").replace(_PRE_SPACE, " ")
        line = line.removeprefix("| ")  # a table row starts with its first cell
        if line or (lines and lines[-1]):
            lines.append(line)
    return "\n".join(lines)
