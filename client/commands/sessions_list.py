"""`harness sessions [--watch] [--json]`: the sessions the daemon holds.

At a terminal they form the live table (`sessions_table.py`, rich imported only
then: short id, title, folder, state, activity, tokens, cost); `--watch` redraws
it every second until Ctrl-C. Into a pipe, one line per session in fixed columns
that scripts can split on whitespace, with the full session id first and each
session's permission mode (MODE) after its state, and its title (the first
task) last. `--json` prints `session.list`'s answer as it came (`{"sessions":
[...]}`; each row's `state` is running, waiting, queued, idle or failed). `--hub`
lists every runner's sessions from the team's hub (`sessions_hub.py`). `rm` and
`prune` remove sessions (`sessions_remove.py`). Every value is a `field`: a
folder name holding a newline or an escape stays on its row, escaped.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from coding_harness.client.render.durations import age
from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import is_terminal
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("rm", "prune"):
        from coding_harness.client.commands import sessions_remove

        run = sessions_remove.remove_main if argv[0] == "rm" else sessions_remove.prune_main
        return run(argv[1:])
    flags = set(argv)
    hub = "--hub" in flags
    if (
        not flags <= {"--watch", "--json", "--hub"}
        or len(flags - {"--hub"}) > 1
        or (hub and "--watch" in flags)
    ):
        print(
            "usage: harness sessions [--watch | --json | --hub [--json] | rm ID..."
            " | prune --older DAYS]",
            file=sys.stderr,
        )
        return exit_codes.BAD_ARGUMENTS
    try:
        with connect_or_start(paths.socket_path()) as conn:  # started when it is gone
            hello = conn.initialize("harness-sessions", __version__, approvals=False, notices=True)
            if hello.get("notice"):
                print(f"harnessd: {field(str(hello['notice']))}", file=sys.stderr)
            if hub:
                from coding_harness.client.commands import sessions_hub

                return sessions_hub.show(conn, "--json" in flags)
            return _show(conn, "--watch" in flags, "--json" in flags)
    except DaemonUnreachable as exc:
        print(f"harness: cannot reach the daemon: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE


def _show(conn: Connection, watching: bool, as_json: bool) -> int:
    def read() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = conn.request(methods.SESSION_LIST)["sessions"]
        return rows

    if as_json:
        import json

        print(json.dumps({"sessions": read()}, ensure_ascii=False, indent=1))
        return exit_codes.OK
    terminal = is_terminal(sys.stdout)
    if watching:
        from coding_harness.client.commands.sessions_table import watch
        from coding_harness.client.render.style import no_color_requested

        return watch(read, _print_lines, terminal=terminal, color=not no_color_requested())
    sessions = read()
    if not sessions:
        print("no sessions")
    elif terminal:
        from coding_harness.client.commands.sessions_table import live_table
        from coding_harness.client.render.tables import print_table

        print_table(live_table(sessions))
    else:
        _print_lines(sessions)
    return exit_codes.OK


def _print_lines(sessions: list[dict[str, Any]]) -> None:
    now = time.time()
    print(
        f"{'SESSION':<24} {'STATE':<8} {'MODE':<12} {'CLIENTS':>7} {'ACTIVE':>7} {'TOKENS':>9} "
        f"{'COST':>9}  CWD  TITLE"
    )
    for s in sessions:
        usage = s.get("usage") or {}
        tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
        cost = "unknown" if s.get("cost_usd") is None else f"${float(s['cost_usd']):.4f}"
        active = age(now - float(s["last_activity"]))
        print(
            f"{field(str(s['session'])):<24} {field(str(s['state'])):<8} {mode_of(s):<12} "
            f"{field(str(s['clients'])):>7} {active:>7} {tokens:>9,} {cost:>9}  "
            f"{folder_of(s)}  {field(str(s.get('title') or '-'))}"
        )


def folder_of(session: dict[str, Any]) -> str:
    """The session's folder, and the worktree's name when it works in one."""
    worktree = session.get("worktree")
    name = worktree.get("name") if isinstance(worktree, dict) else None
    folder = field(str(session["cwd"]))
    return f"{folder} (worktree {field(str(name))})" if name else folder


def mode_of(session: dict[str, Any]) -> str:
    """The session's permission mode in its row (`-` from a daemon that has none)."""
    options = session.get("options")
    mode = options.get("mode") if isinstance(options, dict) else None
    return field(str(mode)) if mode else "-"
