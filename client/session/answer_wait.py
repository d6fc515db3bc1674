"""Reading a person's answer while the daemon's events keep coming.

An approval is asked of every attached client and the first answer wins, so a
question shown here may be answered in another terminal while this one waits
for a key. `read_line` waits on standard input and on the daemon's connection
at once (`select`); each event that arrives is handed to a `watch` callback,
which raises `AnsweredElsewhere` when it is the `approval.resolved` of the
question on screen. The prompt then goes away at once, not at the next key.

Standard input is read here with `os.read` into our own buffer, never through
`sys.stdin`'s: a line Python had buffered would be invisible to `select`, and
`printf 'y\\ny\\n' |` would hang at its second answer. `LineSource.at_end`
tells a caller that nothing more will come (`echo y | harness approve` leaves).
"""

from __future__ import annotations

import os
import select

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from coding_harness.protocol.client import Connection

    # Sees each notification read while waiting; raises AnsweredElsewhere to stop.
    Watch = Callable[[dict[str, Any] | None], None]

READ_BYTES = 4096


class AnsweredElsewhere(Exception):
    """The question was answered by another client while this one asked it."""

    def __init__(self, resolved: dict[str, Any]) -> None:
        super().__init__(str(resolved.get("decision")))
        self.resolved = resolved


class LineSource:
    """The lines of a file descriptor (standard input by default), read unbuffered."""

    def __init__(self, fd: int = 0) -> None:
        self.fd = fd
        self._buffer = b""
        self.ended = False

    def take_line(self) -> str | None:
        """A whole line already read (the rest at end of input), else None."""
        end = self._buffer.find(b"\n")
        if end < 0 and not (self.ended and self._buffer):
            return None
        cut = len(self._buffer) if end < 0 else end + 1
        line, self._buffer = self._buffer[:cut], self._buffer[cut:]
        return line.decode("utf-8", "replace")

    def fill(self) -> None:
        """Read what is there (select said so); an empty read is the end of input."""
        try:
            data = os.read(self.fd, READ_BYTES)
        except OSError:
            data = b""
        if data:
            self._buffer += data
        else:
            self.ended = True

    def at_end(self) -> bool:
        """Nothing is left to read, and nothing more will come."""
        return self.ended and not self._buffer


def read_line(source: LineSource, conn: Connection, watch: Watch) -> str:
    """The next line of `source` ('' at its end); every notification `conn` delivers
    meanwhile goes to `watch`, which may raise to stop waiting."""
    while True:
        line = source.take_line()
        if line is not None:
            return line
        if source.ended:
            return ""
        if conn.has_buffered():
            watch(conn.next_notification(timeout=0))
            continue
        ready, _, _ = select.select([source.fd, conn.fileno()], [], [])
        if source.fd in ready:
            source.fill()
        if conn.fileno() in ready:
            watch(conn.next_notification(timeout=0.05))
