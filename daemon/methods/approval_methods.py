"""`approval.respond`: the first valid answer to a pending request wins."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.methods.params import refuse_tool_children, text
from coding_harness.daemon.methods.session_methods import session_of
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import MethodTable
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon


def register(table: MethodTable, daemon: Daemon) -> None:
    @table.register(m.APPROVAL_RESPOND)
    async def approval_respond(
        conn: Connection, request: Any, decision: Any, reason: Any = None, session: Any = None
    ) -> dict[str, Any]:
        refuse_tool_children(conn)
        if not conn.can_approve:
            raise errors.PeerRefused("this client did not announce capabilities.approvals")
        request_id = text("request", request)
        everywhere = session is None
        candidates = daemon.sessions.all() if everywhere else [session_of(daemon, session)]
        owner = next((s for s in candidates if s.approvals.knows(request_id)), None)
        if owner is None:
            raise errors.ApprovalNotPending(f"no pending approval {request_id}")
        answer = owner.approvals.respond(
            request_id,
            text("decision", decision),
            text("reason", reason, required=False),
            conn.label,
        )
        return {"request": request_id, "decision": answer.decision, "at": time.time()}
