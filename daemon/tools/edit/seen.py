"""What the model has seen of each file in a session: the base write_file is checked against.

propose_edit proves the model knows a file by repeating its text as `old`;
write_file sends only the new text, so the proof is kept here instead. Each
full read_file of a file and each write an edit tool applies records the
file's text (trailing whitespace aside, as the stale-base check compares it);
a revert forgets it, since the model was not shown what came back. For a
file that exists, `SeenTexts.base` then says whether the model saw it as it
is now ("same"), saw an older text ("changed": a stale base), or never read
it in this session ("unseen": the write is asked, even under -y).

The record belongs to the session. A tool context is built per turn, so it is
kept alongside the one per-session object the context carries, the approver,
and lives exactly as long as that does; a daemon restart starts it empty,
which only makes writes ask more often. When the conversation that showed the
texts is gone (a reset, a compaction), `forget_session` drops the record.
"""

from __future__ import annotations

import hashlib
import weakref
from typing import Literal

from coding_harness.daemon.tools.context import ToolContext

Base = Literal["same", "changed", "unseen"]


class SeenTexts:
    """The fingerprint of the text the model last saw of each path (workspace-relative)."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def note(self, rel: str, text: str) -> None:
        self._texts[rel] = _fingerprint(text)

    def forget(self, rel: str) -> None:
        self._texts.pop(rel, None)

    def base(self, rel: str, current: str) -> Base:
        """How what the model last saw of `rel` compares with its `current` text."""
        seen = self._texts.get(rel)
        if seen is None:
            return "unseen"
        return "same" if seen == _fingerprint(current) else "changed"


_BY_SESSION: weakref.WeakKeyDictionary[object, SeenTexts] = weakref.WeakKeyDictionary()


def seen_texts(ctx: ToolContext) -> SeenTexts:
    """The session's record; a fresh, unkept one when the approver cannot carry it."""
    try:
        return _BY_SESSION.setdefault(ctx.approver, SeenTexts())
    except TypeError:  # an approver without weak references (slots): nothing is kept
        return SeenTexts()


def forget_session(approver: object) -> None:
    """Forget all the session has seen (its history was reset or compacted away)."""
    _BY_SESSION.pop(approver, None)


def _fingerprint(text: str) -> str:
    return hashlib.sha256(text.rstrip().encode("utf-8", "surrogatepass")).hexdigest()
