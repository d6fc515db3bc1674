"""`approval.respond`: the first valid answer to a pending request wins.

The answer records the person who gave it (`answered_by`); an answer for a
session another runner of the hub holds goes to that runner's inbox
(`remote_sessions.respond`), which accepts it only from its approvers.
"""

from __future__ import annotations

import time
from typing import Any

from coding_harness.daemon.methods import remote_sessions
from coding_harness.daemon.methods.lookup import session_of
from coding_harness.daemon.methods.params import refuse_tool_children, text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m


async def approval_respond(
    parts: MethodParts,
    conn: Connection,
    request: Any,
    decision: Any,
    reason: Any = None,
    session: Any = None,
) -> dict[str, Any]:
    refuse_tool_children(conn)
    if not conn.can_approve:
        raise errors.PeerRefused("this client did not announce capabilities.approvals")
    request_id = text("request", request)
    everywhere = session is None
    try:
        candidates = parts.sessions.all() if everywhere else [session_of(parts, session)]
    except errors.SessionNotFound:  # another runner's: answered there, through the hub
        return await remote_sessions.respond(parts, session, request_id, decision, reason)
    owner = next((s for s in candidates if s.approvals.knows(request_id)), None)
    if owner is None:
        raise errors.ApprovalNotPending(f"no pending approval {request_id}")
    answer = owner.approvals.respond(
        request_id,
        text("decision", decision),
        text("reason", reason, required=False),
        conn.label,
        {"id": conn.id, "name": conn.client_name, "pid": conn.peer_pid},
        answered_by=remote_sessions.local_person(parts),
    )
    return {"request": request_id, "decision": answer.decision, "at": time.time()}


HANDLERS: dict[str, Handler] = {m.APPROVAL_RESPOND: approval_respond}
