"""Make untrusted text safe to print on a terminal.

Text from files, models and commands may carry ANSI escapes, carriage returns,
bidi overrides or zero-width characters that would hide or fake lines on the
approval screen. `visible` turns each into a readable escape such as `\\x1b`
or `<U+202E>`, keeping newlines and tabs.
"""

from __future__ import annotations

import re

# Zero-width characters, line/paragraph separators, bidi embeddings,
# overrides and isolates, word joiner, BOM.
_BIDI_AND_INVISIBLE = "\u200b-\u200f\u2028-\u202e\u2060\u2066-\u2069\ufeff"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI_AND_INVISIBLE}]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def visible(text: str) -> str:
    return _UNSAFE.sub(_escape, text)
