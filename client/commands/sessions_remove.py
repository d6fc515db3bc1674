"""`harness sessions rm ID...` and `harness sessions prune --older DAYS`.

`rm` removes the sessions named (full id, short id, or a prefix that fits one);
one that runs a turn or waits for an approval is refused, with why (exit 5 when
any is not removed). `prune` removes every idle session nobody used for DAYS
days (`30`, `30d`; `12h` for hours), and the closed ones the store still holds:
every one-shot run makes a session, and they add up.
"""

from __future__ import annotations

import sys
from typing import Any

from coding_harness.client.render.sanitize import field, one_line
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import __version__

RM_USAGE = "usage: harness sessions rm ID [ID ...]"
PRUNE_USAGE = "usage: harness sessions prune --older DAYS (30, 30d, or 12h for hours)"
UNITS = {"d": 1.0, "h": 1 / 24}


def older_days(text: str) -> float | None:
    """`30`, `30d` or `12h` as days; None for anything else."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in UNITS else (text, "d")
    try:
        value = float(number)
    except ValueError:
        return None
    return value * UNITS[unit] if value >= 0 and value == value else None


def remove_main(argv: list[str]) -> int:
    if not argv or any(arg.startswith("-") for arg in argv):
        print(RM_USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    answer = _ask(methods.SESSION_REMOVE, {"sessions": argv})
    if isinstance(answer, int):
        return answer
    for session in answer.get("removed") or []:
        print(f"removed {field(str(session))}")
    refused = answer.get("refused") or []
    for entry in refused:
        said = f"{field(str(entry.get('session')))}: {one_line(str(entry.get('reason')), 200)}"
        print(f"harness: not removed {said}", file=sys.stderr)
    return exit_codes.BAD_ARGUMENTS if refused else exit_codes.OK


def prune_main(argv: list[str]) -> int:
    value = argv[1] if len(argv) == 2 and argv[0] == "--older" else None
    if value is None and len(argv) == 1 and argv[0].startswith("--older="):
        value = argv[0].removeprefix("--older=")
    days = older_days(value) if value else None
    if days is None:
        print(PRUNE_USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    answer = _ask(methods.SESSION_PRUNE, {"days": days})
    if isinstance(answer, int):
        return answer
    removed = len(answer.get("removed") or [])
    closed = int(answer.get("closed_removed") or 0)
    also = f" (and {closed} closed one{'s' * (closed != 1)})" if closed else ""
    noun = "session" if removed == 1 else "sessions"
    print(f"removed {removed} idle {noun} unused for more than {value}{also}")
    return exit_codes.OK


def _ask(method: str, params: dict[str, Any]) -> dict[str, Any] | int:
    """The daemon's answer (the daemon is started when none runs), or an exit code."""
    from coding_harness.client.session.launcher import connect_or_start

    try:
        with connect_or_start(paths.socket_path()) as conn:
            conn.initialize("harness-sessions", __version__, approvals=False)
            answer: dict[str, Any] = conn.request(method, params)
            return answer
    except DaemonUnreachable as exc:
        print(f"harness: cannot reach the daemon: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        print(f"harness: {one_line(exc.message, 300)}", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
