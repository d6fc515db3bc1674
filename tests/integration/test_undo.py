"""`harness undo` against the real daemon: files the agent wrote go back, bytes and mode."""

from __future__ import annotations

import signal
import stat
import subprocess
import sys
from pathlib import Path

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, start_daemon

NEW = "print('new')\n"


def agent_turn(sandbox: Sandbox, model: FakeModelServer, project: Path) -> None:
    """One turn that edits calc.py and creates tools/new.py, applied with -y."""
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(tool_calls=[tool_call("write_file", path="tools/new.py", content=NEW)]),
        Reply(content="Done."),
    )
    done = run_harness(["-y", "-p", "fix calc.py"], env=sandbox.env, cwd=project)
    assert done.returncode == 0, done.stderr
    assert (project / "calc.py").read_text() == FIXED
    assert (project / "tools" / "new.py").read_text() == NEW


def undo(sandbox: Sandbox, project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_harness(["undo", *args], env=sandbox.env, cwd=project)


def test_undo_puts_back_what_the_turn_wrote_and_can_itself_be_undone(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    (calc_project / "calc.py").chmod(0o640)
    agent_turn(sandbox, model, calc_project)
    listed = undo(sandbox, calc_project, "--list").stdout
    assert "calc.py" in listed and "tools/new.py" in listed
    done = undo(sandbox, calc_project)
    assert done.returncode == 0, done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert stat.S_IMODE((calc_project / "calc.py").stat().st_mode) == 0o640
    assert not (calc_project / "tools" / "new.py").exists()
    assert "-    return a + b" in done.stderr and "+    return a - b" in done.stderr
    assert "harness undo --turn undo-1" in done.stdout
    again = undo(sandbox, calc_project, "--turn", "undo-1")  # the undo undone
    assert again.returncode == 0, again.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    assert (calc_project / "tools" / "new.py").read_text() == NEW


def test_a_file_changed_since_is_refused_unless_forced_and_the_model_is_told(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    agent_turn(sandbox, model, calc_project)
    mine = "def add(a, b):\n    return b + a  # my own change\n"
    (calc_project / "calc.py").write_text(mine)
    refused = undo(sandbox, calc_project)
    assert refused.returncode == 3
    assert "not put back: calc.py: changed since the agent wrote it" in refused.stderr
    assert (calc_project / "calc.py").read_text() == mine  # someone else's edit stays
    assert not (calc_project / "tools" / "new.py").exists()
    [turn] = [line.split()[0] for line in undo(sandbox, calc_project, "--list").stdout.splitlines()
              if "calc.py" in line]  # fmt: skip
    forced = undo(sandbox, calc_project, "--turn", turn, "--force")
    assert forced.returncode == 0, forced.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    with client(sandbox.socket, "check") as check:
        session = check.request("session.list", {})["sessions"][0]["session"]
    model.add(Reply(content="Noted."))
    run_harness(["--session", session, "-p", "what now?"], env=sandbox.env, cwd=calc_project)
    told = model.requests[-1]["messages"][-1]["content"]
    assert told.startswith("[Note: the user undid the file changes of turn")
    assert "calc.py" in told and told.endswith("what now?")


def test_undo_after_a_daemon_restart(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes], calc_project: Path
) -> None:
    agent_turn(sandbox, model, calc_project)
    daemon.send_signal(signal.SIGKILL)
    daemon.wait(timeout=10)
    restarted = start_daemon(sandbox.socket, sandbox.env)
    try:
        done = undo(sandbox, calc_project)
        assert done.returncode == 0, done.stderr
        assert (calc_project / "calc.py").read_text() == BUGGY
        assert not (calc_project / "tools" / "new.py").exists()
        with client(sandbox.socket, "check") as check:
            session = check.request("session.list", {})["sessions"][0]["session"]
            left = check.request("session.checkpoints", {"session": session})["checkpoints"]
        assert [c["turn"] for c in left] == ["undo-1"]
    finally:
        restarted.terminate()
        restarted.wait(timeout=10)


def test_nothing_to_undo_says_so(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    model.add(Reply(content="Hello."))
    run_harness(["-p", "hello"], env=sandbox.env, cwd=calc_project)
    done = undo(sandbox, calc_project)
    assert done.returncode == 5
    assert "nothing to undo" in done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_files_a_make_recipe_changed_are_put_back_too(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    (calc_project / "version.txt").write_text("1\n")
    (calc_project / "Makefile").write_text(
        "check:\n\techo 2 > version.txt\n\techo made > generated.txt\n"
    )
    agent_turn(sandbox, model, calc_project)
    assert (calc_project / "version.txt").read_text() == "2\n"
    assert (calc_project / "generated.txt").exists()
    done = undo(sandbox, calc_project)
    assert done.returncode == 0, done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert (calc_project / "version.txt").read_text() == "1\n"  # changed by make: back
    assert not (calc_project / "generated.txt").exists()  # created by make: removed
    assert not (calc_project / "tools" / "new.py").exists()


def test_build_outputs_the_project_ignores_are_not_the_turns_changes(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    """A check that compiles bytecode and writes what a nested .gitignore ignores: only
    the agent's own files are listed, and undo leaves the outputs alone."""
    (calc_project / "docs").mkdir()
    (calc_project / "docs" / ".gitignore").write_text("_build/\n")
    compile_calc = f"{sys.executable} -c 'import py_compile; py_compile.compile(\"calc.py\")'"
    (calc_project / "Makefile").write_text(
        f"check:\n\t{compile_calc}\n\tmkdir -p docs/_build\n\techo html > docs/_build/index.html\n"
    )
    agent_turn(sandbox, model, calc_project)
    assert list((calc_project / "__pycache__").glob("calc.*.pyc"))
    listed = undo(sandbox, calc_project, "--list")
    assert listed.returncode == 0, listed.stderr
    assert "calc.py" in listed.stdout and "tools/new.py" in listed.stdout
    assert "__pycache__" not in listed.stdout and "_build" not in listed.stdout
    done = undo(sandbox, calc_project)
    assert done.returncode == 0, done.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert (calc_project / "docs" / "_build" / "index.html").exists()
