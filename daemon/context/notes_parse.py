"""Reading the model's turn-close notes: the JSON shape asked for, parsed leniently.

The notes call asks for one object, `{"decisions": [str], "facts": [str],
"todo": [str]}`, through `response_format` where the server takes a JSON
schema (`NOTES_SCHEMA`) and in words where it does not. Whatever comes back is
read as well as it can be: a code fence, prose before or after the object,
an answer cut off at the token cap (the items that arrived whole are kept)
or items that are not strings (left out). Text with no usable item is an
empty `TurnNotes`; nothing here raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

# The lists of the answer, and the `kind` each item is kept under.
KINDS: dict[str, str] = {"decisions": "decision", "facts": "fact", "todo": "todo"}
MAX_ITEMS = 8  # per list: more is not a note, it is a transcript
ITEM_CHARS = 300

NOTES_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        key: {
            "type": "array",
            "items": {"type": "string", "maxLength": ITEM_CHARS},
            "maxItems": MAX_ITEMS,
        }
        for key in KINDS
    },
    "required": list(KINDS),
    "additionalProperties": False,
}

_KEY = re.compile(r'"(decisions|facts|todo)"\s*:\s*\[')
_DECODER = json.JSONDecoder()


@dataclass(kw_only=True, slots=True)
class TurnNotes:
    """The items of one answer, by list name."""

    items: dict[str, list[str]] = field(default_factory=dict)

    def pairs(self) -> list[tuple[str, str]]:
        """(kind, text) for every item, in the order of `KINDS`."""
        return [(KINDS[key], text) for key in KINDS for text in self.items.get(key, [])]

    def __bool__(self) -> bool:
        return any(self.items.values())


def parse_notes(text: str) -> TurnNotes:
    """The notes in a model's answer; empty when none can be read."""
    whole = _whole_object(text)
    if whole is not None:
        return TurnNotes(items={key: _strings(whole.get(key)) for key in KINDS})
    return TurnNotes(items=_scan(text))


def _whole_object(text: str) -> dict[str, Any] | None:
    """The first complete JSON object in `text` that names one of the lists."""
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict) and any(key in value for key in KINDS):
            return value
        start = text.find("{", start + 1)
    return None


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return [item for item in value if isinstance(item, str) and item.strip()][:MAX_ITEMS]


def _scan(text: str) -> dict[str, list[str]]:
    """Each list's whole string items, for text that is not one complete object
    (an answer cut off at the token cap, or broken JSON)."""
    found: dict[str, list[str]] = {}
    for match in _KEY.finditer(text):
        items = found.setdefault(match.group(1), [])
        items.extend(_items_from(text, match.end()))
        del items[MAX_ITEMS:]
    return found


def _items_from(text: str, at: int) -> list[str]:
    """The string items of the array whose `[` ends just before `at`, up to the first
    thing that is not a whole string (the end of the array, or of the text)."""
    items: list[str] = []
    while len(items) < MAX_ITEMS:
        at = _skip_space(text, at)
        if at >= len(text) or text[at] != '"':
            break
        try:
            value, at = _DECODER.raw_decode(text, at)
        except ValueError:
            break
        if isinstance(value, str) and value.strip():
            items.append(value)
        at = _skip_space(text, at)
        if at >= len(text) or text[at] != ",":
            break
        at += 1
    return items


def _skip_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at
