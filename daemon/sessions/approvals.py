"""Approval requests of one session: asked of every client, first answer wins.

`PendingApprovals.ask` publishes `approval.requested` and waits; the first
valid `approval.respond` resolves it ("always": yes, and the request's `allow`
entry joins the session's allow-list, `/allow-cmd`'s) and every client sees
`approval.resolved` with the decision and who gave it (`client`, the
connection's label, `by`, its id, program name and pid, and `answered_by`,
the person: the hub's name for them, else `user@host`). A late or unknown
answer gets a clear error. With nobody to answer, the request simply waits.

A request still unanswered after `notify.after_seconds` is sent once through
`notify.py` (desktop notification, `notify.command`); the send runs on in the
background with its own time limit, even when the answer comes meanwhile.
`notify` is the session's `notify` settings, set with each turn; until then
they are read from the config files of the session's folder when a request
is made.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

from coding_harness.daemon.agent.seams import ApprovalDecision, ApprovalRequest, JSONObject
from coding_harness.daemon.config.loader import home_dir, load_config
from coding_harness.daemon.config.notify_settings import NotifySettings
from coding_harness.daemon.sessions.events import Event
from coding_harness.daemon.sessions.notify import WaitingApproval, notify_waiting
from coding_harness.protocol import errors, trust
from coding_harness.protocol.methods import DECISIONS, EventKind

if TYPE_CHECKING:
    from coding_harness.daemon.store.db import Store

log = logging.getLogger(__name__)


class ApprovalHost(Protocol):
    """What the approvals of a session need of it (a `Session` is one)."""

    id: str
    cwd: Path
    store: Store | None

    @property
    def title(self) -> str: ...

    def emit(self, kind: str, data: JSONObject) -> Event: ...

    def flush_events(self) -> None: ...

    def waiting(self) -> AbstractContextManager[None]: ...


@dataclass(kw_only=True, slots=True)
class _Pending:
    request: ApprovalRequest
    future: asyncio.Future[ApprovalDecision]
    seq: int


class PendingApprovals:
    """Implements the `Approver` seam for one session."""

    def __init__(self, session: ApprovalHost, allowances: set[str] | None = None) -> None:
        self._session = session
        # The session's allow-list, which an "always" answer adds the request's entry to.
        self._allowances = allowances if allowances is not None else set()
        self._pending: dict[str, _Pending] = {}
        self._resolved_by: dict[str, str] = {}
        # Seconds an approval may wait; None waits for as long as it takes.
        self.timeout: float | None = None
        # The `notify` settings; None reads them from the session folder's config files.
        self.notify: NotifySettings | None = None
        self._sending: set[asyncio.Task[None]] = set()

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        # Unique across daemon restarts: the store keeps old requests.
        request_id = f"a-{secrets.token_hex(4)}"
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        event = self._session.emit(
            EventKind.APPROVAL_REQUESTED,
            {
                "request": request_id,
                "kind": request.kind,
                "path": request.path,
                "diff": request.diff,
                "summary": request.summary,
                "allow": request.allow,
            },
        )
        self._pending[request_id] = _Pending(request=request, future=future, seq=event.seq)
        if self._session.store is not None:
            self._session.flush_events()
            self._session.store.approval_requested(
                self._session.id, request_id, request.kind, request.path
            )
        reminder = asyncio.create_task(self._remind(request_id, request, self.notify_settings()))
        with self._session.waiting():
            try:
                if self.timeout is None:
                    return await future
                return await asyncio.wait_for(asyncio.shield(future), self.timeout)
            except TimeoutError:
                return self._expire(request_id)
            finally:
                reminder.cancel()
                self._pending.pop(request_id, None)

    def notify_settings(self) -> NotifySettings:
        if self.notify is not None:
            return self.notify
        config = load_config(home_dir(), self._session.cwd, trust_store=trust.store_path())
        return config.notify

    async def _remind(
        self, request_id: str, request: ApprovalRequest, settings: NotifySettings
    ) -> None:
        """After `after_seconds` still unanswered: send the notifications, once."""
        asked = time.monotonic()
        await asyncio.sleep(settings.after_seconds)
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            return
        waited = time.monotonic() - asked
        waiting = WaitingApproval(
            session=self._session.id,
            request=request_id,
            kind=request.kind,
            path=request.path,
            summary=request.summary,
            folder=self._session.cwd,
            waited_seconds=waited,
            times_out_in=None if self.timeout is None else max(self.timeout - waited, 0.0),
            session_title=self._session.title,
        )
        log.info("approval %s of session %s waits: notifying", request_id, self._session.id)
        task = asyncio.create_task(notify_waiting(waiting, settings))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    def _expire(self, request_id: str) -> ApprovalDecision:
        """No answer in time: a refusal the model is told about, never an approval."""
        reason = f"nobody answered within {self.timeout:g} s, so the change was not made"
        return self.respond(request_id, "no", reason, "harnessd (time limit)")

    def respond(
        self,
        request_id: str,
        decision: str,
        reason: str,
        client: str,
        by: JSONObject | None = None,
        *,
        answered_by: str | None = None,
    ) -> ApprovalDecision:
        """`client` names who answered for logs and old clients; `by` says it as fields
        (`{"id", "name", "pid"}` of the connection), for a client to word it;
        `answered_by` the person who answered (the hub person, or `user@host`)."""
        if decision not in DECISIONS:
            raise errors.InvalidParams(f"decision must be one of {', '.join(DECISIONS)}")
        pending = self._pending.get(request_id)
        if pending is None or pending.future.done():
            who = self._resolved_by.get(request_id)
            if who:
                raise errors.ApprovalNotPending(
                    f"approval {request_id} was already resolved by {who}"
                )
            raise errors.ApprovalNotPending(f"no pending approval {request_id} in this session")
        if decision == "always":
            entry = pending.request.allow
            if not entry:
                raise errors.InvalidParams(
                    f"approval {request_id} offers no 'always' (only a command that asks "
                    "does); answer yes"
                )
            self._allowances.add(entry)
        answer = ApprovalDecision(
            decision=cast(
                Literal["yes", "no", "skip", "revert"], "yes" if decision == "always" else decision
            ),
            reason=reason,
            client=client,
        )
        pending.future.set_result(answer)
        self._resolved_by[request_id] = client
        if self._session.store is not None:
            self._session.store.approval_resolved(
                self._session.id, request_id, decision, reason, client
            )
        resolved: JSONObject = {
            "request": request_id,
            "decision": decision,
            "reason": reason,
            "client": client,
        }
        if by is not None:
            resolved["by"] = by
        if answered_by is not None:
            resolved["answered_by"] = answered_by
        self._session.emit(EventKind.APPROVAL_RESOLVED, resolved)
        return answer

    def waiting_for(self) -> JSONObject | None:
        """The oldest request still unanswered: `{request, kind, path, summary}`."""
        for request_id, pending in self._pending.items():
            if not pending.future.done():
                asked = pending.request
                return {"request": request_id, "kind": asked.kind, "path": asked.path,
                        "summary": asked.summary}  # fmt: skip
        return None

    def pending_seqs(self) -> set[int]:
        return {p.seq for p in self._pending.values() if not p.future.done()}

    def knows(self, request_id: str) -> bool:
        """Pending now, or resolved earlier (so a late answer names who won)."""
        return request_id in self._pending or request_id in self._resolved_by

    def __len__(self) -> int:
        return len(self._pending)
