"""`harness attach [ID]`: the REPL on an existing session, its history first.

Without an ID it picks the most recently active session for this folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from coding_harness.client.args import OneShotOptions
from coding_harness.client.session.latest import latest_session_here
from coding_harness.protocol import exit_codes
from coding_harness.protocol.client import DaemonUnreachable

USAGE = "usage: harness attach [SESSION]"


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0].startswith("-")):
        print(USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    try:
        session = argv[0] if argv else latest_session_here()
    except DaemonUnreachable as exc:
        print(f"harness: cannot reach the daemon: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    if session is None:
        print(f"harness: no session for {Path.cwd()}; start one with `harness`", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    from coding_harness.client.repl.repl import run_repl

    return run_repl(OneShotOptions(session=session))
