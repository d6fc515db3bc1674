"""`harness mcp list [--json]` and `harness mcp restart NAME`: the daemon's MCP servers.

Both send the real current folder as `cwd`, so the servers this folder's config
files name show (`stopped`) before any session has started them. `list` prints
the table of `render/mcp_servers.py` on standard output (colored at a terminal
unless NO_COLOR); `--json` prints `mcp.list`'s answer as it came, for scripts.
Under the table, each server that lists tools it does not offer (past the cap
of tools per server, a schema too large) gets lines naming them, by reason.
`restart` stops the server if it runs, starts it and prints its new state once
the daemon has it. Exit codes: 0 listed, or ready after the restart; 1 the
server failed to start (or the daemon refused the request); 4 no daemon; 5 bad
arguments or a name no config file gives. Imported only for `harness mcp`: the
one-shot path never loads it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from typing import Any, TextIO

from coding_harness.client.render.mcp_servers import NONE_CONFIGURED, server_line, table_lines
from coding_harness.client.render.sanitize import one_line
from coding_harness.client.render.style import Style, color_wanted, is_terminal
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import __version__

# A restart answers once the server is ready or has failed; the daemon bounds that.
RESTART_TIMEOUT = 180.0
NAMES_WIDTH = 100  # characters of left-out tool names shown per reason


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="harness mcp",
        description="The MCP servers the daemon keeps for every session (docs/mcp.md).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="list|restart")
    listing = actions.add_parser("list", help="each server: state, pid, tools, start, error")
    listing.add_argument("--json", action="store_true", help="print mcp.list's answer as JSON")
    restart = actions.add_parser("restart", help="stop the server NAME and start it again")
    restart.add_argument("name", metavar="NAME", help="the server's name in the config")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    err = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    try:
        cwd = os.path.realpath(os.getcwd())  # noqa: PTH109 - the daemon takes a str
    except FileNotFoundError:
        err.line("harness mcp: the current folder no longer exists; cd to an existing one", "red")
        return exit_codes.BAD_ARGUMENTS
    try:
        with connect_or_start(paths.socket_path()) as conn:
            conn.initialize("harness-mcp", __version__, approvals=False)
            if options.action == "list":
                listing = conn.request(methods.MCP_LIST, {"cwd": cwd})
                return show_list(listing, sys.stdout, as_json=options.json)
            params = {"name": options.name, "cwd": cwd}
            answer = conn.request(methods.MCP_RESTART, params, timeout=RESTART_TIMEOUT)
            return show_restart(answer.get("server") or {}, sys.stdout)
    except DaemonUnreachable as exc:
        err.line(f"harness: cannot reach the daemon: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        err.line(f"harness mcp: {refusal(exc)}", "red")
        invalid = exc.code == errors.InvalidParams.code
        return exit_codes.BAD_ARGUMENTS if invalid else exit_codes.MODEL_ERROR


def refusal(exc: errors.RpcError) -> str:
    """The daemon's refusal in a line; an older daemon's missing method names the fix."""
    if exc.code == errors.MethodNotFound.code:
        return "this daemon has no MCP support; restart it: harness daemon restart"
    return exc.message


def show_list(listing: dict[str, Any], out: TextIO, *, as_json: bool = False) -> int:
    servers = [s for s in listing.get("servers") or [] if isinstance(s, dict)]
    if as_json:
        out.write(json.dumps({"servers": servers}, ensure_ascii=False, indent=1) + "\n")
        return exit_codes.OK
    print_servers(servers, out)
    return exit_codes.OK


def print_servers(servers: list[dict[str, Any]], out: TextIO, *, plain: bool = False) -> None:
    """The table, cut to the terminal's width at one; whole into a pipe."""
    style = Style(out, color=color_wanted(out, plain))
    if not servers:
        style.line(NONE_CONFIGURED, "dim")
        return
    width = shutil.get_terminal_size().columns if is_terminal(out) else None
    for line in table_lines(servers, style, width=width):
        out.write(line + "\n")
    for server in servers:
        for number, line in enumerate(dropped_lines(server)):
            out.write((style.paint(line, "yellow") if number == 0 else line) + "\n")
    out.flush()


def dropped_lines(server: dict[str, Any]) -> list[str]:
    """`NAME: 3746 listed tools are not offered:`, then a line per reason with the
    names it covers (those `mcp.list` names; the rest counted)."""
    dropped = [d for d in server.get("dropped") or [] if isinstance(d, dict)]
    count = server.get("dropped_count")
    count = count if isinstance(count, int) and count >= len(dropped) else len(dropped)
    if not dropped:
        return []
    name = one_line(str(server.get("name", "?")))
    lines = [f"{name}: {count} listed tool{'' if count == 1 else 's'} not offered:"]
    reasons: dict[str, list[str]] = {}
    for entry in dropped:
        reasons.setdefault(one_line(str(entry.get("reason", "?"))), []).append(
            one_line(str(entry.get("tool", "?")), 60)
        )
    for reason, tools in reasons.items():
        lines.append(f"  {_names(tools)}: {reason}")
    if count > len(dropped):
        lines.append(f"  and {count - len(dropped)} more not named")
    return lines


def _names(tools: list[str]) -> str:
    """The names that fit in `NAMES_WIDTH` (at least one), then how many more."""
    shown = tools[0]
    for index, tool in enumerate(tools[1:], start=1):
        if len(shown) + len(tool) + 2 > NAMES_WIDTH:
            return f"{shown}, ... ({len(tools) - index} more)"
        shown = f"{shown}, {tool}"
    return shown


def show_restart(server: dict[str, Any], out: TextIO) -> int:
    text, color = server_line(server)
    Style(out, color=color_wanted(out, False)).line(text, color)
    return exit_codes.OK if server.get("state") == "ready" else exit_codes.MODEL_ERROR
