"""approval.respond called directly over real parts."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import approval_methods as a
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


def test_an_unknown_request_is_not_pending_in_any_session(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            with pytest.raises(errors.ApprovalNotPending, match="no pending approval a-9"):
                await a.approval_respond(rig.parts, conn, request="a-9", decision="allow")

    asyncio.run(main())


def test_an_unknown_session_is_named(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.SessionNotFound):
                await a.approval_respond(
                    rig.parts, conn, request="a-9", decision="allow", session="s-gone"
                )

    asyncio.run(main())


def test_a_client_that_did_not_announce_approvals_is_refused(rig: Rig) -> None:
    async def main() -> None:
        async with connected(can_approve=False) as conn:
            with pytest.raises(errors.PeerRefused, match=r"capabilities\.approvals"):
                await a.approval_respond(rig.parts, conn, request="a-9", decision="allow")

    asyncio.run(main())
