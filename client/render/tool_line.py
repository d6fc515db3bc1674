"""One short line describing a tool call, e.g. `read_file calc.py`.

The first argument is shown bare, the others as `key=value`; long or
multi-line strings (the old and new text of an edit) only by their length.
Arguments arrive as raw JSON text cut at 4,000 characters, so text that no
longer parses still yields its `path` when it has one.
"""

from __future__ import annotations

import json
import re

from coding_harness.client.render.sanitize import one_line

WIDTH = 100
SHORT_VALUE = 60
_PATH = re.compile(r'"path"\s*:\s*"((?:[^"\\]|\\.)*)"')


def tool_line(name: str, arguments: str, width: int = WIDTH) -> str:
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        summary = " ".join(
            _argument(key, value, first=i == 0) for i, (key, value) in enumerate(parsed.items())
        )
    else:
        found = _PATH.search(arguments)
        summary = f"{found.group(1)} (arguments cut)" if found else arguments
    return "• " + one_line(f"{name} {summary}".rstrip(), width)


def _argument(key: str, value: object, *, first: bool) -> str:
    if isinstance(value, str):
        if len(value) > SHORT_VALUE or "\n" in value:
            return f"{key}=<{len(value):,} chars>"
        shown = f"'{value}'" if " " in value or not value else value
    else:
        shown = json.dumps(value, ensure_ascii=False)
        if len(shown) > SHORT_VALUE:
            shown = shown[: SHORT_VALUE - 1] + "…"
    return shown if first else f"{key}={shown}"
