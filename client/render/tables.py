"""Tables for the REPL's `/context` and `/tokens`, and for `harness sessions`.

Each `*_table` builds a rich `Table` whose cells are `Text` made `visible`,
so a message preview cannot inject markup or escapes; each `render_*` prints
one to a stream (standard output by default), colored only when that stream
is a terminal and NO_COLOR is unset. rich is imported here, so callers on a
lean path import this module only when they print a table.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from coding_harness.client.render.durations import age
from coding_harness.client.render.rich_safe import VisibleSegments
from coding_harness.client.render.sanitize import field, one_line
from coding_harness.client.render.style import is_terminal, no_color_requested

PREVIEW = 60
DAYS = 7


def render_context_table(
    data: Mapping[str, Any], out: TextIO | None = None, *, color: bool | None = None
) -> None:
    """Print `session.context`'s answer: one row per message, then the total."""
    print_table(context_table(data), out, color=color)


def render_tokens_table(
    stats: Mapping[str, Any], out: TextIO | None = None, *, color: bool | None = None
) -> None:
    """Print `stats.get`'s answer: this session, then the last days per provider."""
    print_table(tokens_table(stats), out, color=color)


def print_table(table: Table, out: TextIO | None = None, *, color: bool | None = None) -> None:
    stream = out or sys.stdout
    if color is None:
        color = is_terminal(stream) and not no_color_requested()
    console = Console(
        file=stream,
        force_terminal=True if color else None,
        no_color=not color,
        markup=False,
        emoji=False,
        highlight=False,
    )
    console.print(VisibleSegments(table))


def context_table(data: Mapping[str, Any]) -> Table:
    total, limit = _int(data.get("total_tokens")), data.get("context_limit")
    share = f" of {_int(limit):,} ({total / _int(limit):.0%})" if _int(limit) else ""
    window = data.get("window")
    if isinstance(window, Mapping) and window.get("source"):
        share += f"; window: {one_line(str(window['source']), 80)}"
    table = _table(f"context: {total:,} tokens{share}")
    table.add_column("#", justify="right", no_wrap=True, min_width=3)
    table.add_column("role", no_wrap=True, min_width=9)
    for name in ("tokens", "chars"):
        table.add_column(name, justify="right", no_wrap=True, min_width=7)
    table.add_column("preview", overflow="ellipsis", no_wrap=True, ratio=1)
    _system_rows(table, data)
    for message in data.get("messages") or []:
        table.add_row(
            _cell(message.get("index", "")),
            _cell(message.get("role", ""), _role_style(str(message.get("role", "")))),
            _cell(f"{_int(message.get('tokens')):,}"),
            _cell(f"{_int(message.get('chars')):,}"),
            _cell(one_line(str(message.get("preview") or ""), PREVIEW), "dim"),
        )
    return table


def _system_rows(table: Table, data: Mapping[str, Any]) -> None:
    """The system prompt's parts worth a row: each MCP server's tool schemas, the repo map."""
    for server in data.get("mcp_servers") or []:
        table.add_row(
            _cell("-"),
            _cell(f"mcp {server.get('name', '')}", "dim"),
            _cell(f"{_int(server.get('tokens')):,}"),
            _cell(f"{_int(server.get('chars')):,}"),
            _cell(f"the schemas of {_int(server.get('tools'))} MCP tool(s)", "dim"),
        )
    repo_map = _int(data.get("repo_map_tokens"))
    if repo_map > 0:
        table.add_row(
            _cell("-"),
            _cell("repo map", "dim"),
            _cell(f"{repo_map:,}"),
            _cell("-"),
            _cell("the code index's map; /map shows it", "dim"),
        )


def tokens_table(stats: Mapping[str, Any]) -> Table:
    table = _table("tokens and cost")
    table.add_column("", no_wrap=True, min_width=12)
    table.add_column("provider", no_wrap=True)
    for name in ("prompt", "cached", "output", "total", "cost"):
        table.add_column(name, justify="right", no_wrap=True, min_width=len(name))
    mine = stats.get("session")
    if isinstance(mine, Mapping):
        usage = mine.get("usage") or {}
        table.add_row(*_usage_cells("this session", "", usage, mine.get("cost_usd")), style="bold")
        table.caption = _rates(mine.get("provider"), mine.get("pricing"))
    for row in list(stats.get("daily") or [])[-DAYS:]:
        table.add_row(
            *_usage_cells(row.get("day", ""), row.get("provider", ""), row, row.get("cost_usd"))
        )
    return table


