"""Make untrusted text safe to print on a terminal.

Text from files, models and commands may carry ANSI escapes, carriage returns,
bidi overrides or zero-width characters that would hide or fake lines on the
approval screen. `visible` turns each into a readable escape such as `\\x1b`
or `<U+202E>`, keeping newlines and tabs. `one_line` does the same for text
that must fit on one line (tool arguments, previews); `VisibleWriter` for
everything written to a stream, whoever writes it.
"""

from __future__ import annotations

import functools
import io
import re

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

# Zero-width characters, line/paragraph separators, bidi embeddings,
# overrides and isolates, word joiner, BOM.
_BIDI_AND_INVISIBLE = (
    *range(0x200B, 0x2010),
    *range(0x2028, 0x202F),
    0x2060,
    *range(0x2066, 0x206A),
    0xFEFF,
)
# C0 controls but tab and newline, DEL and the C1 controls: each as `\x..`.
_CONTROLS = (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))
# ASCII text goes through str.translate, which is fast there; other text through a
# pattern compiled at its first use (compiling costs ~1 ms, which a one-shot run whose
# output is ASCII never pays; translate is slow on non-ASCII text).
_ESCAPES = {code: f"\\x{code:02x}" for code in _CONTROLS}


def visible(text: str) -> str:
    if text.isascii():
        return text.translate(_ESCAPES)
    return _unsafe().sub(_escape, text)


@functools.cache
def _unsafe() -> re.Pattern[str]:
    wide = "".join(f"\\u{code:04x}" for code in _BIDI_AND_INVISIBLE)
    return re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{wide}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def one_line(text: str, limit: int = 0) -> str:
    """`visible` text on one line (newlines shown as ⏎), cut to `limit` characters with …"""
    flat = visible(re.sub(r"\s*\n\s*", " ⏎ ", text.strip())).replace("\t", " ")
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
