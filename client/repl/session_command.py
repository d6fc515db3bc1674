"""What every slash command that asks the daemon about the REPL's session holds."""

from __future__ import annotations

from coding_harness.client.render.style import Style
from coding_harness.protocol.client import Connection


class SessionCommand:
    """A slash command over the REPL's own connection, for its session."""

    def __init__(self, conn: Connection, session: str, style: Style) -> None:
        self.conn = conn
        self.session = session
        self.style = style
