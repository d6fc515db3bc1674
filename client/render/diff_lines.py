"""A unified diff as numbered, classified lines, ready to color.

Every line of the diff is kept (a long diff is announced, never cut) and made
`visible`, so escapes, carriage returns and bidi controls in the changed text
cannot hide or fake lines on the approval screen. Each changed or context line
gets a gutter with its old and new line numbers, read from the hunk headers.
Standard library only: the plain one-shot path renders diffs too.
"""

from __future__ import annotations

import re

from coding_harness.client.render.sanitize import field, visible

# A diff longer than this many lines is framed by a header and a footer that
# give its length, so the end of the screen is never mistaken for its end.
LONG_DIFF = 60

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")

# Style names, shared by the ANSI `Style` and the rich renderer.
HEADER, HUNK, ADDED, REMOVED, CONTEXT, NOTE = "cyan", "cyan", "green", "red", "", "dim"


def numbered_lines(diff: str, path: str = "") -> list[tuple[str, str]]:
    """(text, style) for every line of `diff`, with an `old new` line-number gutter."""
    # Split at "\n" only: `splitlines` would also split at "\r", "\x0b", "\x1c" or
    # U+2028, turning text inside one changed line into lines of its own.
    raw = diff.split("\n")
    if raw and not raw[-1]:
        raw.pop()
    width = max(3, len(str(_largest_line_number(raw))))
    rows: list[tuple[str, str]] = []
    old = new = 0
    for line in raw:
        hunk = _HUNK.match(line)
        if hunk:
            old, new = int(hunk.group(1)), int(hunk.group(2))
            rows.append((visible(line), HUNK))
        elif line.startswith(("--- ", "+++ ")) or line in ("---", "+++"):
            rows.append((visible(line), HEADER))
        elif line.startswith("+"):
            rows.append((_gutter(None, new, width) + visible(line), ADDED))
            new += 1
        elif line.startswith("-"):
            rows.append((_gutter(old, None, width) + visible(line), REMOVED))
            old += 1
        elif line.startswith("\\"):
            rows.append((_gutter(None, None, width) + visible(line), NOTE))
        else:
            rows.append((_gutter(old, new, width) + visible(line), CONTEXT))
            old, new = old + 1, new + 1
    return _framed(rows, len(raw), path)


def _gutter(old: int | None, new: int | None, width: int) -> str:
    left = str(old) if old is not None else ""
    right = str(new) if new is not None else ""
    return f"{left:>{width}} {right:>{width}} "


def _largest_line_number(lines: list[str]) -> int:
    largest = 0
    for line in lines:
        hunk = _HUNK.match(line)
        if hunk:
            largest = max(largest, int(hunk.group(1)), int(hunk.group(2)))
    return largest + len(lines)


def _framed(rows: list[tuple[str, str]], count: int, path: str) -> list[tuple[str, str]]:
    if count <= LONG_DIFF:
        return rows
    name = f" of {field(path)}" if path else ""
    added = sum(1 for _, style in rows if style == ADDED)
    removed = sum(1 for _, style in rows if style == REMOVED)
    head = f"── diff{name}: {count:,} lines (+{added:,} -{removed:,}), shown in full ──"
    foot = f"── end of the diff{name} ({count:,} lines) ──"
    return [(head, "bold"), *rows, (foot, "bold")]
