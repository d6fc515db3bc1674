"""A session's past exchanges in a few lines: what was asked, what was answered.

`harness attach` and the REPL's `/history` both show it; it lives apart from
both so neither imports the other.
"""

from __future__ import annotations

from typing import Any

from coding_harness.client.render.sanitize import field, one_line
from coding_harness.client.render.style import Style


def print_history(messages: list[dict[str, Any]], style: Style, limit: int = 20) -> None:
    """The last exchanges of a session: what was asked, what was answered, tools dimmed."""
    shown = messages[-limit:]
    if len(messages) > limit:
        style.line(f"({len(messages) - limit} earlier messages not shown)", "dim")
    for message in shown:
        role, content = message.get("role"), message.get("content") or ""
        if role == "user":
            style.line(f"> {content}", "bold")
        elif role == "assistant" and content:
            style.line(str(content))
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            name = field(str(function.get("name", "?")))
            style.line(f"* {name} {one_line(str(function.get('arguments', '')), 80)}", "dim")
