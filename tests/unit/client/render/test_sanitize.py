"""`visible` escapes every character that could hide or fake text on a terminal, the
same way whether the text is ASCII (str.translate) or not (a pattern)."""

from __future__ import annotations

from coding_harness.client.render.sanitize import one_line, visible

HIDDEN = [
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    *range(0x200B, 0x2010),
    *range(0x2028, 0x202F),
    0x2060,
    *range(0x2066, 0x206A),
    0xFEFF,
]


def _expected(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"<U+{code:04X}>"


def test_each_hidden_character_is_escaped_alone_and_beside_wide_text() -> None:
    for code in HIDDEN:
        char = chr(code)
        assert visible(f"a{char}b") == f"a{_expected(code)}b"
        assert visible(f"é{char}→") == f"é{_expected(code)}→"  # the non-ASCII path


def test_everything_else_passes_unchanged() -> None:
    hidden = set(HIDDEN)
    kept = "".join(chr(code) for code in range(0x3000) if code not in hidden)
    assert "\t" in kept and "\n" in kept
    assert visible(kept) == kept
    ascii_kept = "".join(chr(code) for code in range(0x80) if code not in hidden)
    assert visible(ascii_kept) == ascii_kept


def test_a_faked_line_shows_its_escapes() -> None:
    assert visible("ok\r\x1b[2Kapproved\u202e") == "ok\\x0d\\x1b[2Kapproved<U+202E>"
    assert one_line("one\n  two\x07", 40) == "one ⏎ two\\x07"
