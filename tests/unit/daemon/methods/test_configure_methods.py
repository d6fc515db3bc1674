"""session.configure called directly over real parts."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import configure_methods as cm
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


def test_configure_changes_options_and_tells_every_client_who(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            session = created["session"]
            answer = await cm.session_configure(
                rig.parts, conn, session=session, allow_command="cargo", token_budget=5000
            )
            options = answer["options"]
            assert "cargo" in options["allowed_commands"] and options["token_budget"] == 5000
            target = rig.parts.sessions.get(session)
            assert target is not None
            notices = [e.data["message"] for e in target.events if e.kind == "notice"]
            who = f"(by {conn.client_name}, pid {conn.peer_pid})"  # no connection id
            assert any("'cargo'" in n and who in n for n in notices)

    asyncio.run(main())


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"allow_command": "/bin/rm"}, "without a path"),
        ({"allow_command": "git --all"}, "not a subcommand"),
        ({"allow_command": "cargo test --all"}, "a program and its subcommand"),
        ({"allow_command": "uv pip"}, "only `uv run` and `uv sync` ask"),
        ({"allow_command": "ls src"}, "runs without a question already"),
        ({"search": "altavista"}, "search must be true, false or one of"),
        ({"token_budget": -1}, "token_budget must be a whole number"),
        ({"debug": "yes"}, "debug must be true or false"),
    ],
)
def test_configure_refuses_bad_values(rig: Rig, params: dict[str, object], message: str) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            with pytest.raises(errors.InvalidParams, match=message):
                await cm.session_configure(rig.parts, conn, session=created["session"], **params)

    asyncio.run(main())


def test_a_refused_configure_changes_nothing(rig: Rig) -> None:
    """A bad value anywhere in the request: none of the good ones before it are applied."""

    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            session = created["session"]
            with pytest.raises(errors.InvalidParams):
                await cm.session_configure(
                    rig.parts, conn, session=session, allow_command="cargo", search="altavista"
                )
            target = rig.parts.sessions.get(session)
            assert target is not None
            assert "cargo" not in target.options.extra_commands
            assert not [e for e in target.events if e.kind == "notice"]

    asyncio.run(main())


def test_a_command_that_asks_is_allowed_by_program_and_subcommand(rig: Rig) -> None:
    """`/allow-cmd uv run` (and ACP's "Always allow" on a uv run): the entry is the pair."""

    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            answer = await cm.session_configure(
                rig.parts, conn, session=created["session"], allow_command=" uv  run "
            )
            assert answer["options"]["allowed_commands"] == ["uv run"]

    asyncio.run(main())
