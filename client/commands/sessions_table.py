"""`harness sessions` at a terminal: the live table, and `--watch`, which redraws it.

One row per session: its short id, title, folder, what it is doing, its last
activity, tokens and cost. The state says what the session waits for:
`waiting: edit calc.py` (an approval, answered with `harness approve ID`),
`queued: 2 ahead` (its request waits for the model, `max_parallel`),
`running`, `done`, `failed (exit 2)`, `cancelled`, `idle` (no turn yet).
`--watch` asks the daemon again every WATCH_SECONDS and redraws in place
(rich's `Live`); off a terminal it prints the plain lines each time, a blank
line between. Ctrl-C leaves (exit 0). Every value is made a `field` or
`one_line`, so a folder name holding an escape cannot reach the terminal raw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from coding_harness.client.render.durations import age
from coding_harness.client.render.rich_safe import VisibleSegments
from coding_harness.client.render.sanitize import field, one_line
from coding_harness.client.render.tables import money
from coding_harness.protocol import exit_codes

WATCH_SECONDS = 1.0
TITLE_CHARS = 40
STATE_STYLES = {"running": "green", "waiting": "yellow", "queued": "cyan", "failed": "red"}


def state_words(row: Mapping[str, Any]) -> str:
    """What the session is doing, in the words of the table (see the module's docstring)."""
    state = str(row.get("state") or "idle")
    if state == "waiting":
        asked = row.get("waiting_for") or {}
        what = asked.get("path") or asked.get("summary") if isinstance(asked, dict) else ""
        kind = asked.get("kind") if isinstance(asked, dict) else None
        return f"waiting: {field(str(kind or 'approval'))} {field(str(what or ''))}".rstrip()
    if state == "queued":
        queue = row.get("model_queue") or {}
        ahead = queue.get("ahead") if isinstance(queue, dict) else None
        return f"queued: {ahead} ahead" if isinstance(ahead, int) else "queued"
    last = row.get("last_turn")
    if state in ("idle", "failed") and isinstance(last, dict):
        code = last.get("exit_code")
        if code == exit_codes.OK:
            return "done"
        if code == exit_codes.INTERRUPTED:
            return "cancelled"
        return f"failed (exit {field(str(code))})"
    return field(state)


def folder_of(row: Mapping[str, Any]) -> str:
    """The session's folder (its worktree, when it works in one)."""
    return field(str(row.get("worktree") or row.get("cwd") or ""))


def tokens_of(row: Mapping[str, Any]) -> int:
    usage = row.get("usage") or {}
    total = 0
    for key in ("prompt_tokens", "completion_tokens"):
        value = usage.get(key) if isinstance(usage, dict) else None
        total += value if isinstance(value, int) else 0
    return total


def live_table(rows: Iterable[Mapping[str, Any]], now: float | None = None) -> Table:
    now = time.time() if now is None else now
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", expand=False)
    table.add_column("id", no_wrap=True, style="bold")
    table.add_column("title", overflow="ellipsis", max_width=TITLE_CHARS)
    table.add_column("folder", overflow="fold", style="dim")
    table.add_column("state", no_wrap=True)
    for name in ("active", "tokens", "cost"):
        table.add_column(name, justify="right", no_wrap=True)
    for row in rows:
        state = str(row.get("state") or "")
        title = one_line(str(row.get("title") or row.get("short_id") or "-"), TITLE_CHARS)
        table.add_row(
            one_line(str(row.get("short_id") or row.get("session") or "")),
            title,
            folder_of(row),
            Text(state_words(row), style=STATE_STYLES.get(state, "")),
            age(now - float(row.get("last_activity") or now)),
            f"{tokens_of(row):,}",
            money(row.get("cost_usd")),
        )
    return table


def print_live(rows: list[dict[str, Any]], console: Console) -> None:
    console.print(VisibleSegments(live_table(rows)))


def watch(
    read: Callable[[], list[dict[str, Any]]],
    show_plain: Callable[[list[dict[str, Any]]], None],
    *,
    terminal: bool,
    color: bool,
) -> int:
    """Redraw the table until Ctrl-C (or the daemon goes: its error is raised)."""
    try:
        if not terminal:
            while True:
                show_plain(read())
                print(flush=True)
                time.sleep(WATCH_SECONDS)
        from rich.live import Live

        console = Console(no_color=not color, markup=False, emoji=False, highlight=False)
        with Live(console=console, auto_refresh=False, transient=False) as live:
            while True:
                rows = read()
                shown = VisibleSegments(live_table(rows)) if rows else Text("no sessions")
                live.update(shown, refresh=True)
                time.sleep(WATCH_SECONDS)
    except KeyboardInterrupt:
        return exit_codes.OK
