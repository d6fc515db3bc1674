"""Make untrusted text safe to print on a terminal.

Text from files, models and commands may carry ANSI escapes, carriage returns,
bidi overrides or zero-width characters that would hide or fake lines on the
approval screen. `visible` turns each into a readable escape such as `\\x1b`
or `<U+202E>`, keeping newlines and tabs. `one_line` does the same for text
that must fit on one line (tool arguments, previews); `VisibleWriter` for
everything written to a stream, whoever writes it.
"""

from __future__ import annotations

import io
import re

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

# Zero-width characters, line/paragraph separators, bidi embeddings,
# overrides and isolates, word joiner, BOM.
_BIDI_AND_INVISIBLE = "\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_AND_INVISIBLE}]")
_NEWLINES = re.compile(r"\s*\n\s*")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def visible(text: str) -> str:
    return _UNSAFE.sub(_escape, text)


def one_line(text: str, limit: int = 0) -> str:
    """`visible` text on one line (newlines shown as ⏎), cut to `limit` characters with …"""
    flat = visible(_NEWLINES.sub(" ⏎ ", text.strip())).replace("\t", " ")
    if limit and len(flat) > limit:
        return flat[: max(limit - 1, 0)] + "…"
    return flat


class VisibleWriter(io.TextIOBase):
    """A stream that passes text on made `visible`, and says it is no terminal
    (so rich, writing to it, adds no escapes of its own)."""

    def __init__(self, target: TextIO) -> None:
        super().__init__()
        self.target = target

    def write(self, text: str) -> int:
        self.target.write(visible(text))
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def isatty(self) -> bool:
        return False
