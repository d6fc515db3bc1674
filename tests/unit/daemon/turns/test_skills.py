"""Skills: finding them, their front matter, and loading one into a turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.turns.skills import body_of, find_skill, find_skills, front_matter
from coding_harness.protocol import errors
from tests.support.turn_harness import TurnHarness, say

pytestmark = pytest.mark.usefixtures("home_in_tmp")

REVIEW = """---
name: review
description: "Review a change for bugs and style"
tags:
  - quality
---
# Review

Read every changed file. List problems as `path:line: problem`.
"""


def write_skill(root: Path, name: str, text: str) -> Path:
    folder = root / ".agents" / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(text)
    return folder / "SKILL.md"


def test_front_matter_and_body() -> None:
    assert front_matter(REVIEW) == {
        "name": "review",
        "description": "Review a change for bugs and style",
        "tags": "",
    }
    assert body_of(REVIEW).startswith("# Review\n")
    assert front_matter("no front matter\n---\n") == {}


def test_user_and_project_skills_the_project_winning(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    write_skill(home, "review", REVIEW)
    write_skill(home, "deploy", "# Ship it\n\nSteps to deploy.\n")
    write_skill(project, "review", "---\ndescription: the project's own review\n---\nbody\n")
    write_skill(project, ".hidden", "x")
    (project / ".agents" / "skills" / "empty").mkdir()
    found = find_skills(home, project)
    assert [(s.name, s.description, s.scope) for s in found] == [
        ("deploy", "Ship it", "user"),
        ("review", "the project's own review", "project"),
    ]
    assert [s.name for s in find_skills(home, None)] == ["deploy", "review"]
    assert find_skill(home, project, "nope") is None
    assert find_skills(tmp_path / "nowhere", None) == []


@pytest.fixture
def box(tmp_path: Path) -> TurnHarness:
    harness = TurnHarness(tmp_path, [say("No problems found.")])
    write_skill(harness.cwd, "review", REVIEW)
    return harness


def test_a_skill_is_loaded_into_the_turn(box: TurnHarness) -> None:
    finished = box.turn("check calc.py", skill="review")
    request = box.sent()["messages"][-1]["content"]
    assert finished["reply"] == "No problems found."
    assert request.startswith('Use the skill "review" for this request.')
    assert "List problems as `path:line: problem`." in request
    assert "description:" not in request  # the front matter stays out
    assert request.endswith("Task: check calc.py")
    assert box.events("intent")[0]["source"] == "option"
    assert box.session.history[0]["content"] == request  # later turns still see it


def test_a_skill_without_a_task_follows_its_own_instructions(box: TurnHarness) -> None:
    box.turn("/review", skill="review")
    assert box.sent()["messages"][-1]["content"].endswith(
        "Task: No task was given: do what the skill itself describes."
    )


def test_an_unknown_skill_is_refused_at_submit(box: TurnHarness) -> None:
    with pytest.raises(errors.InvalidParams, match="no skill named 'nope'"):
        box.turn("x", skill="nope")
    with pytest.raises(errors.InvalidParams, match="skill name"):
        box.turn("x", skill="../etc")
