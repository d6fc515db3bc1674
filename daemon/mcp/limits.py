"""How much of an MCP server the daemon takes in: the caps, and the record of a breach.

One MCP message, either way, is at most `MAX_MESSAGE_BYTES`: a stdio server's
line (`LineSplitter`), a Streamable HTTP answer's body or one of its
server-sent events (`http_cap.py`), and a tool call's arguments. Past it the
transport stops reading, records the breach on the link's `MessageCap` (one
line saying what happened), and the link ends that connection and starts the
server again; the call in flight fails with that line. Free of the SDK: the
unit tests drive it with plain bytes.
"""

from __future__ import annotations

from collections.abc import Callable

# One JSON-RPC message from or to a server: a tool result of a few megabytes of text
# or a base64 image fits, an endless body does not.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024


def size_text(count: int) -> str:
    """`4 MiB`, `512 KiB`: a byte count as the caps are named."""
    if count >= 1024 * 1024 and count % (1024 * 1024) == 0:
        return f"{count // (1024 * 1024)} MiB"
    if count >= 1024:
        return f"{count // 1024} KiB"
    return f"{count} bytes"


class MessageTooLarge(ValueError):
    """A message over the cap: the connection it came on is no longer read."""


class MessageCap:
    """The cap of one server's connection, and what broke it: the transports call
    `exceeded`, the link reads `breach` and is woken by `on_breach`."""

    def __init__(
        self, limit: int = MAX_MESSAGE_BYTES, on_breach: Callable[[], None] = lambda: None
    ):
        self.limit = limit
        self.breach: str | None = None
        self._on_breach = on_breach

    def exceeded(self, what: str) -> MessageTooLarge:
        """Record that `what` (e.g. "a line on its standard output") went past the cap;
        returns the exception for the transport to raise."""
        if self.breach is None:
            self.breach = (
                f"the server sent {what} of more than {size_text(self.limit)}, the most one "
                "MCP message may carry; the connection was closed and the server is restarted"
            )
            self._on_breach()
        return MessageTooLarge(self.breach)

    def check_outgoing(self, size: int) -> str | None:
        """Why a message of `size` bytes to the server may not be sent, if it may not."""
        if size <= self.limit:
            return None
        return (
            f"its arguments are {size_text(size)}, over the {size_text(self.limit)} one MCP "
            "message may carry; send less, e.g. a path instead of the file's content"
        )


class LineSplitter:
    """Newline-delimited messages out of a byte stream, none longer than `cap.limit`
    bytes (sans I/O: `feed` each chunk as it arrives, get the complete lines back)."""

    def __init__(self, cap: MessageCap, what: str = "a line on its standard output"):
        self._cap = cap
        self._what = what
        self._pending = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        """The lines `chunk` completes (without their newline); `MessageTooLarge` once a
        line, complete or not, is over the cap: nothing past it is kept."""
        lines: list[bytes] = []
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0:
            self._take(chunk, start, end)
            lines.append(bytes(self._pending))
            self._pending.clear()
            start = end + 1
        self._take(chunk, start, len(chunk))
        return lines

    def _take(self, chunk: bytes, start: int, end: int) -> None:
        if len(self._pending) + (end - start) > self._cap.limit:
            self._pending.clear()
            raise self._cap.exceeded(self._what)
        self._pending += chunk[start:end]
