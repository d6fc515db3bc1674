"""Unified diffs of a whole file's old and new text, as `git diff` would show them."""

from __future__ import annotations

import difflib

NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(old: str, new: str, rel_path: str) -> str:
    """A unified diff labelled `a/<path>` and `b/<path>`; empty when nothing changed."""
    lines = difflib.unified_diff(
        _lines(old),
        _lines(new),
        fromfile=f"a/{rel_path}",
        tofile=f"b/{rel_path}",
    )
    out: list[str] = []
    for line in lines:
        if line.endswith("\n"):
            out.append(line)
        else:  # the last line of a text without a final newline
            out.extend((line, "\n", NO_NEWLINE))
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines split at `\\n` only (not at form feeds and the like), ends kept."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines
