"""Make untrusted text safe to print on a terminal.

Text from files, models and commands may carry ANSI escapes, carriage returns,
bidi overrides or zero-width characters that would hide or fake lines on the
approval screen. `visible` turns each into a readable escape such as `\\x1b`
or `<U+202E>`, keeping newlines and tabs: for bodies (a reply, a diff, a
notice). `field` is for a value that must stay on its line exactly (a file
name, a turn or session id, a folder): newline and tab become `\\n` and `\\t`
too. `one_line` is for previews (tool arguments, messages): newlines shown as
⏎, cut to a width. `VisibleWriter` does it for everything written to a text
stream, whoever writes it, and `VisibleBytesWriter` for a byte stream (the
daemon's log). Every printer of the client goes through one of these; rich
output goes through `rich_view.VisibleSegments` as well, which escapes what
rendering itself produced (Markdown decodes `&#x202e;` into the character).
"""

from __future__ import annotations

import codecs
import functools
import io
import re

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

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


_FIELD_ESCAPES = {ord("\n"): "\\n", ord("\t"): "\\t"}


def field(text: str) -> str:
    """`visible` text that stays on its line: a newline or tab in it shows as `\\n`, `\\t`."""
    return visible(text).translate(_FIELD_ESCAPES)


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


class VisibleBytesWriter(io.RawIOBase):
    """A byte stream that passes UTF-8 text on made `visible` (bytes that are not
    UTF-8 shown as `\\xNN`); a character cut between two writes is kept whole."""

    def __init__(self, target: BinaryIO) -> None:
        super().__init__()
        self.target = target
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        text = self._decoder.decode(bytes(data))
        self.target.write(visible(text).encode("utf-8"))
        return len(data)

    def flush(self) -> None:
        self.target.flush()
