"""Newline framing: splits, joins, CRLF, blank lines and the size limit."""

from __future__ import annotations

import json

import pytest

from coding_harness.protocol.framing import LineDecoder, Oversized, encode


def test_two_messages_in_one_chunk_and_one_split_in_three() -> None:
    decoder = LineDecoder(1024)
    assert decoder.feed(b'{"a":1}\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']
    text = '{"c":"é"}\n'.encode()
    split = text.index(b"\xc3") + 1  # inside the two-byte character
    assert decoder.feed(text[:3]) == []
    assert decoder.feed(text[3:split]) == []
    assert decoder.feed(text[split:]) == [b'{"c":"\xc3\xa9"}']


def test_crlf_and_blank_lines() -> None:
    decoder = LineDecoder(1024)
    assert decoder.feed(b'{"a":1}\r\n\n\r\n{"b":2}\n') == [b'{"a":1}', b'{"b":2}']


def test_oversized_line_reported_once_then_discarded() -> None:
    decoder = LineDecoder(10)
    out = decoder.feed(b"x" * 8)
    out += decoder.feed(b"x" * 8)
    out += decoder.feed(b"x" * 100 + b'\n{"ok":1}\n')
    assert len([o for o in out if isinstance(o, Oversized)]) == 1
    assert out[-1] == b'{"ok":1}'
    assert decoder.pending == 0


def test_pending_counts_unfinished_bytes() -> None:
    decoder = LineDecoder(100)
    decoder.feed(b'{"a":')
    assert decoder.pending == 5


def test_encode_is_one_line_and_refuses_nan() -> None:
    line = encode({"text": "a\nb"})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"text": "a\nb"}
    with pytest.raises(ValueError):
        encode({"x": float("nan")})
