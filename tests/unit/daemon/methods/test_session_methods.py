"""session.* handlers called directly over real parts: create, list, attach, close."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


def test_create_answers_with_the_profile_and_records_the_session(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(
                rig.parts, conn, cwd=str(rig.workspace), provider="other"
            )
            assert (created["provider"], created["model"]) == ("other", "big")
            assert created["cwd"] == str(rig.workspace.resolve())
            listed = await s.session_list(rig.parts, conn)
            assert [row["session"] for row in listed["sessions"]] == [created["session"]]
            stored = list(rig.store.load_sessions(10))
            assert [(row.id, row.provider) for row in stored] == [(created["session"], "other")]

    asyncio.run(main())


def test_create_with_an_unknown_provider_is_invalid_params_and_keeps_nothing(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.InvalidParams, match="nope"):
                await s.session_create(rig.parts, conn, cwd=str(rig.workspace), provider="nope")
            assert len(rig.parts.sessions) == 0

    asyncio.run(main())


def test_create_while_stopping_is_refused(rig: Rig) -> None:
    rig.lifecycle.stopping = True

    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.ShuttingDown):
                await s.session_create(rig.parts, conn, cwd=str(rig.workspace))

    asyncio.run(main())


def test_attach_to_an_unknown_session_names_the_fix(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.SessionNotFound, match="harness sessions"):
                await s.session_attach(rig.parts, conn, session="s-nope")

    asyncio.run(main())


def test_attach_then_close(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            attached = await s.session_attach(rig.parts, conn, session=created["session"])
            assert attached["session"] == created["session"] and attached["missed"] == 0
            assert created["session"] in conn.attached
            assert await s.session_close(rig.parts, conn, session=created["session"]) == {
                "closed": True
            }
            assert len(rig.parts.sessions) == 0

    asyncio.run(main())


def test_history_refuses_a_negative_limit(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            with pytest.raises(errors.InvalidParams, match="limit must be a whole number"):
                await s.session_history(rig.parts, conn, session=created["session"], limit=-1)

    asyncio.run(main())
