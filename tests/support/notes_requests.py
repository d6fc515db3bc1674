"""Telling the daemon's turn-close notes call apart from the agent's own model calls.

The fake model server answers a notes request from its own script (empty notes
when none is scripted) and records it apart, so a test that scripts a turn's
replies and counts its requests is not changed by the call that follows the
turn; a test about notes scripts and reads them on their own.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.agent.prompts import NOTES_PROMPT

NOTES_MARK = NOTES_PROMPT.splitlines()[0]


def is_notes_request(payload: Any) -> bool:
    """Whether a chat-completions request body is the notes call (its system prompt)."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    first = messages[0] if isinstance(messages, list) and messages else None
    content = first.get("content") if isinstance(first, dict) else None
    return isinstance(content, str) and content.startswith(NOTES_MARK)


class NotesApart:
    """Wraps a scripted `Model` of the unit tests the same way: a notes request is answered
    from `script` (no notes when it is empty) and recorded in `payloads`; any other
    request goes to the wrapped model."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.script: list[Any] = []  # ModelReply or an exception to raise
        self.payloads: list[dict[str, Any]] = []

    @property
    def label(self) -> str:
        return str(self.model.label)

    async def complete(self, payload: dict[str, Any], sink: Any) -> Any:
        from coding_harness.daemon.agent.seams import ModelReply

        if not is_notes_request(payload):
            return await self.model.complete(payload, sink)
        self.payloads.append(payload)
        step = self.script.pop(0) if self.script else ModelReply()
        if isinstance(step, Exception):
            raise step
        return step
