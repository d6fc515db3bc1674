"""What the REPL prints as it opens: the banner, the keys line, an attached session's history.

The banner names the REPL, the session's provider, model and folder, and the
keys (`KEYS`, printed again by `/help`). Attached to an existing session, the
last `HISTORY_SHOWN` messages follow, with how many earlier ones are not shown.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.history import print_history
from coding_harness.client.render.style import Style
from coding_harness.protocol import methods
from coding_harness.protocol.client import Connection
from coding_harness.protocol.history_pages import read_history

KEYS = (
    "Enter sends · Esc-Enter or a trailing \\ adds a line · Tab completes · "
    "Ctrl-R searches history · Ctrl-C or Esc cancels a turn · Shift-Tab switches the mode · "
    "Ctrl-D leaves"
)
HISTORY_SHOWN = 20


def print_banner(style: Style, conn: Connection, session: dict[str, Any], attached: bool) -> None:
    """The banner; with `attached`, the session's last messages after it."""
    style.line("coding-harness REPL. /help for commands, /quit or Ctrl-D to leave.", "bold")
    where = [session.get("provider"), session.get("model"), session["cwd"]]
    style.line(" · ".join(str(part) for part in where if part), "dim")
    style.line(KEYS, "dim")
    if attached:
        sid = str(session["session"])
        style.line(f"attached to session {sid}", "dim")
        shown = HISTORY_SHOWN
        total = conn.request(methods.SESSION_HISTORY, {"session": sid, "limit": 0})
        if total["total"] > shown:
            style.line(f"({total['total'] - shown} earlier messages not shown)", "dim")
        print_history(read_history(conn, sid, offset=-shown), style, shown)
