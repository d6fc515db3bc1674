"""The runner's part of the shared task queue: claim tasks, hold their leases, run them.

A runner with `hub.runner.slots` above 0 claims tasks of the repositories it
accepts (`hub.runner.repos`; `"*"` any) while a slot is free: woken by
`hub_tasks`, by the listener's reconnect (None: rescan), and by a slow poll,
since a lease that ends sends no notification. Each claimed task
(`task_claims.py`) is prepared (`task_repo.py`), run as a session of this
daemon (`task_session.py`) and its result written (`task_result.py`) while its
lease is renewed every third of `lease_seconds`. A renewal that finds the task
no longer ours (the hub gave it to another runner after our lease ended) stops
the turn; nothing of it is written. A renewal also reads whether a cancel was
asked, so a missed `hub_task_cancel` is noticed within a renewal. When the
daemon stops mid-task the task goes back to the queue for another runner.
A hub that is away never stops a task: its turn goes on, and its result is
written once the hub is back (unless its lease ended and it was claimed again).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import psycopg

from coding_harness.daemon.config.hub_settings import ANY_REPO
from coding_harness.daemon.team import task_claims as claims
from coding_harness.daemon.team.connect import HubUnreachable
from coding_harness.daemon.team.listener import TASK_CANCEL, TASKS
from coding_harness.daemon.team.task_claims import Claim, Outcome
from coding_harness.daemon.team.task_repo import RepoCache, TaskRepoFailed, TaskTree
from coding_harness.daemon.team.task_result import collect
from coding_harness.daemon.team.task_session import TaskSession
from coding_harness.protocol import exit_codes

if TYPE_CHECKING:
    from pathlib import Path

    from coding_harness.daemon.config.loader import ConfigCache
    from coding_harness.daemon.sessions.session import SessionTable
    from coding_harness.daemon.store.db import Store
    from coding_harness.daemon.team.runner import HubRunner
    from coding_harness.daemon.turns.runner import TurnRunner

log = logging.getLogger(__name__)
T = TypeVar("T")
RETRY_SECONDS = 1.0


class QueueDeps(Protocol):
    """What the queue needs of the daemon (`build.RunnerDeps` has it)."""

    @property
    def state_dir(self) -> Path: ...
    @property
    def sessions(self) -> SessionTable: ...
    @property
    def configs(self) -> ConfigCache: ...
    @property
    def turns(self) -> TurnRunner: ...
    @property
    def store(self) -> Callable[[], Store]: ...


@dataclass(kw_only=True)
class Held:
    """A task this runner holds: whether its cancel was asked, whether its lease was lost."""

    claim: Claim
    cancel_asked: bool = False
    lost: bool = False
    session: TaskSession | None = None
    work: asyncio.Task[None] | None = field(default=None, repr=False)

    def cancel(self) -> None:
        self.cancel_asked = True
        if self.session is not None:
            self.session.stop()


class TaskQueue:
    def __init__(self, deps: QueueDeps) -> None:
        self._deps = deps
        self._held: dict[int, Held] = {}
        self._wake = asyncio.Event()
        self._said_away = False

    async def run(self, runner: HubRunner) -> None:
        settings = runner.settings.runner
        if settings.slots <= 0:
            return
        if not settings.repos:
            log.warning("hub: runner %s has slots but accepts no repository (hub.runner.repos)",
                        runner.name)  # fmt: skip
            return
        self._runner = runner
        self._lease = settings.lease_seconds
        self._repos = None if ANY_REPO in settings.repos else settings.repos
        self._cache = RepoCache(self._deps.state_dir / "hub", settings.repos)
        poll = max(1.0, min(10.0, self._lease / 2))
        await self._cache.sweep()
        offs = [
            runner.listener.on(TASKS, lambda _payload: self._wake.set()),
            runner.listener.on(TASK_CANCEL, self._cancel_note),
        ]
        try:
            while True:
                self._wake.clear()
                await self._fill(settings.slots)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), poll)
        finally:
            for off in offs:
                off()
            await self._stop_all()

    async def _fill(self, slots: int) -> None:
        """Claim tasks while a slot is free and the hub has one for this runner."""
        while len(self._held) < slots and not self._deps.turns.closing:
            claim = await self._hub(self._claim_one)
            if claim is None:
                return
            held = Held(claim=claim)
            self._held[claim.id] = held
            held.work = asyncio.create_task(self._work(held), name=f"hub-task-{claim.id}")
            held.work.add_done_callback(functools.partial(self._done, claim.id))
            log.info("hub: runs task %d (attempt %d) of %s@%s",
                     claim.id, claim.attempt, claim.repo, claim.ref)  # fmt: skip

    async def _claim_one(self, conn: claims.Conn) -> Claim | None:
        await claims.reap(conn)
        return await claims.claim(
            conn, runner=self._runner.name, repos=self._repos, lease_seconds=self._lease
        )

    def _done(self, task: int, _work: object = None) -> None:
        self._held.pop(task, None)
        self._wake.set()

    def _cancel_note(self, payload: str | None) -> None:
        if payload is None:
            return  # a renewal reads every held task's cancel anyway
        held = self._held.get(int(payload)) if payload.isdigit() else None
        if held is not None:
            held.cancel()

    async def _hub(self, work: Callable[[claims.Conn], Awaitable[T]]) -> T | None:
        """`work` on a connection; None when the hub is away (said once until it is back)."""
        try:
            async with self._runner.connection() as conn:
                result = await work(conn)
        except (HubUnreachable, psycopg.Error) as exc:
            if not self._said_away:
                log.warning("hub: the queue waits for the hub: %s", exc)
                self._said_away = True
            return None
        self._said_away = False
        return result

    async def _work(self, held: Held) -> None:
        keeper = asyncio.create_task(self._keep_lease(held), name=f"hub-lease-{held.claim.id}")
        tree: TaskTree | None = None
        try:
            tree, outcome = await self._run(held)
            if outcome is None:  # the daemon stops: another runner takes it
                await self._hub(lambda conn: claims.release(conn, held.claim))
                return
            await self._finish(held, outcome)
        except asyncio.CancelledError:
            if not held.lost:  # the daemon stops: give the task back, quickly
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(
                        self._hub(lambda conn: claims.release(conn, held.claim)), 3.0
                    )
                raise
            log.warning("hub: task %d was claimed again elsewhere; its turn here stopped",
                        held.claim.id)  # fmt: skip
        finally:
            keeper.cancel()
            if tree is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._cache.remove(tree))

    async def _run(self, held: Held) -> tuple[TaskTree | None, Outcome | None]:
        """Prepare, run and collect the task; its outcome (None: give it back)."""
        claim = held.claim
        try:
            tree = await self._cache.prepare(claim.repo, claim.ref, claim.id, claim.attempt)
        except TaskRepoFailed as exc:
            return None, Outcome(state="failed", error=str(exc))
        if held.cancel_asked:
            return tree, Outcome(state="cancelled", error="cancelled")
        deps = self._deps
        session = TaskSession(
            cwd=tree.path,
            sessions=deps.sessions,
            configs=deps.configs,
            turns=deps.turns,
            store=deps.store(),
        )
        held.session = session
        await self._hub(lambda conn: claims.note_session(conn, claim, session.id))
        if held.cancel_asked:  # asked while the session was being made
            session.stop()
        finished = await session.run(claim.text)
        session.close()
        stopped_here = finished.exit_code == exit_codes.INTERRUPTED and not held.cancel_asked
        if stopped_here and deps.turns.closing:
            return tree, None
        settings = self._runner.settings.runner
        outcome = await collect(
            claim=claim,
            tree=tree,
            finished=finished,
            session_id=session.id,
            committer=self._runner.person,
            push_to=settings.repos if settings.push else None,
            cancelled=held.cancel_asked or stopped_here,
        )
        return tree, outcome

    async def _finish(self, held: Held, outcome: Outcome) -> None:
        """Write the outcome once the hub answers (unless the task was claimed again)."""
        while not held.lost:
            written = await self._hub(lambda conn: claims.finish(conn, held.claim, outcome))
            if written is not None:
                if not written:
                    log.warning("hub: task %d was claimed again; its result here is dropped",
                                held.claim.id)  # fmt: skip
                return
            await asyncio.sleep(RETRY_SECONDS)

    async def _keep_lease(self, held: Held) -> None:
        """Renew the lease every third of it; a lost lease stops the task's work."""
        while True:
            await asyncio.sleep(self._lease / 3)
            answer: Any = await self._hub(lambda conn: _renewal(conn, held.claim, self._lease))
            if answer is None:
                continue  # the hub is away: the turn goes on
            ours, cancel = answer
            if not ours:
                held.lost = True
                if held.session is not None:
                    held.session.stop()
                if held.work is not None:
                    held.work.cancel()
                return
            if cancel and not held.cancel_asked:
                held.cancel()

    async def _stop_all(self) -> None:
        works = [held.work for held in self._held.values() if held.work is not None]
        for work in works:
            work.cancel()
        for work in works:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work


async def _renewal(conn: claims.Conn, held: Claim, lease: float) -> tuple[bool, bool]:
    answer = await claims.renew(conn, held, lease)
    return (answer is not None, bool(answer))
