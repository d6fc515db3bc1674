"""The write journal: each workspace write is recorded before it starts and when it ends.

Before an edit (or the revert of one) touches a file, an `edit.write` event
with phase "started" names the file, the temporary name its new bytes may
briefly have, and the SHA-256 of its text before and after; when the write is
done or has failed, a second event with the same id says which. The turn's
event sink stores these events at once (`recorder.py`), so after a crash or a
cancel `daemon/turns/interrupted.py` can tell from the disk whether the edit is in
place, and remove a temporary file a crash left behind.

A write runs in a worker thread and is never abandoned half-way: a cancel that
arrives meanwhile waits for it to end, so the journal says how it ended.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from coding_harness.daemon.agent.seams import EventSink, JSONObject
from coding_harness.protocol.methods import EventKind

WRITE_EVENT = EventKind.EDIT_WRITE
STARTED, DONE, FAILED = "started", "done", "failed"

T = TypeVar("T")


@dataclass(kw_only=True, slots=True)
class WriteEntry:
    """One journaled write, as recorded (and as read back after a crash)."""

    id: str
    path: str  # relative to the workspace
    temp: str  # relative name of the temporary file, "" when none
    before: str | None  # SHA-256 of the text before; None: there was no file
    after: str | None  # SHA-256 of the text after; None: the write removes the file
    phase: str = STARTED
    call: str = ""  # the tool call it belongs to, filled in when read back

    def to_wire(self) -> JSONObject:
        return {
            "id": self.id,
            "path": self.path,
            "temp": self.temp,
            "before": self.before,
            "after": self.after,
            "phase": self.phase,
        }


def digest(text: str | bytes | None) -> str | None:
    if text is None:
        return None
    data = text.encode("utf-8") if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


async def journaled(
    events: EventSink,
    rel: str,
    temp: Path,
    texts: tuple[str | None, str | None],
    write: Callable[[], T],
) -> T:
    """Run `write` in a thread between a "started" and a "done" or "failed" record.

    `texts` is the file's text before and after (None: no file)."""
    temp_rel = (Path(rel).parent / temp.name).as_posix() if temp.name else ""
    entry = WriteEntry(
        id=f"w-{secrets.token_hex(4)}",
        path=rel,
        temp=temp_rel,
        before=digest(texts[0]),
        after=digest(texts[1]),
    )
    events.emit(WRITE_EVENT, entry.to_wire())
    task = asyncio.ensure_future(asyncio.to_thread(write))
    try:
        result = await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait([task])  # the thread finishes the write either way
        _end(events, entry, ok=not task.cancelled() and task.exception() is None)
        raise
    except BaseException:
        _end(events, entry, ok=False)
        raise
    _end(events, entry, ok=True)
    return result


def _end(events: EventSink, entry: WriteEntry, *, ok: bool) -> None:
    entry.phase = DONE if ok else FAILED
    events.emit(WRITE_EVENT, {"id": entry.id, "path": entry.path, "phase": entry.phase})