def sessions_table(sessions: Iterable[Mapping[str, Any]], now: float | None = None) -> Table:
    """`harness sessions` at a terminal: the full id, its folder dimmed on the line below."""
    now = time.time() if now is None else now
    sessions = list(sessions)
    table = _table("")
    table.leading = 1
    longest = max((len(str(s.get("session", ""))) for s in sessions), default=8)
    table.add_column("session / folder", overflow="fold", min_width=longest, ratio=1)
    for name in ("state / mode", "clients", "active", "tokens", "cost"):
        right = name != "state / mode"
        table.add_column(name, justify="right" if right else "left", no_wrap=True)
    for s in sessions:
        usage = s.get("usage") or {}
        tokens = _int(usage.get("prompt_tokens")) + _int(usage.get("completion_tokens"))
        state = str(s.get("state", ""))
        where = Text(one_line(str(s.get("session", ""))), style="bold")
        where.append("\n" + one_line(str(s.get("cwd", ""))), style="dim")
        worktree = s.get("worktree")
        if isinstance(worktree, dict) and worktree.get("name"):  # --worktree's session
            where.append(f" (worktree {one_line(str(worktree['name']))})", style="dim")
        table.add_row(
            where,
            _state_and_mode(state, s.get("options")),
            _cell(s.get("clients", 0)),
            _cell(age(now - float(s.get("last_activity") or now))),
            _cell(f"{tokens:,}"),
            _cell(money(s.get("cost_usd"))),
        )
    return table


def _state_and_mode(state: str, options: object) -> Text:
    """The session's state, its permission mode dimmed on the line below."""
    cell = Text(one_line(state), style={"running": "green", "waiting": "yellow"}.get(state, ""))
    mode = options.get("mode") if isinstance(options, dict) else None
    cell.append("\n" + one_line(str(mode or "-")), style="dim")
    return cell


def money(cost: object) -> str:
    """USD with four decimals; a cost too small for them keeps its significant digits."""
    if not isinstance(cost, int | float):
        return "unknown"
    value = float(cost)
    if 0 < abs(value) < 0.0001:  # three significant digits, never rounded to $0.0000
        return f"${value:.{2 - math.floor(math.log10(abs(value)))}f}"
    return f"${value:.4f}"


def _table(title: str) -> Table:
    return Table(
        title=Text(title, style="bold") if title else None,
        box=box.SIMPLE_HEAD,
        title_justify="left",
        header_style="bold",
    )


def _usage_cells(
    label: object, provider: object, usage: Mapping[str, Any], cost: object
) -> list[Text]:
    prompt, cached = _int(usage.get("prompt_tokens")), _int(usage.get("cached_tokens"))
    completion = _int(usage.get("completion_tokens"))
    share = f" ({cached / prompt:.0%})" if prompt and cached else ""
    return [
        _cell(label),
        _cell(provider),
        _cell(f"{prompt:,}"),
        _cell(f"{cached:,}{share}"),
        _cell(f"{completion:,}"),
        _cell(f"{prompt + completion:,}"),
        _cell(money(cost)),
    ]


def _rates(provider: object, pricing: object) -> str | None:
    """The session profile's prices, USD per million tokens, under the table."""
    if not isinstance(pricing, Mapping) or not pricing:
        return f"{field(str(provider))}: no pricing configured" if provider else None
    rates = ", ".join(
        f"{field(str(name))} ${float(value):g}" for name, value in sorted(pricing.items())
    )
    return f"{field(str(provider))} rates per 1M tokens: {rates}"


def _cell(value: object, style: str = "") -> Text:
    return Text(one_line(str(value)), style=style)


def _role_style(role: str) -> str:
    return {"user": "bold", "assistant": "cyan", "tool": "dim", "system": "yellow"}.get(role, "")


def _int(value: object) -> int:
    if isinstance(value, int | float | str):
        try:
            return int(value)
        except (ValueError, OverflowError):  # text, or an infinite float
            return 0
    return 0
