"""`harness sessions --hub [--json]`: every runner's sessions, read from the team's hub.

The daemon asks the hub (`hub.sessions`); this prints one row per session:
the machine (its runner), the person, the folder, the state, the title, the
last activity and the short id. A session whose runner has not been seen for a
while reads `away` (what it was doing is not known now); a closed one,
`closed`. At a terminal the rows form a table (rich, imported only then); into
a pipe, fixed columns with the title last. `--json` prints the answer as it
came. A daemon without a hub, or a hub that cannot be reached, is one line on
standard error (exit 5 and 4, as `harness queue`).
"""

from __future__ import annotations

import sys
from typing import Any

from coding_harness.client.render.durations import age
from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import is_terminal
from coding_harness.protocol import errors, exit_codes, methods
from coding_harness.protocol.client import Connection

HEADERS = ("MACHINE", "PERSON", "FOLDER", "STATE", "TITLE", "ACTIVE", "ID")


def show(conn: Connection, as_json: bool) -> int:
    try:
        answer: dict[str, Any] = conn.request(methods.HUB_SESSIONS, {})
    except errors.RpcError as exc:
        print(f"harness: {exc}", file=sys.stderr)
        data = exc.data if isinstance(exc.data, dict) else {}
        away = data.get("hub") == "unreachable"
        return exit_codes.DAEMON_UNREACHABLE if away else exit_codes.BAD_ARGUMENTS
    if as_json:
        import json

        print(json.dumps(answer, ensure_ascii=False, indent=1))
        return exit_codes.OK
    rows = [cells(s, float(answer.get("now") or 0.0)) for s in answer.get("sessions") or []]
    if not rows:
        print(f"no sessions in hub {field(str(answer.get('hub') or ''))}")
    elif is_terminal(sys.stdout):
        _table(rows)
    else:
        _lines(rows)
    return exit_codes.OK


def state_of(session: dict[str, Any]) -> str:
    if session.get("closed"):
        return "closed"
    if session.get("runner_away"):
        return "away"
    return field(str(session.get("state") or "idle"))


def cells(session: dict[str, Any], now: float) -> tuple[str, ...]:
    active = age(max(0.0, now - float(session.get("last_activity") or now)))
    return (
        field(str(session.get("runner") or "-")),
        field(str(session.get("person") or "-")),
        field(str(session.get("cwd") or "-")),
        state_of(session),
        field(str(session.get("title") or "-")),
        active,
        field(str(session.get("short_id") or session.get("session") or "-")),
    )


def _lines(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in [HEADERS, *rows]) for i in range(len(HEADERS))]
    order = (0, 1, 3, 5, 6, 2, 4)  # the title last: it holds spaces
    for row in [HEADERS, *rows]:
        parts = [row[i].ljust(widths[i]) if i not in (2, 4) else row[i] for i in order]
        print("  ".join(parts).rstrip())


def _table(rows: list[tuple[str, ...]]) -> None:
    from rich import box
    from rich.table import Table

    from coding_harness.client.render.tables import print_table

    table = Table(box=box.SIMPLE_HEAD)
    for header in HEADERS:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*row)
    print_table(table)
