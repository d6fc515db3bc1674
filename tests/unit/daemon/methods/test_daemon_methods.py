"""initialize and the daemon.* handlers called directly over real parts."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import daemon_methods as d
from coding_harness.protocol import errors
from coding_harness.protocol.version import PROTOCOL_VERSION
from tests.unit.daemon.methods.conftest import Rig, connected


def test_initialize_with_a_session_creates_and_attaches_it(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            conn.initialized = False
            answer = await d.initialize(
                rig.parts, conn, protocol=PROTOCOL_VERSION, session={"cwd": str(rig.workspace)}
            )
            assert conn.initialized
            opened = answer["session"]
            assert opened["provider"] == "local" and "last_seq" in opened
            assert opened["session"] in conn.attached

    asyncio.run(main())


def test_initialize_whose_session_fails_leaves_the_connection_uninitialized(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            conn.initialized = False
            with pytest.raises(errors.SessionNotFound):
                await d.initialize(
                    rig.parts, conn, protocol=PROTOCOL_VERSION, session={"id": "s-gone"}
                )
            assert not conn.initialized
            with pytest.raises(errors.UnsupportedProtocol):
                await d.initialize(rig.parts, conn, protocol=-1)

    asyncio.run(main())


def test_status_stats_and_shutdown(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            assert await d.daemon_status(rig.parts, conn) == {"pid": 1}
            assert await d.stats_get(rig.parts, conn) == {"daily": []}
            with pytest.raises(errors.SessionNotFound):
                await d.stats_get(rig.parts, conn, session="s-gone")
            assert await d.daemon_shutdown(rig.parts, conn) == {"stopping": True}
            assert rig.lifecycle.stops == 0  # not before the answer is sent
            conn.run_on_answer()
            assert rig.lifecycle.stops == 1

    asyncio.run(main())


def test_a_process_of_the_agents_own_tools_cannot_offer_editor_buffers(rig: Rig) -> None:
    """Its answers would become what read_file shows the model: a tool-started process
    (a Makefile's helper) must not be able to feed the model files."""
    capabilities = {"read_text_file": True}

    async def main() -> tuple[bool, bool]:
        async with connected() as editor, connected() as tool_child:
            editor.initialized = tool_child.initialized = False
            tool_child.is_tool_descendant = True
            for conn in (editor, tool_child):
                await d.initialize(
                    rig.parts, conn, protocol=PROTOCOL_VERSION, capabilities=capabilities
                )
            return editor.reads_buffers, tool_child.reads_buffers

    assert asyncio.run(main()) == (True, False)
