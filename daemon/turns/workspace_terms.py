"""What a request may name of the workspace: its files, folders and known symbols.

The router (`intent.py`) sends a request that names something of the workspace
to the tool loop, whatever other words it holds ("who is calling div with
zero?", "news: did anything change in calc today?"). The names are the
workspace's visible, not ignored files (a stat-only walk of at most
`MAX_FILES`, `index/walk.py`): each path, file name, stem and folder; and the
symbols the code index defines, waited for as long as a turn waits for its map.

A word in the request counts when it is one of those names, compared without
case. A plain English word that a codebase also happens to define (`get`,
`time`, `name`, `add`) is too common to mean the code by itself: `COMMON_WORDS`
are skipped unless typed the way code is (`add()`, `` `add` ``); a word shaped
like code (`parse_config`, `InvoiceItem`, `src/app`) always counts.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from coding_harness.daemon.index.hub import IndexHub
from coding_harness.daemon.index.session_map import REFRESH_WAIT
from coding_harness.daemon.index.walk import walk_workspace

MAX_FILES = 5_000
MIN_CHARS = 3
_TOKEN = re.compile(r"`?[A-Za-z_$][\w$]*(?:[./-][A-Za-z_$][\w$]*)*`?(?:\(\))?")
_CODE_SHAPED = re.compile(r"[_$]|[a-z][A-Z]|[A-Z]{2,}[a-z]|[./]")
COMMON_WORDS = frozenset(
    {
        "about", "above", "add", "after", "again", "against", "all", "also", "and", "any", "app",
        "are", "area", "back", "base", "because", "been", "before", "being", "best", "between",
        "big", "book", "both", "but", "buy", "call", "can", "car", "case", "change", "check",
        "city", "clear", "close", "code", "come", "could", "count", "country", "cup", "date", "day",
        "days", "did", "does", "doing", "done", "down", "each", "end", "error", "even", "event",
        "every", "far", "few", "file", "find", "first", "food", "for", "free", "from", "full",
        "game", "get", "give", "good", "great", "group", "had", "has", "have", "help", "her",
        "here", "him", "his", "home", "hot", "how", "into", "its", "just", "keep", "kind", "know",
        "last", "left", "less", "let", "life", "like", "line", "list", "little", "live", "long",
        "look", "made", "main", "make", "many", "map", "may", "mean", "more", "most", "much",
        "must", "name", "near", "need", "new", "news", "next", "not", "now", "number", "off", "old",
        "once", "one", "only", "open", "order", "other", "our", "out", "over", "own", "page",
        "part", "people", "place", "play", "point", "power", "price", "put", "read", "real",
        "right", "round", "run", "same", "save", "say", "score", "search", "see", "send", "set",
        "she", "should", "show", "side", "size", "some", "start", "state", "still", "stop", "such",
        "sum", "sure", "system", "take", "tell", "test", "text", "than", "that", "the", "their",
        "them", "then", "there", "these", "they", "thing", "things", "think", "this", "those",
        "time", "today", "too", "top", "total", "trip", "try", "turn", "two", "type", "under",
        "until", "update", "use", "used", "user", "value", "very", "want", "war", "was", "way",
        "weather", "week", "well", "were", "what", "when", "where", "which", "while", "who", "why",
        "will", "with", "word", "work", "world", "would", "write", "year", "years", "you", "your",
        "zero",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class WorkspaceTerms:
    """The names of one workspace, lowercased."""

    names: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, paths: Iterable[str], symbols: Iterable[str] = ()) -> WorkspaceTerms:
        names: set[str] = {symbol.lower() for symbol in symbols}
        for path in paths:
            pure = PurePosixPath(path)
            names.update(part.lower() for part in pure.parts)
            names.update((path.lower(), pure.stem.lower(), pure.with_suffix("").as_posix().lower()))
        return cls(frozenset(name for name in names if len(name) >= MIN_CHARS))

    def mention(self, text: str) -> str | None:
        """The first word of `text` that names something of the workspace, if any."""
        for found in _TOKEN.finditer(text):
            token = found.group()
            marked = token.startswith("`") or token.endswith("()")
            word = token.strip("`").removesuffix("()")
            for candidate in (word, *re.split(r"[./-]", word)):
                if self._names(candidate, marked or bool(_CODE_SHAPED.search(word))):
                    return candidate
        return None

    def _names(self, word: str, code_shaped: bool) -> bool:
        lowered = word.lower()
        if len(lowered) < MIN_CHARS or lowered not in self.names:
            return False
        return code_shaped or lowered not in COMMON_WORDS


async def workspace_terms(index: IndexHub | None, root: Path) -> WorkspaceTerms:
    """The workspace's names: its files now, and the symbols of its code index as soon
    as it is current (waited for `REFRESH_WAIT` at most, then as it is)."""
    walk = asyncio.ensure_future(asyncio.to_thread(walk_workspace, root, max_files=MAX_FILES))
    symbols: Iterable[str] = ()
    try:
        if index is not None:
            try:
                current = await asyncio.wait_for(index.current(root), REFRESH_WAIT)
            except TimeoutError:
                current = index.index_of(root)
            if current is not None:
                with current.data_lock:
                    symbols = list(current.defined)
    finally:
        listed = await walk
    return WorkspaceTerms.of((found.path for found in listed.files), symbols)
