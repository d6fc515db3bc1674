"""The permission mode over the methods: session.create's options.mode and the config's
`agent.mode` default, session.configure {mode}, and the mode in session.list rows."""

from __future__ import annotations

import asyncio
import json

import pytest

from coding_harness.daemon.config.settings import parse_agent
from coding_harness.daemon.methods import configure_methods as cm
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from coding_harness.protocol.methods import EventKind
from tests.unit.daemon.methods.conftest import Rig, connected


def test_a_new_session_is_in_the_mode_it_asked_for_else_ask(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            plain = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            chosen = await s.session_create(
                rig.parts, conn, cwd=str(rig.workspace), options={"mode": "read-only"}
            )
            assert plain["mode"] == "ask" and chosen["mode"] == "read-only"
            rows = (await s.session_list(rig.parts, conn))["sessions"]
            assert [row["options"]["mode"] for row in rows] == ["ask", "read-only"]

    asyncio.run(main())


def test_agent_mode_in_the_config_is_the_default(rig: Rig) -> None:
    config = json.loads((rig.home / ".coding_harness.json").read_text())
    config["agent"] = {"mode": "accept-edits"}
    (rig.home / ".coding_harness.json").write_text(json.dumps(config))

    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            assert created["mode"] == "accept-edits"
            attached = await s.session_attach(rig.parts, conn, session=created["session"])
            assert attached["options"]["mode"] == "accept-edits"

    asyncio.run(main())


def test_a_bad_mode_at_create_is_invalid_params_naming_the_modes(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.InvalidParams, match="ask, accept-edits, read-only"):
                await s.session_create(
                    rig.parts, conn, cwd=str(rig.workspace), options={"mode": "yolo"}
                )
            assert len(rig.parts.sessions) == 0

    asyncio.run(main())


def test_configure_switches_the_mode_and_says_who(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            answer = await cm.session_configure(
                rig.parts, conn, session=created["session"], mode="read-only"
            )
            assert answer["options"]["mode"] == "read-only"
            target = rig.parts.sessions.get(created["session"])
            assert target is not None
            changed = [e.data for e in target.events if e.kind == EventKind.MODE_CHANGED]
            assert changed == [{"mode": "read-only", "client": conn.label}]

    asyncio.run(main())


@pytest.mark.parametrize("bad", ["plan", "", 3, True])
def test_configure_refuses_a_bad_mode_and_changes_nothing(rig: Rig, bad: object) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            with pytest.raises(errors.InvalidParams, match="mode must be one of ask, accept-edits"):
                await cm.session_configure(
                    rig.parts, conn, session=created["session"], token_budget=9, mode=bad
                )
            target = rig.parts.sessions.get(created["session"])
            assert target is not None
            assert target.options.mode == "ask" and target.options.token_budget is None
            assert not [e for e in target.events if e.kind == EventKind.MODE_CHANGED]

    asyncio.run(main())


def test_agent_mode_is_checked_in_the_config() -> None:
    problems: list[str] = []
    assert parse_agent({"mode": "read-only"}, lambda _path: "f.json", problems).mode == "read-only"
    assert parse_agent({"mode": "yolo"}, lambda _path: "f.json", problems).mode == "ask"
    assert len(problems) == 1 and "must be one of ask, accept-edits, read-only" in problems[0]
