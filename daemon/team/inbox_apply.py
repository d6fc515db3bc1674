"""Applying one inbox row to a session of this daemon, as the local method would.

The kinds: `submit` (`{text}`) queues a turn through the same code as
`session.submit` (`session_methods.start_turn`), never with auto-approve or any
other option: a task from another machine runs under the session's own mode
and limits, and its approvals are asked like any other. `approval`
(`{request, decision, reason}`) answers through `approvals.respond`, only from
a person this runner's hub settings allow (its own person, or one of
`hub.approvers`), recording who answered (`answered_by`). `cancel` (`{}`) stops
the running turn as `session.cancel` does. The outcome is `{"result": ...}`,
the local method's result, or `{"error": {code, message}}`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any, Protocol

from coding_harness.daemon.sessions.session import Session, SessionTable
from coding_harness.daemon.team.runner import HubRunner
from coding_harness.daemon.turns.runner import TurnRunner
from coding_harness.protocol import errors

log = logging.getLogger(__name__)

SUBMIT, APPROVAL, CANCEL = "submit", "approval", "cancel"
KINDS = (SUBMIT, APPROVAL, CANCEL)


class InboxDeps(Protocol):
    """What applying a row reaches of the daemon (`build.RunnerDeps` is one)."""

    @property
    def sessions(self) -> SessionTable: ...

    @property
    def turns(self) -> TurnRunner: ...


@dataclass(kw_only=True, slots=True, frozen=True)
class Sent:
    """One inbox row as claimed: what, for which session, from whom."""

    id: int
    session_id: str
    kind: str
    body: dict[str, Any]
    person: str
    host: str


def apply(deps: InboxDeps, runner: HubRunner, sent: Sent) -> dict[str, Any]:
    """The row applied; its outcome, never an exception."""
    try:
        session = deps.sessions.get(sent.session_id)
        if session is None:
            raise errors.SessionNotFound(
                f"session {sent.session_id} is no longer open on runner {runner.name}"
            )
        if sent.kind == SUBMIT:
            return {"result": _submit(deps, session, sent)}
        if sent.kind == APPROVAL:
            return {"result": _answer(runner, session, sent)}
        if sent.kind == CANCEL:
            return {"result": {"cancelled": deps.turns.cancel(session)}}
        raise errors.InvalidParams(f"runner {runner.name} knows no inbox kind {sent.kind!r}")
    except errors.RpcError as exc:
        log.info("hub: inbox %d (%s from %s) refused: %s", sent.id, sent.kind, sent.person, exc)
        return {"error": {"code": exc.code, "message": exc.message}}
    except Exception:
        log.exception("hub: inbox %d (%s) failed", sent.id, sent.kind)
        where = f"see runner {runner.name}'s daemon log"
        return {"error": {"code": errors.InternalError.code, "message": f"internal error; {where}"}}


def _submit(deps: InboxDeps, session: Session, sent: Sent) -> dict[str, Any]:
    from coding_harness.daemon.methods.turn_start import start_turn

    text = sent.body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise errors.InvalidParams("text must be a non-empty string")
    log.info("hub: a task for %s from %s on %s", session.id, sent.person, sent.host)
    return start_turn(deps.turns, session, text, {})  # never `yes`, never a wider option


def _answer(runner: HubRunner, session: Session, sent: Sent) -> dict[str, Any]:
    if not runner.settings.may_approve(sent.person):
        raise errors.PeerRefused(
            f"{sent.person} may not answer {runner.name}'s approvals: add them to"
            f" hub.approvers in {runner.name}'s global file"
        )
    request, decision = sent.body.get("request"), sent.body.get("decision")
    reason = sent.body.get("reason") or ""
    if not isinstance(request, str) or not isinstance(decision, str):
        raise errors.InvalidParams("request and decision must be strings")
    if not session.approvals.knows(request):
        raise errors.ApprovalNotPending(f"no pending approval {request}")
    answer = session.approvals.respond(
        request,
        decision,
        str(reason),
        f"{sent.person} on {sent.host} (hub)",
        {"id": f"hub-{sent.id}", "name": f"{sent.person} on {sent.host}", "pid": None},
        answered_by=sent.person,
    )
    return {"request": request, "decision": answer.decision, "at": time.time()}
