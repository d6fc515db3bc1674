"""How MCP servers read on a terminal: the table of `harness mcp list` and `/mcp`,
the line `harness mcp restart` prints, and the line of an `mcp.state` event.

The table has fixed columns, NAME STATE PID TOOLS STARTED ERROR, one row per
server of `mcp.list`'s answer (docs/protocol.md). TOOLS is the count, then the
tools' own names as many as fit in `TOOLS_WIDTH`; STARTED how long ago the
server last became ready; ERROR comes last, whole into a pipe, cut to the
terminal's width at one. STATE is colored only when the `Style` is (a terminal,
NO_COLOR unset). Names, tools and errors come from the servers: every cell is
made one visible line first. Standard library only, so the one-shot printer
may use `state_line`.
"""

from __future__ import annotations

import time

from coding_harness.client.render.durations import age
from coding_harness.client.render.sanitize import one_line
from coding_harness.client.render.style import Style

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

HEADERS = ("NAME", "STATE", "PID", "TOOLS", "STARTED", "ERROR")
STATE_COLORS = {"ready": "green", "starting": "yellow", "failed": "red", "stopped": "dim"}
TOOLS_WIDTH = 40
ERROR_WIDTH = 300  # an error line kept for an event or a restart's answer
NONE_CONFIGURED = (
    "no MCP servers configured: add them under mcp_servers in ~/.coding_harness.json (docs/mcp.md)"
)


def tools_cell(tools: object, width: int = TOOLS_WIDTH) -> str:
    """`3: get_time, convert_time, ...`: the count, then the names that fit in `width`."""
    names = [one_line(str(name)) for name in tools] if isinstance(tools, list) else []
    cell = str(len(names))
    for index, name in enumerate(names):
        more = ", ..." if index < len(names) - 1 else ""
        joined = f"{cell}{': ' if index == 0 else ', '}{name}"
        if len(joined + more) > width:
            return cell + (": ..." if index == 0 else ", ...")
        cell = joined
    return cell


def started_cell(started_at: object, now: float) -> str:
    if not isinstance(started_at, int | float) or isinstance(started_at, bool):
        return "-"
    return age(max(now - float(started_at), 0.0)) + " ago"


def row(server: Mapping[str, Any], now: float) -> list[str]:
    pid = server.get("pid")
    return [
        one_line(str(server.get("name", "?"))),
        one_line(str(server.get("state", "?"))),
        str(pid) if isinstance(pid, int) and not isinstance(pid, bool) else "-",
        tools_cell(server.get("tools")),
        started_cell(server.get("started_at"), now),
        one_line(str(server.get("error") or "-")),
    ]


def table_lines(
    servers: Sequence[Mapping[str, Any]],
    style: Style,
    *,
    width: int | None = None,
    now: float | None = None,
) -> list[str]:
    """The header and a row per server, aligned; cut to `width` when one is given."""
    now = time.time() if now is None else now
    rows = [row(server, now) for server in servers]
    widths = [max(len(cells[i]) for cells in [list(HEADERS), *rows]) for i in range(5)]
    lines = [_joined(list(HEADERS), widths, style, width, header=True)]
    lines.extend(_joined(cells, widths, style, width) for cells in rows)
    return lines


def _joined(
    cells: list[str], widths: list[int], style: Style, width: int | None, header: bool = False
) -> str:
    padded = [cell.ljust(widths[i]) for i, cell in enumerate(cells[:5])]
    room = None if width is None else width - sum(widths) - 2 * len(padded)
    error = cells[5] if room is None or len(cells[5]) <= room else one_line(cells[5], max(room, 1))
    if header:
        return style.paint("  ".join([*padded, error]), "bold")
    padded[1] = style.paint(padded[1], STATE_COLORS.get(cells[1], ""))
    if cells[1] == "failed":
        error = style.paint(error, "red")
    return "  ".join([*padded, error])


def server_line(server: Mapping[str, Any]) -> tuple[str, str]:
    """One server in one line, and its color: `time: ready (pid 41, 2 tools)`."""
    name, state = one_line(str(server.get("name", "?"))), str(server.get("state", "?"))
    if state == "failed":
        return f"{name}: failed: {_error(server.get('error'))}", "red"
    details = []
    if isinstance(server.get("pid"), int):
        details.append(f"pid {server['pid']}")
    tools = server.get("tools")
    if isinstance(tools, list):
        details.append(f"{len(tools)} tool{'' if len(tools) == 1 else 's'}")
    shown = f"{name}: {one_line(state)}" + (f" ({', '.join(details)})" if details else "")
    return shown, STATE_COLORS.get(state, "")


def state_line(data: Mapping[str, Any]) -> tuple[str, str]:
    """An `mcp.state` event's line and color: `mcp: time ready`, `mcp: time failed: ...`."""
    name, state = one_line(str(data.get("name", "?"))), str(data.get("state", "?"))
    if state == "failed":
        return f"mcp: {name} failed: {_error(data.get('error'))}", "red"
    return f"mcp: {name} {one_line(state)}", "dim"


def _error(error: object) -> str:
    return one_line(str(error), ERROR_WIDTH) if error else "no reason given"
