"""`harness sessions`: one line per session the daemon holds."""

from __future__ import annotations

import sys
import time

from coding_harness.protocol import methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

from . import exit_codes


def main(argv: list[str]) -> int:
    if argv:
        print("usage: harness sessions", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    try:
        with connect(paths.socket_path()) as conn:
            conn.initialize("harness-sessions", __version__, approvals=False)
            sessions = conn.request(methods.SESSION_LIST)["sessions"]
    except DaemonUnreachable as exc:
        print(f"harness: cannot reach the daemon: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    if not sessions:
        print("no sessions")
        return exit_codes.OK
    now = time.time()
    print(
        f"{'SESSION':<24} {'STATE':<8} {'CLIENTS':>7} {'ACTIVE':>7} {'TOKENS':>9} {'COST':>9}  CWD"
    )
    for s in sessions:
        usage = s.get("usage") or {}
        tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
        cost = "unknown" if s.get("cost_usd") is None else f"${float(s['cost_usd']):.4f}"
        active = _age(now - float(s["last_activity"]))
        print(
            f"{s['session']:<24} {s['state']:<8} {s['clients']:>7} {active:>7} "
            f"{tokens:>9,} {cost:>9}  {s['cwd']}"
        )
    return exit_codes.OK


def _age(seconds: float) -> str:
    """How long ago, in the largest unit that fits."""
    if seconds < 120:
        return f"{int(seconds)}s"
    if seconds < 7200:
        return f"{int(seconds // 60)}m"
    return f"{int(seconds // 3600)}h"
