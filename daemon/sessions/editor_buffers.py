"""A session's editor buffers: read_file asks the attached editor before the disk.

A client that announced `capabilities.read_text_file` in `initialize` (an
editor, through `harness acp`) may hold unsaved text for a file. `EditorBuffers`
is the tools' `BufferSource` for one session: it asks the most recently
attached such client with `client.read_text_file` and gives up after
`ASK_TIMEOUT` seconds. No such client, an error, no answer in time, or an
answer without string content all mean "read the disk" (None).

An edit to a file that editor holds with unsaved changes is written back to
it (`write_text`, `client.write_text_file`) when it also announced
`capabilities.write_text_file` (`can_write`); a failed or unanswered write is
an `OSError`, so the edit gate says it was not written.
"""

from __future__ import annotations

import logging
from pathlib import Path

from coding_harness.daemon.server.asks import AskFailed
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol.methods import CLIENT_READ_TEXT_FILE, CLIENT_WRITE_TEXT_FILE

log = logging.getLogger(__name__)

# Seconds an editor has to answer before read_file reads the disk instead.
ASK_TIMEOUT = 2.0
# Seconds an editor has to take a write (it may save the file to disk first).
WRITE_TIMEOUT = 10.0


class EditorBuffers:
    """The buffers of the editor attached to `session`, looked up at each read."""

    def __init__(self, session: Session, timeout: float = ASK_TIMEOUT) -> None:
        self._session = session
        self._timeout = timeout

    def editor(self) -> Connection | None:
        """The most recently attached client that reads buffers, if any is attached."""
        editors = [
            conn
            for conn in self._session.subscribers.values()
            if conn.reads_buffers and not conn.closed.is_set()
        ]
        return editors[-1] if editors else None

    async def read_text(self, path: Path) -> str | None:
        editor = self.editor()
        if editor is None:
            return None
        params = {"session": self._session.id, "path": str(path)}
        try:
            answer = await editor.ask(CLIENT_READ_TEXT_FILE, params, self._timeout)
        except AskFailed as exc:
            log.info("session %s: reading %s from the disk: %s", self._session.id, path, exc)
            return None
        content = answer.get("content") if isinstance(answer, dict) else None
        return content if isinstance(content, str) else None

    def can_write(self) -> bool:
        """Whether the editor whose buffers are read takes writes to them."""
        editor = self.editor()
        return editor is not None and editor.writes_buffers

    async def write_text(self, path: Path, text: str) -> None:
        """Hand `text` to the editor as the file's new content; `OSError` when it fails."""
        editor = self.editor()
        if editor is None or not editor.writes_buffers:
            raise OSError("the editor that holds the file is no longer attached")
        params = {"session": self._session.id, "path": str(path), "content": text}
        try:
            await editor.ask(CLIENT_WRITE_TEXT_FILE, params, WRITE_TIMEOUT)
        except AskFailed as exc:
            raise OSError(f"the editor did not take the write: {exc}") from None
