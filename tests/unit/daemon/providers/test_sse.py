"""SSEDecoder fed plain strings (and bytes) split at every awkward place."""

from __future__ import annotations

from coding_harness.daemon.providers.sse import SSEDecoder, SSEEvent

# Every kind of line the decoder must understand, with all three line endings.
SAMPLE = (
    "\ufeff: a comment before anything\r\n"
    "data: first\r\n"
    "\r\n"
    "event: error\n"
    "data:no-space\n"
    "data:  two spaces\n"
    "id: 7\n"
    "retry: 1000\n"
    "unknown: field\n"
    "\n"
    "data: one\rdata: two\r\r"
    "event: ping\n"
    "\n"
    "data\n"
    "\n"
    'data: {"x": "é €"}\r\n'
    "\r\n"
    "data: never finished\n"
)
EXPECTED = [
    SSEEvent(event="message", data="first"),
    SSEEvent(event="error", data="no-space\n two spaces"),
    SSEEvent(event="message", data="one\ntwo"),
    SSEEvent(event="message", data=""),
    SSEEvent(event="message", data='{"x": "é €"}'),
]


def decode(*pieces: str) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    events.extend(decoder.close())
    return events


def decode_bytes(*pieces: bytes) -> list[SSEEvent]:
    decoder = SSEDecoder()
    events: list[SSEEvent] = []
    for piece in pieces:
        events.extend(decoder.feed_bytes(piece))
    events.extend(decoder.close())
    return events


def test_whole_sample() -> None:
    assert decode(SAMPLE) == EXPECTED


def test_every_split_point() -> None:
    for cut in range(len(SAMPLE) + 1):
        assert decode(SAMPLE[:cut], SAMPLE[cut:]) == EXPECTED, cut


def test_every_pair_of_split_points() -> None:
    for first in range(len(SAMPLE)):
        for second in range(first, len(SAMPLE), 7):
            pieces = (SAMPLE[:first], SAMPLE[first:second], SAMPLE[second:])
            assert decode(*pieces) == EXPECTED, pieces


def test_one_character_at_a_time() -> None:
    assert decode(*SAMPLE) == EXPECTED


def test_every_byte_split_point() -> None:
    raw = SAMPLE.encode()
    for cut in range(len(raw) + 1):
        assert decode_bytes(raw[:cut], raw[cut:]) == EXPECTED, cut


def test_one_byte_at_a_time_keeps_multibyte_characters() -> None:
    raw = SAMPLE.encode()
    assert decode_bytes(*(raw[i : i + 1] for i in range(len(raw)))) == EXPECTED


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    decoder = SSEDecoder()
    assert decoder.feed("data: a\r") == []
    assert decoder.feed("\n") == []
    assert decoder.feed("data: b\r") == []
    assert decoder.feed("\n\r") == [SSEEvent(event="message", data="a\nb")]
    assert decoder.feed("\ndata: c\n\n") == [SSEEvent(event="message", data="c")]


def test_lone_cr_lines_end_events() -> None:
    assert decode("data: a\r\rdata: b\r\r") == [
        SSEEvent(event="message", data="a"),
        SSEEvent(event="message", data="b"),
    ]


def test_bom_is_stripped_only_at_the_start() -> None:
    assert decode("\ufeffdata: x\n\n") == [SSEEvent(event="message", data="x")]
    # A BOM later on is part of the field name, which is then unknown.
    assert decode("data: x\n\n\ufeffdata: y\n\n") == [SSEEvent(event="message", data="x")]


def test_bom_split_across_byte_chunks() -> None:
    assert decode_bytes(b"\xef\xbb", b"\xbfdata: x\n\n") == [SSEEvent(event="message", data="x")]


def test_comments_and_keepalives_produce_nothing() -> None:
    assert decode(": OPENROUTER PROCESSING\n\n: ping\n\n:\n\n") == []


def test_data_without_space_and_one_space_removed() -> None:
    assert decode("data:x\n\ndata: x\n\ndata:  x\n\n") == [
        SSEEvent(event="message", data="x"),
        SSEEvent(event="message", data="x"),
        SSEEvent(event="message", data=" x"),
    ]


def test_multi_line_data_is_joined_with_newlines() -> None:
    assert decode('data: {\ndata:   "a": 1\ndata: }\n\n') == [
        SSEEvent(event="message", data='{\n  "a": 1\n}')
    ]


def test_event_name_is_kept_and_reset_after_dispatch() -> None:
    assert decode("event: error\ndata: {}\n\ndata: next\n\n") == [
        SSEEvent(event="error", data="{}"),
        SSEEvent(event="message", data="next"),
    ]


def test_event_without_data_is_not_dispatched() -> None:
    assert decode("event: ping\n\ndata: x\n\n") == [SSEEvent(event="message", data="x")]


def test_unterminated_last_event_is_discarded() -> None:
    assert decode("data: a\n\ndata: cut off") == [SSEEvent(event="message", data="a")]
    assert decode("data: a\n\ndata: cut off\n") == [SSEEvent(event="message", data="a")]


def test_close_returns_nothing_and_forgets_the_partial_event() -> None:
    decoder = SSEDecoder()
    assert decoder.feed("data: partial\n") == []
    assert decoder.close() == []


def test_line_without_colon_is_a_field_with_empty_value() -> None:
    assert decode("data\ndata\n\n") == [SSEEvent(event="message", data="\n")]


def test_field_names_are_case_sensitive_and_leading_space_is_not_stripped() -> None:
    assert decode("Data: x\n\n data: y\n\n") == []


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert decode_bytes(b"data: \xff\n\n") == [SSEEvent(event="message", data="\ufffd")]
