"""`json_text` gives what `json` gives: the same text for every value, the same value
for every text, and a ValueError (or TypeError) wherever `json` raises one."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from coding_harness.protocol import json_text


def _reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _text(rng: random.Random) -> str:
    pool = 'aZ09 "\\/\n\t\x00\x1f\x7f é€😀\u2028\u202e\ufeff'
    return "".join(rng.choice(pool) for _ in range(rng.randint(0, 12)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randint(0, 8 if depth < 4 else 5)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, -1, 2**63, -(10**30), rng.randint(-1000, 1000)])
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e308, 5e-324, 0.1, -2.5e-7, rng.uniform(-1e6, 1e6)])
    if kind in (4, 5):
        return _text(rng)
    if kind in (6, 7):
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_random_values_encode_and_decode_as_json_does() -> None:
    rng = random.Random(20261201)
    for _ in range(3000):
        value = _value(rng)
        text = json_text.dumps(value)
        assert text == _reference(value)
        assert json_text.loads(text) == json.loads(text)
        assert json_text.loads(text.encode("utf-8")) == json.loads(text)
        spaced = json.dumps(value, indent=1)  # whitespace between tokens
        assert json_text.loads(f" \n{spaced}\t\r ") == json.loads(spaced)


@pytest.mark.parametrize(
    "text",
    ["", " ", "x", "[1,]", '{"a" 1}', "nul", '"\x01"', "[1", '{"a":1} x', "1 2", "'a'", "\ufeff1"],
)
def test_what_json_refuses_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        json_text.loads(text)


def test_invalid_utf8_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        json_text.loads(b'{"a": "\xff"}')


def test_constants_read_as_json_reads_them() -> None:
    value = json_text.loads("[NaN, Infinity, -Infinity, 1.5]")
    assert value[0] != value[0] and value[1:] == [float("inf"), float("-inf"), 1.5]


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (float("nan"), ValueError),
        ([float("inf")], ValueError),
        (object(), TypeError),
        ({(1,): 2}, TypeError),
        ({1: 2, None: 3, 2.5: 4, False: 5}, None),  # keys json turns into text
    ],
)
def test_what_json_cannot_write_is_refused_the_same_way(value: Any, error: type | None) -> None:
    if error is None:
        assert json_text.dumps(value) == _reference(value)
        return
    with pytest.raises(error):
        _reference(value)
    with pytest.raises(error):
        json_text.dumps(value)


def test_a_container_holding_itself_is_refused() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        json_text.dumps(loop)


def test_nesting_too_deep_fails_as_json_fails() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(RecursionError):
        json_text.loads(deep)


def test_without_the_accelerator_json_does_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(json_text, "_scan", None)
    assert json_text.loads(' {"a": [1, "é"]} ') == {"a": [1, "é"]}
    with pytest.raises(ValueError):
        json_text.loads("[1,]")


@pytest.mark.parametrize("text", ["", "  ", '{"a": 1} x', "[1,]", '{"a":\n  tru}'])
def test_a_refusal_is_worded_as_json_words_it(text: str) -> None:
    with pytest.raises(ValueError) as expected:
        json.loads(text)
    with pytest.raises(ValueError) as got:
        json_text.loads(text)
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize(
    "raw",
    [
        b'\xef\xbb\xbf{"a": 1}',  # a UTF-8 BOM
        '{"a": "é"}'.encode("utf-16"),
        '{"a": "é"}'.encode("utf-32-le"),
        b'{"a": "\xed\xa0\x80"}',  # a surrogate, which json lets through
        b'{"a": "\xff"}',
    ],
)
def test_bytes_read_as_json_reads_them(raw: bytes) -> None:
    try:
        expected = json.loads(raw)
    except ValueError:
        with pytest.raises(ValueError):
            json_text.loads(raw)
        return
    assert json_text.loads(raw) == expected
