"""provider.list, provider.use, model.use and daemon.reload called directly over real parts."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import provider_methods as p
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


def test_provider_use_switches_the_next_turns_and_remembers_it(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            session = created["session"]
            answer = await p.provider_use(rig.parts, conn, session=session, name="other")
            assert (answer["provider"], answer["model"]) == ("other", "big")
            listed = await p.provider_list(rig.parts, conn, session=session)
            assert (listed["active"], listed["model"]) == ("other", "big")
            target = rig.parts.sessions.get(session)
            assert target is not None and target.provider == "other"
            notices = [e.data["message"] for e in target.events if e.kind == "notice"]
            assert any("next turns use other" in n for n in notices)
            stored = list(rig.store.load_sessions(10))
            assert [row.provider for row in stored] == ["other"]

    asyncio.run(main())


def test_provider_use_of_an_unknown_profile_changes_nothing(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            with pytest.raises(errors.InvalidParams, match="nope"):
                await p.provider_use(rig.parts, conn, session=created["session"], name="nope")
            target = rig.parts.sessions.get(created["session"])
            assert target is not None and target.provider is None

    asyncio.run(main())


def test_model_use_keeps_the_profile_and_asks_for_the_model(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            answer = await p.model_use(rig.parts, conn, session=created["session"], model="tiny")
            assert (answer["provider"], answer["model"]) == ("local", "tiny")

    asyncio.run(main())


def test_daemon_reload_is_the_daemons_own(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            assert await p.daemon_reload(rig.parts, conn) == {"reloaded": True}

    asyncio.run(main())
    assert rig.lifecycle.reloads == 1
