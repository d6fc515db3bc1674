"""A sans-IO decoder for server-sent events, as the WHATWG specification parses them.

It takes text (or bytes) in whatever pieces the network delivers and returns
the events completed so far; it never reads a socket. Lines end in CRLF, CR or
LF, even when a CRLF is split between two pieces; a leading byte order mark is
dropped; lines starting with ':' are comments; an event is dispatched at a
blank line, and an unterminated event at the end of the stream is discarded.
Fields other than `event` and `data` (`id`, `retry`, unknown ones) are ignored:
a chat-completions client has no use for reconnection. With a `limit`, an
event (or a line) that grows past that many characters before it ends raises
`SSEEventTooLarge`, so a stream that never ends a line cannot fill memory.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

_LINE_END = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"
DEFAULT_EVENT = "message"


class SSEEventTooLarge(ValueError):
    """An event grew past the decoder's limit without ending."""


@dataclass(frozen=True, slots=True)
class SSEEvent:
    event: str
    data: str


class SSEDecoder:
    """Feed pieces of the stream in order; collect the events each piece completes."""

    def __init__(self, limit: int | None = None) -> None:
        self._limit = limit
        self._held = 0  # characters kept for the event being read: its line and data
        self._pending: list[str] = []
        self._started = False
        self._skip_lf = False
        self._event = ""
        self._data: list[str] = []
        self._bytes = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: str) -> list[SSEEvent]:
        """Decode one piece of text; return the events it completes."""
        if not chunk:
            return []
        if not self._started:
            self._started = True
            chunk = chunk.removeprefix(_BOM)
        if self._skip_lf:
            self._skip_lf = False
            chunk = chunk.removeprefix("\n")
        if "\r" not in chunk and "\n" not in chunk:
            self._pending.append(chunk)
            self._hold(len(chunk))
            return []
        return self._split(chunk)

    def _hold(self, size: int) -> None:
        self._held += size
        if self._limit is not None and self._held > self._limit:
            raise SSEEventTooLarge(f"an event longer than {self._limit} characters")

    def feed_bytes(self, chunk: bytes) -> list[SSEEvent]:
        """Like `feed`, for raw bytes; a UTF-8 character split across pieces is kept whole."""
        return self.feed(self._bytes.decode(chunk))

    def close(self) -> list[SSEEvent]:
        """End of stream. An unterminated last event is discarded, so this returns []."""
        self.feed(self._bytes.decode(b"", final=True))
        self._pending.clear()
        self._held = 0
        self._event = ""
        self._data.clear()
        return []

    def _split(self, chunk: str) -> list[SSEEvent]:
        text = "".join(self._pending) + chunk
        self._held -= len(text) - len(chunk)
        self._pending.clear()
        events: list[SSEEvent] = []
        start = 0
        for match in _LINE_END.finditer(text):
            event = self._line(text[start : match.start()])
            if event is not None:
                events.append(event)
            start = match.end()
        rest = text[start:]
        if rest:
            self._pending.append(rest)
            self._hold(len(rest))
        self._skip_lf = text.endswith("\r")
        return events

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
            self._hold(len(value))
        return None

    def _dispatch(self) -> SSEEvent | None:
        self._held = 0
        if not self._data:
            self._event = ""
            return None
        event = SSEEvent(event=self._event or DEFAULT_EVENT, data="\n".join(self._data))
        self._event = ""
        self._data.clear()
        return event
