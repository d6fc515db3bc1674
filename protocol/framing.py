"""Newline-delimited JSON framing with a maximum message size.

One JSON text per line, UTF-8, `\n` terminated. The decoder is sans-IO: feed
it bytes as they arrive and it hands back complete lines, or an `Oversized`
marker once for a line that grew past the limit (the rest of that line is
discarded as it arrives, so memory stays bounded).
"""

from __future__ import annotations

from coding_harness.protocol import json_text

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_MESSAGE_BYTES = 16 * 1024 * 1024


OVERSIZED_HEAD = 512  # bytes of a too-long line kept, for its id


class Oversized:
    """Stands in for a line that exceeded the limit.

    A plain class: `dataclasses` would cost the one-shot client ~8 ms of imports.
    """

    __slots__ = ("head", "size_seen")

    def __init__(self, size_seen: int, head: bytes = b"") -> None:
        self.size_seen = size_seen
        self.head = head  # the line's first bytes: a reader may find the request's id there

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Oversized) and other.size_seen == self.size_seen

    def __hash__(self) -> int:
        return hash(self.size_seen)


def encode(message: Any) -> bytes:
    """One message as a line of compact UTF-8 JSON."""
    return json_text.dumps(message).encode("utf-8") + b"\n"


class LineDecoder:
    """Splits a byte stream into lines no longer than `limit` bytes."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self._limit = limit
        self._buffer = bytearray()
        self._discarding = False
        self._discarded = 0
        # Lines ended so far (discarded ones included): tells a new line from a continued one.
        self.ended = 0

    def feed(self, data: bytes) -> list[bytes | Oversized]:
        out: list[bytes | Oversized] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            chunk = data[start:] if newline < 0 else data[start:newline]
            if self._discarding:
                self._discarded += len(chunk)
            else:
                self._buffer += chunk
                if len(self._buffer) > self._limit:
                    self._discarding = True
                    self._discarded = len(self._buffer)
                    head = bytes(self._buffer[:OVERSIZED_HEAD])
                    self._buffer.clear()
                    out.append(Oversized(self._discarded, head))
            if newline < 0:
                return out
            self.ended += 1
            if self._discarding:
                self._discarding = False
            else:
                line = bytes(self._buffer).rstrip(b"\r")
                if line.strip():
                    out.append(line)
            self._buffer.clear()
            start = newline + 1

    @property
    def pending(self) -> int:
        """Bytes of an unfinished line held in memory."""
        return len(self._buffer)

    @property
    def in_message(self) -> bool:
        """A line has begun and not ended: held in memory, or being discarded as too long."""
        return self._discarding or bool(self._buffer)
