"""A task's session on the runner: made as `session.create` makes one, one turn run.

The session works in the task's worktree under the runner's own configuration:
its global file, and of the repository's project file only what an untrusted
project may set (a fresh worktree is never trusted), so the runner's modes,
limits, allow-list and sandbox apply to a task's text as to any prompt. Its
turn is never auto-approved: in the `ask` mode a write or a command waits for
an answer from someone allowed to give it (at the runner: `harness approve`).
The session stays in the runner's table afterwards (`harness sessions`,
`harness logs ID` on the runner show what the task did).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from coding_harness.daemon.config.loader import ConfigCache
from coding_harness.daemon.sessions.activity import FinishedTurn
from coding_harness.daemon.sessions.session import Session, SessionTable, new_session_id
from coding_harness.daemon.store.db import Store
from coding_harness.daemon.turns.runner import TurnRunner


class TaskSession:
    """The session of one task; `run` submits its text and waits for the turn's end."""

    def __init__(
        self,
        *,
        cwd: Path,
        sessions: SessionTable,
        configs: ConfigCache,
        turns: TurnRunner,
        store: Store,
    ) -> None:
        self._turns = turns
        self._sessions = sessions
        config = configs.get(cwd)
        self.session = Session(id=new_session_id(), cwd=cwd, store=store)
        self.session.options.mode = config.agent.mode
        store.create_session(
            id=self.session.id,
            cwd=str(cwd),
            provider=None,
            model=None,
            created_at=self.session.created_at,
            mode=self.session.options.mode,
        )
        sessions.add(self.session)

    @property
    def id(self) -> str:
        return self.session.id

    async def run(self, text: str) -> FinishedTurn:
        """Run `text` as the session's turn; its end (exit code, start of the reply)."""
        done: asyncio.Future[FinishedTurn] = asyncio.get_running_loop().create_future()
        submitted = self._turns.submit(self.session, text, auto_approve=False, dry_run=False)
        turn = str(submitted["turn"])

        def ended(finished: FinishedTurn) -> None:
            if finished.turn == turn and not done.done():
                done.set_result(finished)

        # A background turn's end is handed to this callback (instead of a desktop notice).
        self.session.activity.on_background_end = ended
        self.session.activity.submit(turn, background=True)
        try:
            return await asyncio.shield(done)
        except asyncio.CancelledError:
            self.stop()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(done), 10.0)
            raise

    def stop(self) -> bool:
        """Cancel the running turn (it still ends with `turn.finished`, exit code 130)."""
        return self._turns.cancel(self.session)

    def close(self) -> None:
        """Flush its events to the store; the session stays listed as a closed one would."""
        self.session.flush_events()
