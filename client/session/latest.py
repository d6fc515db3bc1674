"""The session a command means when it names none: the latest one of this folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import methods, paths
from coding_harness.protocol.version import __version__


def latest_session_here() -> str | None:
    """The most recently active session whose folder is this one (None: there is none);
    the daemon is started when none runs; `DaemonUnreachable` when none can be."""
    with connect_or_start(paths.socket_path()) as conn:  # started when it is gone
        conn.initialize("harness-attach", __version__, approvals=False)
        sessions: list[dict[str, Any]] = conn.request(methods.SESSION_LIST)["sessions"]
    here = str(Path.cwd().resolve())
    mine = [s for s in sessions if s["cwd"] == here]
    if not mine:
        return None
    return str(max(mine, key=lambda s: float(s["last_activity"]))["session"])
