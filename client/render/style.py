"""Output styling without heavy imports: ANSI colors when wanted, else plain.

Color is on only when the stream is a terminal, NO_COLOR is unset and the
user did not pass --plain/--no-color. Everything printed goes through
`visible` first, so escapes from untrusted text never reach the terminal.
"""

from __future__ import annotations

import os
import sys

from coding_harness.client.render.sanitize import visible

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

RESET = "\x1b[0m"
CODES = {
    "red": "\x1b[31m",
    "green": "\x1b[32m",
    "yellow": "\x1b[33m",
    "cyan": "\x1b[36m",
    "dim": "\x1b[2m",
    "bold": "\x1b[1m",
}

# The intent label's color, by route.
INTENT_COLORS = {"coding": "green", "general": "cyan", "hybrid": "yellow"}


def no_color_requested() -> bool:
    """NO_COLOR set to anything but the empty string (https://no-color.org)."""
    return bool(os.environ.get("NO_COLOR"))


def is_terminal(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def color_wanted(stream: TextIO, plain: bool) -> bool:
    if plain or no_color_requested():
        return False
    return is_terminal(stream)


class Style:
    def __init__(self, stream: TextIO | None = None, *, color: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.color = color

    def paint(self, text: str, style: str) -> str:
        safe = visible(text)
        if not self.color or style not in CODES:
            return safe
        return f"{CODES[style]}{safe}{RESET}"

    def line(self, text: str, style: str = "") -> None:
        self.stream.write(self.paint(text, style) + "\n")
        self.stream.flush()

    def diff(self, text: str, path: str = "") -> None:
        """A unified diff with line numbers: headers cyan, added green, removed red."""
        from coding_harness.client.render.diff_lines import numbered_lines

        for line, style in numbered_lines(text, path):
            self.stream.write(self.paint(line, style) + "\n")
        self.stream.flush()
