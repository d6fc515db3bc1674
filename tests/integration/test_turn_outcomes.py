"""What `harness -p` shows of a turn into a pipe (issue 26, items 5, 6 and 7): the
check after an edit by name with its time and last lines, a refusal as a refusal
with the way to allow it, an edit not written as not written, and each command's
output folded under it (whole with --verbose).

The real `harness` command against a real daemon and the fake model server; its
standard error is what a user reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import TIME, stdio_server, use_servers
from tests.support.oneshot import harness

pytestmark = pytest.mark.integration


def fix_then(model: FakeModelServer, final: str = "Fixed it.") -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content=final),
    )


def test_the_check_is_named_with_its_time(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    fix_then(model)
    done = harness(sandbox, "-y", "-p", "fix calc.py")
    assert done.returncode == 0, done.stderr
    assert "running make check ..." in done.stderr
    assert re.search(r"make check passed \(\d+\.\d s\)", done.stderr), done.stderr


def test_a_failed_check_shows_its_time_and_last_lines(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    lines = "".join(f"\t@echo line {n}\n" for n in range(1, 31))
    (calc_project / "Makefile").write_text(f"check:\n{lines}\t@false\n")
    fix_then(model)
    done = harness(sandbox, "-y", "-p", "fix calc.py")
    assert done.returncode == 2, done.stderr
    assert re.search(r"make check failed \(exit 2, \d+\.\d s\)", done.stderr), done.stderr
    assert "  line 30" in done.stderr
    assert "  line 10\n" not in done.stderr  # the last lines, not all of them


def test_a_refused_command_says_how_to_allow_it(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="git log")]),
        Reply(content="I could not read the log."),
    )
    done = harness(sandbox, "-p", "what changed lately?")
    assert done.returncode == 0, done.stderr
    call = done.stderr.index("• run_shell 'git log'")
    under = done.stderr[call:].splitlines()[1:3]
    assert under[0] == "  ⎿ refused: 'git' is not allowed", done.stderr
    assert "`/allow-cmd git` in the REPL lets it run" in under[1], done.stderr


def test_a_write_refused_in_read_only_mode_says_so(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    fix_then(model, "Plan: 1. fix add.")
    done = harness(sandbox, "--mode", "read-only", "-p", "fix calc.py")
    assert "refused: the session is read-only (plan mode), and nothing is written" in done.stderr
    assert "`/mode ask` or `/mode accept-edits`" in done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_a_dry_run_edit_says_not_written(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    fix_then(model)
    done = harness(sandbox, "--dry-run", "-p", "fix calc.py")
    assert done.returncode == 0, done.stderr
    assert "  ⎿ not written: dry run (calc.py)" in done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_a_rejected_edit_is_said_after_the_reply(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    fix_then(model, "Fixed it.")
    done = harness(sandbox, "-p", "fix calc.py", input="n\n")
    assert done.returncode == 3
    assert done.stdout == "Fixed it.\n"
    assert "  ⎿ edit rejected: calc.py not written" in done.stderr
    # The model's "Fixed it" does not get the last word: the turn's end says it again.
    assert done.stderr.rstrip().endswith("edit rejected: calc.py not written"), done.stderr


def test_a_command_output_is_folded_under_it(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    (calc_project / "long.txt").write_text("".join(f"row {n}\n" for n in range(1, 41)))
    for _ in range(2):
        model.add(
            Reply(tool_calls=[tool_call("run_shell", command="cat long.txt")]),
            Reply(content="Forty rows."),
        )
    folded = harness(sandbox, "-p", "count the rows").stderr
    block = folded[folded.index("• run_shell 'cat long.txt'") :].splitlines()[1:9]
    assert block == [
        "  ⎿ row 1",
        "    row 2",
        "    row 3",
        "    … 34 more lines (--verbose shows them)",
        "    row 38",
        "    row 39",
        "    row 40",
        "    exit 0",
    ], folded
    whole = harness(sandbox, "--verbose", "-p", "count the rows").stderr
    assert all(f"    row {n}\n" in whole for n in range(2, 41)), whole
    assert "more lines" not in whole


def test_an_mcp_answer_is_shown_under_its_call(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME, approve="never")})
    model.add(
        Reply(tool_calls=[tool_call("mcp__time__get_current_time", timezone="UTC")]),
        Reply(content="It is now."),
    )
    done = harness(sandbox, "-p", "what time is it in UTC?")
    assert done.returncode == 0, done.stderr
    after = done.stderr[done.stderr.index("• mcp__time__get_current_time") :].splitlines()
    assert after[1].startswith("  ⎿ "), done.stderr
    assert '"timezone": "UTC"' in "\n".join(after[1:10]), done.stderr
    assert "[result of the MCP tool" not in done.stderr
