"""session.context, plan.get and skills.list called directly over real parts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from coding_harness.daemon.methods import context_methods as c
from coding_harness.daemon.methods import session_methods as s
from coding_harness.protocol import errors
from tests.unit.daemon.methods.conftest import Rig, connected

NOTE = "the integration tests need the fake model server from tests/support"


def test_session_context_counts_the_projects_notes_section(rig: Rig) -> None:
    """A turn's system prompt carries the project's turn-close notes: so does the estimate."""

    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            before = await c.session_context(rig.parts, conn, session=created["session"])
            project = str(rig.workspace.resolve())
            assert rig.store.notes.add(project, [("fact", NOTE)])
            after = await c.session_context(rig.parts, conn, session=created["session"])
            assert after["messages"] == before["messages"] == []
            grown = after["total_chars"] - before["total_chars"]
            assert len(NOTE) < grown < len(NOTE) + 400  # the note, its heading and framing
            assert after["system_tokens"] > before["system_tokens"]

    asyncio.run(main())


def test_plan_get_without_a_plan_and_context_of_an_unknown_session(rig: Rig) -> None:
    async def main() -> None:
        async with connected() as conn:
            created = await s.session_create(rig.parts, conn, cwd=str(rig.workspace))
            answer = await c.plan_get(rig.parts, conn, session=created["session"])
            assert answer == {"session": created["session"], "plan": None}
            with pytest.raises(errors.SessionNotFound):
                await c.session_context(rig.parts, conn, session="s-gone")

    asyncio.run(main())


def test_skills_list_reads_the_workspace_skills(rig: Rig) -> None:
    skill = rig.workspace / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: look it over\n---\nbody\n")

    async def main() -> dict[str, Any]:
        async with connected() as conn:
            return await c.skills_list(rig.parts, conn, cwd=str(rig.workspace))

    skills = asyncio.run(main())["skills"]
    assert [(entry["name"], entry["scope"]) for entry in skills] == [("review", "project")]
