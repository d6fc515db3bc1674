"""Keeping a project's notes tidy: what a note may hold, duplicates, the caps, the prompt.

Notes come from the model (hostile) or from a person (`/memory add`). Before
one is kept it is cleaned: control and format characters (escape sequences,
bidirectional overrides, zero-width characters) go, whitespace is folded to
single spaces, the session's secrets are redacted, and it is cut to
`NOTE_CHARS`. Two notes whose normalised text (case and punctuation aside)
is the same are one note. A project keeps at most `MAX_NOTES`, the oldest
leaving first. `prompt_lines` picks the newest that fit the system prompt's
budget (`agent/prompts.py` frames them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

NOTE_KINDS = ("decision", "fact", "todo")
NOTE_CHARS = 300
MAX_NOTES = 40
PROMPT_TOKENS = 400
CHARS_PER_TOKEN = 4  # the rough rule the spending estimate uses too

Redact = Callable[[str], str]


@dataclass(kw_only=True, slots=True, frozen=True)
class Note:
    id: int
    kind: str
    text: str
    at: float

    def to_wire(self) -> dict[str, object]:
        return {"id": self.id, "kind": self.kind, "text": self.text, "at": self.at}


def clean_note(text: str, redact: Redact | None = None) -> str:
    """`text` fit to keep: one line of printable text, secrets redacted, capped;
    "" when nothing is left."""
    kept = "".join(ch if _printable(ch) else " " for ch in text)
    kept = " ".join(kept.split())
    if redact is not None:
        kept = " ".join(redact(kept).split())
    if len(kept) > NOTE_CHARS:
        cut = kept[: NOTE_CHARS - 1]
        kept = (cut.rsplit(" ", 1)[0] if " " in cut[NOTE_CHARS // 2 :] else cut) + "…"
    return kept


def _printable(ch: str) -> bool:
    category = unicodedata.category(ch)
    return not (category.startswith("C") or category in ("Zl", "Zp"))


_PUNCTUATION = re.compile(r"[^\w\s]")


def normalised(text: str) -> str:
    """What two notes must share to be the same note: words, case and punctuation aside."""
    return " ".join(_PUNCTUATION.sub(" ", text.casefold()).split())


def kind_of(value: object) -> str:
    """A note kind; anything else is a fact."""
    return value if isinstance(value, str) and value in NOTE_KINDS else "fact"


def fresh(
    candidates: Iterable[tuple[str, str]], kept: Iterable[str], redact: Redact | None = None
) -> list[tuple[str, str, str]]:
    """(kind, text, normalised text) of the candidates worth adding: cleaned, not empty,
    not the same as a kept note (given by normalised text) or an earlier candidate."""
    seen = set(kept)
    added: list[tuple[str, str, str]] = []
    for kind, text in candidates:
        clean = clean_note(text, redact)
        key = normalised(clean)
        if not key or key in seen:
            continue
        seen.add(key)
        added.append((kind_of(kind), clean, key))
    return added


def prompt_lines(notes: list[Note], budget_tokens: int = PROMPT_TOKENS) -> list[str]:
    """The newest notes, one line each, as many as fit `budget_tokens` (estimated)."""
    budget = budget_tokens * CHARS_PER_TOKEN
    lines: list[str] = []
    for note in sorted(notes, key=lambda n: (n.at, n.id), reverse=True):
        line = f"- [{note.kind}] {note.text}"
        if len(line) + 1 > budget:
            break
        budget -= len(line) + 1
        lines.append(line)
    return lines
