"""JSON for the one-shot's path, through the C functions `json` itself uses.

Importing `json` costs a one-shot about 2 ms: `json.decoder`, `json.scanner`
and `json.encoder` are three modules that compile six regular expressions,
none of which the work here needs. `_json`'s scanner and encoder are what
`json.loads` and `json.dumps` call for this work, so the results are the
same: `loads` is `json.loads(text)` and `dumps` is `json.dumps(value,
ensure_ascii=False, separators=(",", ":"), allow_nan=False)`, errors included
(`json` is imported to word a refusal). Where `_json` is missing (another
Python), `json` does the work.
"""

from __future__ import annotations

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_BLANK = " \t\n\r"  # the whitespace JSON allows between tokens


class _Reading:
    """What the C scanner reads from its context: `json.JSONDecoder()`'s defaults."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None  # read from Python 3.15 on
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


def _scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        import _json

        # The scanner reads its context's attributes (typeshed asks for a scanner there).
        return _json.make_scanner(_Reading())  # type: ignore[arg-type]
    except (ImportError, AttributeError, TypeError):
        return None


_scan = _scanner()


def loads(text: str | bytes) -> Any:
    """The value `text` holds (bytes must be UTF-8); ValueError when it is not JSON."""
    if isinstance(text, bytes | bytearray):
        raw = bytes(text)
        if raw[:1] in (b"\xef", b"\xfe", b"\xff") or b"\x00" in raw[:4]:
            return _json_loads(raw)  # a BOM, or UTF-16/32: json tells which
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return _json_loads(raw)  # json's answer (it lets surrogates through)
    if _scan is None:
        return _json_loads(text)
    start = len(text) - len(text.lstrip(_BLANK))
    try:
        value, end = _scan(text, start)
    except StopIteration:  # no value where one must start
        return _refused(text)
    if text[end:].strip(_BLANK):  # more after the value
        return _refused(text)
    return value


def _refused(text: str) -> Any:
    """Raise json's own error for `text`, naming its line and column."""
    return _json_loads(text)


def _json_loads(text: str | bytes) -> Any:
    import json

    return json.loads(text)


def dumps(value: Any) -> str:
    """Compact JSON (no spaces, non-ASCII kept); ValueError for NaN or infinity, and
    for a container that holds itself; TypeError for what JSON cannot hold."""
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:
        import json

        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # As json.dumps builds it: circular references checked, unknown types refused.
    encode = make_encoder(
        {}, _not_serializable, encode_basestring, None, ":", ",", False, False, False
    )
    return "".join(encode(value, 0))


def _not_serializable(value: object) -> object:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
