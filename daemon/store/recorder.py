"""Saving a turn as it goes: each completed step reaches the store at once.

`StepRecorder` stands between the agent loop and the session as its event
sink. When the loop reports a tool call (the assistant message is in the
history) or a tool result, the messages of this turn so far are written with
the events and token usage that came with them, in one transaction. A crash
therefore loses at most the step in flight. The write journal's records
(`tools/journal.py`) are stored the moment they are emitted, before and after
the write they describe, and what the turn's writes and commands change is kept
as checkpoints first (`turn_checkpoints.py`). After a compaction replaced the
whole history, `rebase` makes every later save rewrite it from the start.
"""

from __future__ import annotations

from coding_harness.daemon.agent.seams import JSONObject, Usage
from coding_harness.daemon.config.profiles import ProviderProfile
from coding_harness.daemon.sessions.session import Session
from coding_harness.daemon.store.turn_checkpoints import TurnCheckpoints
from coding_harness.daemon.store.usage_rows import UsageRow
from coding_harness.daemon.tools.edit.journal import WRITE_EVENT
from coding_harness.daemon.usage.cost import cost_usd
from coding_harness.protocol.methods import EventKind

_STEP_KINDS = frozenset({EventKind.TOOL_CALL, EventKind.TOOL_RESULT})


class StepRecorder:
    def __init__(self, session: Session, working: list[JSONObject], turn: str) -> None:
        self._session = session
        self._working = working  # [system prompt, *history, *this turn]
        self._first_index = len(session.history)
        self._turn = turn
        self._saved_length = -1
        self._usage: list[UsageRow] = []
        self.checkpoints = TurnCheckpoints(session, turn)

    def emit(self, kind: str, data: JSONObject) -> object:
        self.checkpoints.before_event(kind, data)
        event = self._session.emit(kind, data)
        if kind in _STEP_KINDS:
            self.save()
        elif kind == WRITE_EVENT:
            self._session.flush_events()
        return event

    def add_usage(self, usage: Usage, profile: ProviderProfile) -> None:
        self._usage.append(
            UsageRow(
                turn=self._turn,
                provider=profile.name,
                model=profile.model,
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                completion_tokens=usage.completion_tokens,
                cost_usd=cost_usd(usage, profile),
            )
        )

    def rebase(self) -> None:
        """The whole history was replaced (compaction): store all of it, now and from now on."""
        self._first_index = 0
        self.save(force=True)

    def save(self, *, force: bool = False) -> None:
        """Write this turn's messages, pending events and usage, if anything changed."""
        store = self._session.store
        if store is None:
            return
        if len(self._working) == self._saved_length and not force:
            return
        store.record_step(
            self._session.id,
            first_index=self._first_index,
            messages=self._working[1 + self._first_index :],
            events=self._session.take_pending_events(),
            usage=self._usage,
        )
        self._usage = []
        self._saved_length = len(self._working)
