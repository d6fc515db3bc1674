"""How `harness queue` prints tasks: the table of `list`, the header of `show`.

One row per task: id, state, person, repo@ref, runner, attempt, age, and the
branch (a finished task) or the error (a failed one). Every field a hub member
wrote is shown through `sanitize.field`, so no control character reaches the
terminal.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.sanitize import field, one_line

HEADERS = ("ID", "STATE", "PERSON", "REPO@REF", "RUNNER", "TRY", "AGE", "BRANCH / ERROR")
REPO_CHARS = 48
NOTE_CHARS = 60


def age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f}s"
    if seconds < 3600:
        return f"{seconds / 60:.0f}m"
    if seconds < 86400:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def _note(row: dict[str, Any]) -> str:
    state = row.get("state")
    error = row.get("error")
    branch = row.get("branch")
    if state == "running" and row.get("cancel_requested"):
        return "cancel asked"
    if error and state != "done":
        return one_line(str(error), NOTE_CHARS)
    if branch:
        pushed = " (pushed)" if row.get("pushed") else ""
        return f"{branch}{pushed}" + (f"; {one_line(str(error), NOTE_CHARS)}" if error else "")
    return ""


def cells(row: dict[str, Any], now: float) -> tuple[str, ...]:
    where = _short(f"{row.get('repo')}@{row.get('ref')}", REPO_CHARS)
    return (
        str(row.get("id")),
        str(row.get("state")),
        field(str(row.get("person") or "")),
        field(where),
        field(str(row.get("runner") or "-")),
        str(row.get("attempt") or 0),
        age(now - float(row.get("created_at") or now)),
        field(_note(row)),
    )


def table(rows: list[dict[str, Any]], now: float) -> list[str]:
    """The lines of the table, the header first, columns padded to their widest."""
    lines = [HEADERS, *(cells(row, now) for row in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(HEADERS) - 1)]
    return [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False))
        + "  "
        + line[-1]
        for line in lines
    ]


def details(row: dict[str, Any], now: float) -> list[str]:
    """`harness queue show`'s header: every column but the patch, one per line."""
    shown = dict(zip(HEADERS[:-1], cells(row, now)[:-1], strict=True))
    lines = [f"{name.lower()}: {value}" for name, value in shown.items()]
    for key in ("branch", "pushed", "exit_code", "error", "session_id"):
        if row.get(key) is not None:
            lines.append(f"{key}: {field(one_line(str(row[key])))}")
    lines.append("task: " + field(one_line(str(row.get("text") or ""), 200)))
    return lines
