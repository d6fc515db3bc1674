"""Reading DuckDuckGo's plain-HTML results page.

Each result has a title link (class `result__a`) and usually a snippet
(class `result__snippet`). Result links point at DuckDuckGo's redirector
(`//duckduckgo.com/l/?uddg=<target>`), so the target is taken from the
`uddg` parameter; ads (links to `duckduckgo.com/y.js`) are skipped.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

_BASE = "https://duckduckgo.com/"


class _ResultParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[list[str]] = []  # [title, url, snippet]
        self._field: int | None = None  # 0: collecting a title, 2: a snippet
        self._tag = ""
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._field is not None:
            self._depth += tag == self._tag
            return
        classes = (dict(attrs).get("class") or "").split()
        if tag == "a" and "result__a" in classes:
            self.results.append(["", target_url(dict(attrs).get("href") or ""), ""])
            self._open(0, tag)
        elif "result__snippet" in classes and self.results and not self.results[-1][2]:
            self._open(2, tag)

    def handle_endtag(self, tag: str) -> None:
        if self._field is None or tag != self._tag:
            return
        if self._depth:
            self._depth -= 1
        else:
            self._field = None

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.results[-1][self._field] += data

    def _open(self, field: int, tag: str) -> None:
        self._field, self._tag, self._depth = field, tag, 0


def target_url(href: str) -> str:
    """Where a result link leads: the `uddg` target of a redirector link, else the link."""
    absolute = urljoin(_BASE, href)
    parts = urlsplit(absolute)
    if parts.hostname and parts.hostname.endswith("duckduckgo.com"):
        targets = parse_qs(parts.query).get("uddg")
        return targets[0] if targets else ""
    return absolute


def parse_results(page: str) -> list[tuple[str, str, str]]:
    """(title, url, snippet) for each organic result, in page order."""
    parser = _ResultParser()
    parser.feed(page)
    parser.close()
    found: list[tuple[str, str, str]] = []
    for title, url, snippet in parser.results:
        if url.startswith(("http://", "https://")):
            found.append((" ".join(title.split()), url, " ".join(snippet.split())))
    return found
