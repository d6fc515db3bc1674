"""Plans: parsing what a weak model sends, checklists, and reconciling with the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.context.plan_book import NO_STEPS, PlanBook, PlanKeeper
from coding_harness.daemon.context.plans import (
    Plan,
    PlanStep,
    checklist_steps,
    conversation_anchor,
    looks_like_plan,
    parse_steps,
    plan_status,
    take_baseline,
)
from coding_harness.daemon.sessions.session import Session


def shapes(steps: list[PlanStep]) -> list[tuple[str, list[str], bool]]:
    return [(s.text, s.files, s.done) for s in steps]


@pytest.mark.parametrize(
    "raw",
    [
        "1. Read calc.py files: calc.py\n2. Fix add (files: calc.py, test_calc.py)",
        "- [ ] Read calc.py — files: calc.py\n- [ ] Fix add files: calc.py and test_calc.py",
        '["Read calc.py files: calc.py",'
        ' {"step": "Fix add", "files": ["calc.py", "test_calc.py"]}]',
        '{"steps": [{"title": "Read calc.py", "files": "calc.py"}, '
        '{"description": "Fix add", "files": "calc.py, test_calc.py"}]}',
    ],
)
def test_steps_in_many_shapes(raw: str) -> None:
    assert shapes(parse_steps(raw)) == [
        ("Read calc.py", ["calc.py"], False),
        ("Fix add", ["calc.py", "test_calc.py"], False),
    ]


def test_files_are_found_in_the_text_when_not_listed() -> None:
    steps = parse_steps("* [x] Edit `src/app.py` to add a flag\n* Bump version 1.5 in setup.cfg")
    assert shapes(steps) == [
        ("Edit `src/app.py` to add a flag", ["src/app.py"], True),
        ("Bump version 1.5 in setup.cfg", ["setup.cfg"], False),
    ]


def test_nothing_usable_is_no_steps() -> None:
    assert parse_steps("") == [] and parse_steps("\n - \n") == [] and parse_steps("[1, 2]") == []


def test_a_checklist_file_looks_like_a_plan() -> None:
    text = "# Plan\n\n- [x] read the code\n- [ ] fix add in `calc.py`\nnotes\n"
    assert looks_like_plan("PLAN.md", text) and looks_like_plan("docs/todo.markdown", text)
    assert not looks_like_plan("plan.txt", text)
    assert not looks_like_plan("README.md", "- [ ] just one item\n")
    assert shapes(checklist_steps(text)) == [
        ("read the code", [], True),
        ("fix add in `calc.py`", ["calc.py"], False),
    ]


def test_status_is_reconciled_with_the_files_on_disk(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("old\n")
    steps = [
        PlanStep(text="read", files=["calc.py"], done=True),
        PlanStep(text="fix", files=["calc.py"]),
        PlanStep(text="test", files=["test_calc.py"]),
        PlanStep(text="docs", files=["README.md"]),
    ]
    plan = Plan(steps=steps, source="commit_plan", anchor="a")
    plan.baseline = take_baseline(tmp_path, [*plan.files(), "../escape.py", ".env"])
    assert "../escape.py" not in plan.baseline and ".env" not in plan.baseline
    (tmp_path / "calc.py").write_text("new\n")  # changed since the commit
    (tmp_path / "test_calc.py").write_text("x\n")  # appeared since the commit
    status = plan_status(plan, tmp_path)
    assert [s["status"] for s in status["steps"]] == ["done", "touched", "touched", "pending"]
    assert (status["done"], status["touched"], status["pending"]) == (1, 2, 1)


class Sink:
    def __init__(self) -> None:
        self.events: list[tuple[str, JSONObject]] = []

    def emit(self, kind: str, data: JSONObject) -> None:
        self.events.append((kind, data))


def keeper_for(tmp_path: Path, conversation: list[JSONObject]) -> tuple[PlanKeeper, Sink, Session]:
    session, sink, book = Session(id="s", cwd=tmp_path), Sink(), PlanBook()
    session.emit = sink.emit  # type: ignore[method-assign]
    return PlanKeeper(book, session, sink, lambda: conversation), sink, session


def test_drift_is_flagged_but_declared_files_are_not(tmp_path: Path) -> None:
    keeper, sink, _ = keeper_for(tmp_path, [{"role": "user", "content": "go"}])
    assert "plan recorded (1 steps)" in keeper.commit("Fix add files: calc.py")
    assert keeper.after_write("calc.py", "x") == ""
    note = keeper.after_write("util.py", "x")
    assert "'util.py' is not among the files the plan names (calc.py)" in note
    flagged = {"message": "util.py was written, but the plan does not name it", "drift": "util.py"}
    assert ("notice", flagged) in sink.events


def test_a_plan_without_files_flags_nothing_and_no_steps_says_how(tmp_path: Path) -> None:
    keeper, _, _ = keeper_for(tmp_path, [{"role": "user", "content": "go"}])
    assert keeper.commit("   ") == NO_STEPS
    keeper.commit("look around\nthink")
    assert keeper.after_write("anything.py", "x") == ""


def test_a_checklist_write_becomes_the_plan(tmp_path: Path) -> None:
    keeper, sink, _ = keeper_for(tmp_path, [{"role": "user", "content": "go"}])
    note = keeper.after_write("PLAN.md", "- [ ] fix `calc.py`\n- [ ] add tests\n")
    assert "recorded as this session's plan (2 steps)" in note
    plan = keeper.current()
    assert plan is not None and plan.source == "file:PLAN.md"
    kinds = [kind for kind, _ in sink.events]
    assert kinds == ["plan", "notice"]


def test_the_book_finds_a_plan_in_the_event_log_and_drops_it_after_a_reset(
    tmp_path: Path,
) -> None:
    conversation: list[JSONObject] = [{"role": "user", "content": "first request"}]
    session = Session(id="s", cwd=tmp_path)
    PlanKeeper(PlanBook(), session, session, lambda: conversation).commit("a\nb")
    fresh = PlanBook()  # a restarted daemon: only the events remain
    found = fresh.current(session, conversation)
    assert found is not None and [s.text for s in found.steps] == ["a", "b"]
    assert found.anchor == conversation_anchor(conversation)
    assert fresh.current(session, []) is None  # reset
    assert fresh.current(session, [{"role": "user", "content": "another"}]) is None
