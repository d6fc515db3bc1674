"""The discovery record: which daemon serves which socket, kept in the state folder.

The daemon writes `harnessd.json` (pid, socket, version, start time, how it
was started, its log file) once it serves, and removes it before it answers a
stop, so a record that exists names a daemon that still takes work. A client
reads it to check the process answering on the socket before trusting it:
`problems` names every mismatch (the recorded pid is gone, the socket path
differs, another pid answers). The daemon writes it atomically (see
`daemon/server/service.py`); this module only reads. Standard library only.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from coding_harness.protocol import paths

RECORD_NAME = "harnessd.json"
FIELDS = ("pid", "socket", "version", "started_at")
MAX_PID = 2**31  # pids are C ints; a larger number could not name a process


class RecordError(Exception):
    """A record that exists but cannot be used; the message names the fix."""


def record_path(env: dict[str, str] | None = None) -> Path:
    return paths.state_dir(env) / RECORD_NAME


def read_record(path: Path) -> dict[str, Any] | None:
    """The record, or None when there is none; RecordError when it is unreadable."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise RecordError(
            f"{path} is not a daemon record; delete it (the daemon rewrites it)"
        ) from None
    except OSError as exc:
        raise RecordError(f"cannot read {path} ({exc.strerror}); check its permissions") from exc
    try:
        record = json.loads(text)
    except (ValueError, RecursionError):
        record = None
    if not isinstance(record, dict) or not all(key in record for key in FIELDS):
        raise RecordError(f"{path} is not a daemon record; delete it (the daemon rewrites it)")
    pid = record["pid"]
    if not isinstance(pid, int) or isinstance(pid, bool) or not 0 < pid < MAX_PID:
        raise RecordError(f"{path} has no valid pid; delete it (the daemon rewrites it)")
    return record


def pid_alive(pid: int) -> bool:
    """True when a process with this pid exists (owned by anyone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def problems(
    record: dict[str, Any] | None, *, socket_path: Path, answering_pid: int | None
) -> list[str]:
    """Why the record and the daemon answering on `socket_path` disagree, if they do."""
    if record is None:
        if answering_pid is None:
            return []
        return [
            f"the daemon answering (pid {answering_pid}) left no discovery record; "
            "run `harness daemon restart`"
        ]
    found: list[str] = []
    pid = record["pid"]
    if not pid_alive(pid):
        found.append(
            f"the discovery record names pid {pid}, which is not running "
            "(a daemon that was killed); the next daemon to start replaces it"
        )
    if str(record["socket"]) != str(socket_path):
        found.append(
            f"the discovery record names socket {record['socket']}, but this shell uses "
            f"{socket_path}; check CODING_HARNESS_SOCKET and XDG_RUNTIME_DIR"
        )
    if answering_pid is not None and pid_alive(pid) and answering_pid != pid:
        found.append(
            f"pid {answering_pid} answers on {socket_path}, but the discovery record names "
            f"pid {pid}; run `harness daemon restart`"
        )
    return found
