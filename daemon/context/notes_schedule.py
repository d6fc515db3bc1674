"""When the turn-close notes calls run: at once for a remote server, when the session is
idle for a local one.

A local server (a loopback endpoint: llama.cpp, Ollama with one slot) answers
one request at a time, so a notes call started as a turn finishes would make
the user's next turn wait behind it. There a notes job waits until its session
has been idle for `IDLE_SECONDS`; a turn that starts meanwhile, or while the
call runs, cancels it, and the job waits again for the session's next idle
moment (at most `MAX_TRIES` starts, then it is dropped). Each call that
completes counts its tokens as before (`turn_notes.py`).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from coding_harness.daemon.context.notes_parse import TurnNotes
from coding_harness.daemon.context.turn_notes import NotesJob, SchemaRefusals, take_notes
from coding_harness.daemon.providers.pool import ProviderPool
from coding_harness.daemon.providers.window import is_loopback

log = logging.getLogger(__name__)

IDLE_SECONDS = 1.0
MAX_TRIES = 3
MAX_WAITING = 4  # jobs kept per session; the oldest go first


@dataclass(kw_only=True, slots=True)
class _Waiting:
    jobs: list[tuple[NotesJob, int]] = field(default_factory=list)  # (job, starts so far)
    task: asyncio.Task[None] | None = None  # the wait for idle, then the calls


class NoteTakers:
    """The notes calls under way, in the background, and the servers that refused a schema."""

    def __init__(self, pool: ProviderPool) -> None:
        self._pool = pool
        self.refusals = SchemaRefusals()
        self._tasks: set[asyncio.Task[object]] = set()
        self._waiting: dict[str, _Waiting] = {}

    def start(self, job: NotesJob) -> None:
        """A finished turn's notes: now for a remote server, when idle for a local one."""
        if not is_loopback(job.profile.endpoint):
            self._track(asyncio.create_task(self._take(job), name=f"notes-{job.turn}"))
            return
        waiting = self._waiting.setdefault(job.session.id, _Waiting())
        waiting.jobs = [*waiting.jobs, (job, 0)][-MAX_WAITING:]
        self.idle(job.session.id)

    def turn_started(self, session_id: str) -> None:
        """A turn of the session starts: its local notes calls give way."""
        waiting = self._waiting.get(session_id)
        if waiting is not None and waiting.task is not None:
            waiting.task.cancel()
            waiting.task = None

    def idle(self, session_id: str) -> None:
        """The session's turn ended: its waiting jobs run once it stays idle."""
        waiting = self._waiting.get(session_id)
        if waiting is None or not waiting.jobs or waiting.task is not None:
            return
        waiting.task = asyncio.create_task(self._when_idle(session_id, waiting))
        self._track(waiting.task)

    async def _when_idle(self, session_id: str, waiting: _Waiting) -> None:
        await asyncio.sleep(IDLE_SECONDS)
        while waiting.jobs:
            job, starts = waiting.jobs[0]
            waiting.jobs[0] = (job, starts + 1)
            try:
                await self._take(job)
            except asyncio.CancelledError:
                if starts + 1 >= MAX_TRIES:
                    log.debug("turn %s: notes given up after %d starts", job.turn, starts + 1)
                    waiting.jobs.pop(0)
                raise
            waiting.jobs.pop(0)
        if self._waiting.get(session_id) is waiting:
            waiting.task = None
            del self._waiting[session_id]

    async def _take(self, job: NotesJob) -> TurnNotes:
        return await take_notes(job, self._pool, self.refusals)

    def _track(self, task: asyncio.Task[object] | asyncio.Task[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel(self) -> None:
        self._waiting.clear()
        for task in list(self._tasks):
            task.cancel()

    async def settled(self) -> None:
        """Wait for the calls under way (not for the ones waiting for an idle session)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks))
