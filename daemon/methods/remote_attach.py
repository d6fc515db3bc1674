"""`session.attach` and `session.detach` for a session another runner holds.

The answer has a local attach's shape (`session_methods.summary`'s fields, as
far as the hub's row and event rows tell them, plus `runner`, `person`, `host`
and `remote: true`), with `replayed` and `missed`. Without `since_seq` the
running turn's unanswered approval requests are sent first, and the client
follows from the session's last event row; with it, every event row above
`since_seq` is sent first, in pages, `missed` counting the numbers no row
holds. Then the reader (`team/follow.py`) sends each new row as it comes,
until the client detaches or leaves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coding_harness.daemon.methods.lookup import fits_id
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.methods.remote_sessions import find
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.sessions.events import Event
from coding_harness.protocol import errors

if TYPE_CHECKING:
    from coding_harness.daemon.team.follow_rows import HubSession, Progress
    from coding_harness.daemon.team.runner import HubRunner


async def attach(
    parts: MethodParts, conn: Connection, session: Any, since: int | None
) -> dict[str, Any]:
    hub, found = await find(parts, session)
    from coding_harness.daemon.team.connect import HubUnreachable

    try:
        sent, missed, cursor, progress, waiting = await _catch_up(hub, conn, found.id, since)
    except HubUnreachable as exc:
        raise errors.SessionNotFound(f"session {found.id} could not be read: {exc}") from None
    from coding_harness.daemon.team.follow import followers_of

    followers_of(hub).follow(conn, found.id, cursor)
    answer = summary(found, progress, cursor)
    if waiting:
        asked = waiting[0].data
        answer["waiting_for"] = {
            key: asked.get(key) for key in ("request", "kind", "path", "summary")
        }
        answer["state"] = "waiting"
    return {**answer, "replayed": sent, "missed": missed}


async def _catch_up(
    hub: HubRunner, conn: Connection, session_id: str, since: int | None
) -> tuple[int, int, int, Progress, list[Event]]:
    """Send what the attach sends before its answer: (sent, missed, the cursor, where the
    session stands, its unanswered approval requests)."""
    from coding_harness.daemon.team.follow import PAGE_EVENTS, send_event
    from coding_harness.daemon.team.follow_rows import events_after, pending_approvals, progress

    async with hub.connection() as db:
        now = await progress(db, session_id)
        waiting = await pending_approvals(db, session_id, now.turn_seq)
    if since is None:
        for event in waiting:
            send_event(conn, session_id, event)
        return len(waiting), 0, now.last_seq, now, waiting
    sent, missed, cursor = 0, 0, since
    while not conn.closed.is_set():
        async with hub.connection() as db:
            page = await events_after(db, session_id, cursor, PAGE_EVENTS)
        for event in page:
            missed += event.seq - cursor - 1
            send_event(conn, session_id, event)
            cursor = event.seq
        sent += len(page)
        if len(page) < PAGE_EVENTS or not await conn.wait_for_room():
            break
    return sent, missed, max(cursor, since), now, waiting


def summary(found: HubSession, progress: Progress, cursor: int) -> dict[str, Any]:
    """A `session.list` row's fields for a hub session, as far as the hub tells them."""
    return {
        "session": found.id,
        "short_id": found.id.rsplit("-", 1)[-1],
        "cwd": found.cwd,
        "state": "closed" if found.closed else found.state,
        "clients": 0,
        "approvers": 0,
        "created_at": found.created_at,
        "last_activity": found.last_activity,
        "provider": found.provider,
        "model": found.model,
        "usage": {"prompt_tokens": 0, "cached_tokens": 0, "completion_tokens": 0},
        "cost_usd": found.cost_usd,
        "last_seq": cursor,
        "turn_seq": progress.turn_seq,
        "messages": 0,
        "options": {"mode": None},
        "pending_turn": None,
        "last_turn_seq": progress.last_turn_seq,
        "last_turn": None,
        "waiting_for": None,
        "title": found.title,
        "model_queue": None,
        "worktree": None,
        "runner": found.runner,
        "person": found.person,
        "host": found.host,
        "remote": True,
    }


def detach(parts: MethodParts, conn: Connection, session: Any) -> dict[str, Any]:
    """Stop following: every session this client follows that `session` names."""
    hub = parts.hub()
    wanted = session if isinstance(session, str) else ""
    if hub is not None and wanted:
        from coding_harness.daemon.team.follow import followers_of

        followers = followers_of(hub)
        stopped = [sid for sid in followers.followed_by(conn) if fits_id(sid, wanted)]
        if len(stopped) == 1 or wanted in stopped:
            followers.stop(conn, wanted if wanted in stopped else stopped[0])
            return {"detached": True}
    raise errors.SessionNotFound(f"no session {wanted!r}; `harness sessions` lists them")
