"""What the REPL prints as it opens: the banner, the keys line, an attached session's history.

The banner names the REPL, the session's provider, model and folder, the
model's context window as its server tells it (`provider.window`; left out when
the daemon cannot say in `WINDOW_WAIT` seconds), and the keys (`KEYS`, printed
again by `/help`). Attached to an existing session, the
last `HISTORY_SHOWN` messages follow, with how many earlier ones are not shown.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.history import print_history
from coding_harness.client.render.style import Style
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.history_pages import read_history

KEYS = (
    "Enter sends · Esc-Enter or a trailing \\ adds a line · Tab completes · "
    "Ctrl-R searches history · Ctrl-C cancels a turn · Ctrl-D leaves"
)
HISTORY_SHOWN = 20
WINDOW_WAIT = 6.0


def print_banner(style: Style, conn: Connection, session: dict[str, Any], attached: bool) -> None:
    """The banner; with `attached`, the session's last messages after it."""
    style.line("coding-harness REPL. /help for commands, /quit or Ctrl-D to leave.", "bold")
    where = [session.get("provider"), session.get("model"), session["cwd"]]
    style.line(" · ".join(str(part) for part in where if part), "dim")
    window = window_line(conn, str(session["session"]))
    if window:
        style.line(window, "dim")
    style.line(KEYS, "dim")
    if attached:
        sid = str(session["session"])
        style.line(f"attached to session {sid}", "dim")
        shown = HISTORY_SHOWN
        total = conn.request(methods.SESSION_HISTORY, {"session": sid, "limit": 0})
        if total["total"] > shown:
            style.line(f"({total['total'] - shown} earlier messages not shown)", "dim")
        print_history(read_history(conn, sid, offset=-shown), style, shown)


def window_line(conn: Connection, session: str) -> str:
    """ "context window: 8,192 tokens (llama.cpp /props n_ctx)", or "" when unknown."""
    try:
        found = conn.request(methods.PROVIDER_WINDOW, {"session": session}, WINDOW_WAIT)
    except (errors.RpcError, DaemonUnreachable):
        return ""
    tokens = found.get("tokens")
    if not isinstance(tokens, int):
        return ""
    small = "; small-window budget" if found.get("small") else ""
    return f"context window: {tokens:,} tokens ({found.get('source', '?')}{small})"
