"""`harness worktree [list] | diff ID | merge ID | rm ID [--force]`: the git worktrees
sessions made with `--worktree`.

ID is a worktree's name, or its session's id, short id or a unique prefix.
`list` shows each worktree's state (clean, changed, missing: its folder deleted
by hand), session, branch, the branch it came from, its changes and folder;
`--json` prints the daemon's answer. `diff` prints what the session changed
against where its branch left the base, on standard output. `merge` commits
what the session left in its worktree and merges the branch into the one it
came from; a conflict is reported with its files and changes nothing. `rm`
removes the folder and the branch, and refuses while they hold work not merged
(--force drops it). Exit codes: 0 done, 1 a conflict, a refusal or a git
failure, 4 no daemon, 5 bad arguments or an unknown ID. The REPL's `/worktree`
runs the same (`repl/worktree_command.py`).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from coding_harness.client.commands.worktree_lines import (
    print_diff,
    print_list,
    print_merge,
    print_remove,
)
from coding_harness.client.render.style import Style, color_wanted
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

# git may take a while on a large repository; the daemon bounds each command.
GIT_TIMEOUT = 600.0
USAGE = "worktree [list] | diff ID | merge ID | rm ID [--force]"


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="harness worktree",
        description="The git worktrees of sessions started with --worktree (docs/terminal.md).",
    )
    actions = parser.add_subparsers(dest="action", metavar="list|diff|merge|rm")
    listing = actions.add_parser("list", help="each worktree: state, session, branch, changes")
    listing.add_argument("--json", action="store_true", help="print worktree.list's answer")
    for name, text in (
        ("diff", "what the session changed, against the branch it came from"),
        ("merge", "merge it into the branch it came from (a conflict changes nothing)"),
        ("rm", "remove the folder and the branch (refused with unmerged work)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("id", metavar="ID", help="the worktree's name or its session's id")
        if name == "rm":
            action.add_argument("--force", action="store_true", help="drop unmerged work too")
    options = parser.parse_args(argv)
    if options.action is None:
        options.action, options.json = "list", False
    return options


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    err = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    try:
        with connect_or_start(paths.socket_path()) as conn:
            conn.initialize("harness-worktree", __version__, approvals=False)
            if options.action == "list" and options.json:
                answer = conn.request(methods.WORKTREE_LIST, {}, timeout=GIT_TIMEOUT)
                print(json.dumps(answer, ensure_ascii=False, indent=1))
                return exit_codes.OK
            return run(conn, options.action, getattr(options, "id", ""), options, err)
    except DaemonUnreachable as exc:
        err.line(f"harness: cannot reach the daemon: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        err.line(f"harness worktree: {refusal(exc)}", "red")
        invalid = exc.code == errors.InvalidParams.code
        return exit_codes.BAD_ARGUMENTS if invalid else exit_codes.MODEL_ERROR


def run(conn: Connection, action: str, wanted: str, options: Any, err: Style) -> int:
    """One action over `conn`; its exit code. Shared with the REPL's `/worktree`."""
    out = sys.stdout
    if action == "list":
        answer = conn.request(methods.WORKTREE_LIST, {}, timeout=GIT_TIMEOUT)
        return print_list(answer, out, Style(out, color=color_wanted(out, False)), err)
    params: dict[str, Any] = {"worktree": wanted}
    if action == "diff":
        answer = conn.request(methods.WORKTREE_DIFF, params, timeout=GIT_TIMEOUT)
        return print_diff(answer, out, Style(sys.stderr, color=color_wanted(out, False)))
    if action == "merge":
        answer = conn.request(methods.WORKTREE_MERGE, params, timeout=GIT_TIMEOUT)
        return print_merge(answer, err)
    params["force"] = bool(getattr(options, "force", False))
    answer = conn.request(methods.WORKTREE_REMOVE, params, timeout=GIT_TIMEOUT)
    return print_remove(answer, err)


def refusal(exc: errors.RpcError) -> str:
    """The daemon's refusal in a line; an older daemon's missing method names the fix."""
    if exc.code == errors.MethodNotFound.code:
        return "this daemon has no worktrees yet; restart it: harness daemon restart"
    return exc.message
