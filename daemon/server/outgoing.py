"""Nothing the daemon sends exceeds its limits: events are cut or split, answers capped.

Sizes, as docs/protocol.md documents them:

- `EVENT_LIMIT` (1 MiB): one `event` notification. A `text.delta` or
  `reasoning.delta` longer than that goes out as several events, nothing lost;
  in any other event the longest strings are cut, each ending with a note
  that says so, and `data.cut` names them (`{field: {chars, shown}}`).
- `PAGE_LIMIT` (4 MiB): one page of `session.history` (see `history_pages`).
- the message limit (16 MiB by default): any answer. One that would be larger
  is replaced by a `-32000` error naming its size; a batch loses its largest
  answers first.

The full texts stay in the session's history, in memory and in the store.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

from coding_harness.protocol import errors
from coding_harness.protocol.framing import encode
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

MIB = 1024 * 1024
EVENT_LIMIT = 1 * MIB
PAGE_LIMIT = 4 * MIB
# A character takes at most 6 bytes in JSON (`\u001f`), so a piece this long fits an event.
DELTA_PIECE_CHARS = EVENT_LIMIT // 8
DELTA_KINDS = frozenset({EventKind.TEXT_DELTA, EventKind.REASONING_DELTA})
# Room kept for the note that ends a cut string.
_NOTE_ROOM = 240

JSONObject = dict[str, Any]
Path = tuple[str | int, ...]
# (field label, characters kept, characters in all) -> the note appended to a cut string
Note = Callable[[str, int, int], str]


def encode_safely(message: Any) -> bytes:
    """Encode, escaping lone surrogates a client may have sent us."""
    try:
        return encode(message)
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":")).encode("ascii") + b"\n"


def delta_pieces(text: str) -> list[str]:
    """A delta's text in pieces that each fit one event."""
    return [text[i : i + DELTA_PIECE_CHARS] for i in range(0, len(text), DELTA_PIECE_CHARS)]


def history_note(where: str) -> Note:
    """The note for a string whose whole text is in the session's history."""

    def note(label: str, kept: int, total: int) -> str:
        return f"\n[cut here: {kept:,} of {total:,} characters shown; {where}]"

    return note


HISTORY_NOTE = history_note("the whole text is in the session's history (session.history)")


def cut_strings(value: Any, excess: int, note: Note = HISTORY_NOTE) -> tuple[Any, JSONObject]:
    """A copy of `value` at least `excess` bytes smaller once encoded, longest strings cut
    first, and what was cut: `{label: {chars, shown}}`. The copy may still be too large
    when there is not enough text to cut; callers check."""
    cut_value = copy.deepcopy(value)
    cuts: JSONObject = {}
    for path, text in sorted(_strings(value), key=lambda item: len(item[1]), reverse=True):
        if excess <= 0 or len(text) <= _NOTE_ROOM:
            break
        label = ".".join(str(part) for part in path) or "value"
        kept = max(0, len(text) - excess - _NOTE_ROOM)
        shown = text[:kept] + note(label, kept, len(text))
        cut_value = _replace(cut_value, path, shown)
        # Each character removed was at least one byte; the note's are one byte each.
        excess -= len(text) - len(shown)
        cuts[label] = {"chars": len(text), "shown": kept}
    return cut_value, cuts


def fit_event(data: JSONObject, size: int, note: Note = HISTORY_NOTE) -> JSONObject:
    """`data` of an event whose notification encodes to `size` bytes, cut to fit
    `EVENT_LIMIT`; the caller encodes again (and calls again while it is too large)."""
    cut, cuts = cut_strings(data, size - EVENT_LIMIT, note)
    if not isinstance(cut, dict) or not cuts:
        return {"cut": {"event": {"bytes": size}}, "message": "this event was too large to send"}
    found = data.get("cut")
    earlier: JSONObject = found if isinstance(found, dict) else {}
    for label, record in cuts.items():  # cut again: the first count of characters holds
        if isinstance(earlier.get(label), dict) and "chars" in earlier[label]:
            record["chars"] = earlier[label]["chars"]
    cut["cut"] = {**earlier, **cuts}
    return cut


def fit_response(message: Any, limit: int) -> bytes | None:
    """`message` encoded, or if that is over `limit` the errors that take its place;
    None for a notification that cannot be made to fit (it is logged and dropped)."""
    data = encode_safely(message)
    if len(data) <= limit:
        return data
    if isinstance(message, dict) and "id" in message:
        return encode_safely(_too_large(message["id"], len(data), limit))
    if isinstance(message, list):
        return _fit_batch(message, limit)
    log.error("dropped a %d-byte notification over the %d-byte limit", len(data), limit)
    return None


def _fit_batch(answers: list[Any], limit: int) -> bytes:
    sizes = [len(encode_safely(answer)) for answer in answers]
    total = sum(sizes) + len(answers) + 1
    fitted = list(answers)
    for index in sorted(range(len(answers)), key=lambda i: sizes[i], reverse=True):
        if total <= limit:
            break
        answer = answers[index]
        if isinstance(answer, dict) and "result" in answer:
            fitted[index] = _too_large(answer.get("id"), sizes[index], limit)
            total -= sizes[index] - len(encode_safely(fitted[index]))
    return encode_safely(fitted)


def _too_large(request_id: Any, size: int, limit: int) -> JSONObject:
    exc = errors.MessageTooLarge(
        f"the answer is {size:,} bytes, over the {limit:,}-byte limit on what the daemon "
        "sends; ask for less (session.history takes offset and limit)"
    )
    return {"jsonrpc": "2.0", "error": exc.to_wire(), "id": request_id}


def _strings(value: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, (*path, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))


def _replace(value: Any, path: Path, new: str) -> Any:
    if not path:
        return new
    container = value
    for part in path[:-1]:
        container = container[part]
    container[path[-1]] = new
    return value
