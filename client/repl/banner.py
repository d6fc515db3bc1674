"""What the REPL prints as it opens: the banner and the keys line.

The banner names the REPL, the session's provider, model and folder (a session
on the default profile has none of its own: `provider.list` says which the next
turn uses), the model's context window as its server tells it (`provider.window`;
left out when the daemon cannot say in `WINDOW_WAIT` seconds), and the keys
(`KEYS`, printed again by `/help`). An attached session's last turns follow it,
replayed through the live renderer (`replay.py`); a session with messages but no
turns to replay (a conversation loaded with `/load`) shows its last HISTORY_SHOWN
messages instead.
"""

from __future__ import annotations

import contextlib
from typing import Any

from coding_harness.client.render.history import print_history
from coding_harness.client.render.style import Style
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.history_pages import read_history

KEYS = (
    "Enter sends · Esc-Enter or a trailing \\ adds a line · Tab completes · "
    "Ctrl-R searches history · Ctrl-C or Esc cancels a turn · Shift-Tab switches the mode · "
    "Ctrl-D leaves"
)
HISTORY_SHOWN = 20
WINDOW_WAIT = 6.0


def print_banner(style: Style, conn: Connection, session: dict[str, Any], attached: bool) -> None:
    """The banner; with `attached`, which session it is."""
    style.line("coding-harness REPL. /help for commands, /quit or Ctrl-D to leave.", "bold")
    provider, model = session.get("provider"), session.get("model")
    if attached and not (provider and model):
        with contextlib.suppress(errors.RpcError):
            listed = conn.request(methods.PROVIDER_LIST, {"session": session["session"]})
            provider, model = provider or listed.get("active"), model or listed.get("model")
    where = [provider, model, session["cwd"]]
    style.line(" · ".join(str(part) for part in where if part), "dim")
    window = window_line(conn, str(session["session"]))
    if window:
        style.line(window, "dim")
    style.line(KEYS, "dim")
    if attached:
        style.line(f"attached to session {session['session']}{_elsewhere(session)}", "dim")


def _elsewhere(session: dict[str, Any]) -> str:
    """For a session another runner of the hub holds: where it runs, and who is there."""
    if not session.get("remote"):
        return ""
    return f" on runner {session.get('runner')} ({session.get('person')}), through the hub"


def print_messages(style: Style, conn: Connection, sid: str) -> None:
    """The last HISTORY_SHOWN messages, for a session with no turns to replay."""
    total = conn.request(methods.SESSION_HISTORY, {"session": sid, "limit": 0})
    if total["total"] > HISTORY_SHOWN:
        style.line(f"({total['total'] - HISTORY_SHOWN} earlier messages not shown)", "dim")
    print_history(read_history(conn, sid, offset=-HISTORY_SHOWN), style, HISTORY_SHOWN)


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
