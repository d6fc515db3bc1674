"""memory.get and memory.set called directly over real parts."""

from __future__ import annotations

import asyncio

import pytest

from coding_harness.daemon.methods import memory_methods as mm
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected


def test_memory_get_by_cwd_and_by_session_reads_the_projects_notes(rig: Rig) -> None:
    project = str(rig.workspace.resolve())
    assert rig.store.notes.add(project, [("decision", "keep the store in SQLite")])

    async def main() -> None:
        async with connected() as conn:
            by_cwd = await mm.memory_get(rig.parts, conn, cwd=str(rig.workspace))
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            by_session = await mm.memory_get(rig.parts, conn, session=created["session"])
            assert by_cwd == by_session
            assert by_cwd["project"] == project
            notes = [(n["kind"], n["text"]) for n in by_cwd["notes"]]
            assert notes == [("decision", "keep the store in SQLite")]

    asyncio.run(main())


def test_memory_get_needs_a_session_or_a_cwd(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            with pytest.raises(errors.InvalidParams, match="a session or a cwd"):
                await mm.memory_get(rig.parts, conn)

    asyncio.run(main())


def test_memory_set_adds_then_clears(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            cwd = str(rig.workspace)
            added = await mm.memory_set(rig.parts, conn, cwd=cwd, notes=["run make test"])
            assert added["saved"] is True
            assert [n["text"] for n in added["notes"]] == ["run make test"]
            cleared = await mm.memory_set(rig.parts, conn, cwd=cwd, clear=True)
            assert cleared["notes"] == []
            with pytest.raises(errors.InvalidParams, match="clear must be true or false"):
                await mm.memory_set(rig.parts, conn, cwd=cwd, clear="yes")

    asyncio.run(main())
