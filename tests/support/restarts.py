"""Sessions across daemon restarts: open one, restart the daemon, check the history.

`restart` stops the daemon (SIGTERM, or SIGKILL when `hard`) and starts a new
one on the same socket; `assert_no_dangling` checks every tool call in a
history has its result.
"""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.protocol.client import Connection
from tests.support.processes import start_daemon

if TYPE_CHECKING:
    from tests.integration.conftest import Sandbox


def new_session(conn: Connection, cwd: Path) -> str:
    session = conn.request("session.create", {"cwd": str(cwd)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def assert_no_dangling(history: list[dict[str, Any]]) -> None:
    calls = [c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])]
    results = [m["tool_call_id"] for m in history if m["role"] == "tool"]
    assert sorted(calls) == sorted(results), history


def restart(
    sandbox: Sandbox, process: subprocess.Popen[bytes], *, hard: bool
) -> subprocess.Popen[bytes]:
    if hard:
        process.kill()
    else:
        process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)
    return start_daemon(sandbox.socket, sandbox.env)
