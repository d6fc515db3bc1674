"""Plans in whole turns: a scripted weak model commits plans, writes them to files, drifts."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import JSONObject
from tests.support.turn_harness import TurnHarness, calls, say

pytestmark = pytest.mark.usefixtures("home_in_tmp")

BUGGY = "def add(a, b):\n    return a - b\n"


def results(box: TurnHarness) -> dict[str, str]:
    """The tool results the model was sent, by tool name (the last one of each)."""
    messages: list[JSONObject] = box.sent()["messages"]
    return {m["name"]: m["content"] for m in messages if m["role"] == "tool"}


def test_commit_plan_then_a_write_outside_it_is_flagged(tmp_path: Path) -> None:
    replies = [
        calls(("commit_plan", {"steps": "1. Fix add files: calc.py\n2. Run make check"})),
        calls(("propose_edit", {"path": "notes.py", "old": "", "new": "x = 1\n"})),
        say("Done."),
    ]
    box = TurnHarness(tmp_path, replies)
    (box.cwd / "calc.py").write_text(BUGGY)
    box.turn("fix the bug in calc.py")
    told = results(box)
    assert told["commit_plan"].startswith("plan recorded (2 steps):\n1. [pending] Fix add")
    assert "'notes.py' is not among the files the plan names (calc.py)" in told["propose_edit"]
    assert box.events("plan")[0]["steps"][0] == {
        "index": 1,
        "text": "Fix add",
        "files": ["calc.py"],
        "done": False,
    }
    assert any(n.get("drift") == "notes.py" for n in box.events("notice"))


def test_steps_sent_as_a_json_array_are_accepted(tmp_path: Path) -> None:
    steps = [{"step": "Fix add", "files": ["calc.py"]}, "Run the tests"]
    box = TurnHarness(tmp_path, [calls(("commit_plan", {"steps": steps})), say("ok")])
    box.turn("fix calc.py")
    assert "plan recorded (2 steps)" in results(box)["commit_plan"]


def test_a_plan_written_to_a_file_becomes_the_plan_and_guides_the_next_turn(
    tmp_path: Path,
) -> None:
    checklist = "# Plan\n- [x] read calc.py\n- [ ] fix add in `calc.py`\n- [ ] add `test_calc.py`\n"
    fixed = "def add(a, b):\n    return a + b\n"
    replies = [
        calls(("propose_edit", {"path": "PLAN.md", "old": "", "new": checklist})),
        calls(("replace_text", {"path": "calc.py", "old_text": "a - b", "new_text": "a + b"})),
        say("Fixed add."),
        say("Now the tests."),
    ]
    box = TurnHarness(tmp_path, replies)
    (box.cwd / "calc.py").write_text(BUGGY)
    box.turn("fix calc.py and add tests")
    assert "recorded as this session's plan (3 steps)" in results(box)["propose_edit"]
    assert "not among the files" not in results(box)["replace_text"]
    assert box.events("plan")[0]["source"] == "file:PLAN.md"
    assert any("PLAN.md was recorded" in n["message"] for n in box.events("notice"))
    assert (box.cwd / "calc.py").read_text() == fixed

    box.turn("carry on")
    system = box.system()
    assert "The plan committed for this work (guidance, not a script" in system
    assert "1. [done] read calc.py" in system
    assert "2. [touched] fix add in `calc.py` (files: calc.py)" in system
    assert "3. [pending] add `test_calc.py` (files: test_calc.py)" in system


def test_no_plan_no_guidance(tmp_path: Path) -> None:
    box = TurnHarness(tmp_path, [say("ok")])
    box.turn("fix calc.py")
    assert "The plan committed" not in box.system()
