"""write_file, the `[r]evert` answer and `-y`'s "applied" lines, end to end: the real
`harness -p` and daemon, the fake model server over HTTP."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, wait_for_event

NOTES = "# Notes\n\nadd() is fixed.\n"
WRONG = "def add(a, b):\n    return a * b\n"


def harness(
    sandbox: Sandbox, *args: str, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input=input)


def tool_results(model: FakeModelServer) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def script_new_notes(model: FakeModelServer, project: Path) -> None:
    (project / "calc.py").write_text(FIXED)  # so that make check passes
    model.add(
        Reply(tool_calls=[tool_call("write_file", path="docs/NOTES.md", content=NOTES)]),
        Reply(content="Wrote the notes."),
    )


def test_write_file_creates_a_new_file_after_yes(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_new_notes(model, calc_project)
    result = harness(sandbox, "-p", "write notes", input="y\n")
    assert result.returncode == 0, result.stderr
    assert (calc_project / "docs" / "NOTES.md").read_text() == NOTES
    assert "+add() is fixed." in result.stderr
    assert "Apply this change?" in result.stderr
    assert tool_results(model)[0].startswith("applied: wrote 'docs/NOTES.md' (new file).")


def test_write_file_refused_after_no_exits_3(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_new_notes(model, calc_project)
    result = harness(sandbox, "-p", "write notes", input="n\n")
    assert result.returncode == 3, result.stderr
    assert not (calc_project / "docs").exists()
    assert "rejected" in tool_results(model)[0]


def test_write_file_over_an_unread_file_is_asked_even_with_yes(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("write_file", path="calc.py", content=FIXED)]),
        Reply(content="Left it."),
    )
    result = harness(sandbox, "-y", "-p", "fix calc.py", input="n\n")
    assert result.returncode == 3, result.stderr
    assert "it replaces a file not read in this session, so it is asked even with -y" in (
        result.stderr
    )
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_write_file_after_read_file_is_applied_with_yes(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("write_file", path="calc.py", content=FIXED)]),
        Reply(content="Fixed."),
    )
    result = harness(sandbox, "-y", "-p", "fix calc.py")
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    assert "make check passed" in result.stderr


def test_yes_prints_one_applied_line_per_edit(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    model.add(
        Reply(
            tool_calls=[
                tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED),
                tool_call("write_file", path="docs/NOTES.md", content=NOTES),
            ]
        ),
        Reply(content="Done."),
    )
    result = harness(sandbox, "-y", "-p", "fix and note")
    assert result.returncode == 0, result.stderr
    applied = [line for line in result.stderr.splitlines() if re.match(r"applied\b", line)]
    assert applied == [
        "applied (auto-approved): calc.py",
        "applied (auto-approved): docs/NOTES.md (new file)",
    ]


def test_revert_answer_restores_the_file_when_make_check_fails(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=WRONG)]),
        Reply(content="I will try again."),
    )
    result = harness(sandbox, "-p", "fix calc.py", input="r\n")
    assert result.returncode == 2, result.stderr
    assert "[r]evert it if the check fails" in result.stderr
    assert "make check failed" in result.stderr
    assert "reverted calc.py after the failed check" in result.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    (reply,) = tool_results(model)
    assert "so it was reverted: 'calc.py' holds its previous text again" in reply


def test_after_a_reset_a_file_read_before_counts_as_unread(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    """What the model had read goes with the history: replacing it is asked even with -y."""
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="Read it."),
        Reply(tool_calls=[tool_call("write_file", path="calc.py", content=FIXED)]),
        Reply(content="Replaced."),
    )
    with client(sandbox.socket) as conn:
        session = conn.request("session.create", {"cwd": str(calc_project)})["session"]
        conn.request("session.attach", {"session": session})
        yes = {"session": session, "options": {"yes": True, "route": "coding"}}
        conn.request("session.submit", {**yes, "text": "read calc.py"})
        wait_for_event(conn, "turn.finished")
        conn.request("session.reset", {"session": session})
        conn.request("session.submit", {**yes, "text": "replace calc.py"})
        asked = wait_for_event(conn, "approval.requested")
        assert "not read in this session" in asked["data"]["summary"]
        conn.request("approval.respond", {"request": asked["data"]["request"], "decision": "no"})
        wait_for_event(conn, "turn.finished")
    assert (calc_project / "calc.py").read_text() == BUGGY
