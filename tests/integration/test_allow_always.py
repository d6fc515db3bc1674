""" "Yes, and don't ask again" (issue 26.15) and make targets in the ask mode (27.3),
through the real REPL and the real one-shot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness

MAKEFILE = (
    f"check:\n\t{sys.executable} -c 'import calc'\nlint:\n\t@echo linted\nclean:\n\trm -f calc.py\n"
)


def _tool_results(model: FakeModelServer) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def test_always_at_the_repl_prompt_stops_the_question_for_the_session(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path, repl
) -> None:
    (calc_project / "Makefile").write_text(MAKEFILE)
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make lint")]),
        Reply(tool_calls=[tool_call("run_shell", command="make -s lint")]),  # not a repeat
        Reply(content="Linted twice."),
    )
    run = repl()
    run.type("lint it\n")
    run.wait_for("[a]lways allow `make lint` in this session", "screen")
    run.type("a\n")
    run.wait_for("Linted twice.")
    assert run.finish() == 0
    assert _tool_results(model) == ["linted\n(exit 0)", "linted\n(exit 0)"]  # asked once
    assert "approved for the rest of the session" in run.err.text()


def test_allow_cmd_narrowed_and_saved_from_the_repl(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path, repl
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="echo hello there")]),
        Reply(tool_calls=[tool_call("run_shell", command="echo push now")]),
        Reply(content="Done."),
    )
    run = repl()
    run.type("/allow-cmd echo hello --save\n")
    run.wait_for("saved for every session in", "err")
    run.type("say it\n")
    run.wait_for("Done.")
    assert run.finish() == 0
    hello, push = _tool_results(model)
    assert hello == "hello there\n(exit 0)"
    assert push.startswith("refused: of echo, only echo hello may run in this session")
    saved = json.loads((sandbox.home / ".coding_harness.json").read_text())
    assert saved["agent"]["allow_commands"] == ["echo hello"]
    assert saved["providers"]  # the rest of the file is kept
    # A later one-shot, in a new session, starts with the saved entry.
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="echo hello again")]), Reply(content="ok")
    )
    later = run_harness(["-p", "say it again"], env=sandbox.env, cwd=calc_project, input="")
    assert later.returncode == 0, later.stderr
    assert _tool_results(model) == ["hello again\n(exit 0)"]


def test_make_clean_asks_in_the_ask_mode_and_no_keeps_the_source(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    (calc_project / "Makefile").write_text(MAKEFILE)
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make clean")]), Reply(content="Left it.")
    )
    run = run_harness(["-p", "tidy up"], env=sandbox.env, cwd=calc_project, input="n\n")
    assert run.returncode == 0, run.stderr
    assert (calc_project / "calc.py").exists()
    assert "Run this command?" in run.stderr and "make clean" in run.stderr
    assert _tool_results(model) == ["the user declined to run `make clean`; it did not run."]


def test_make_clean_runs_unasked_in_accept_edits(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    (calc_project / "Makefile").write_text(MAKEFILE)
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make clean")]), Reply(content="Cleaned.")
    )
    args = ["--mode", "accept-edits", "-p", "tidy up"]
    run = run_harness(args, env=sandbox.env, cwd=calc_project, input="")
    assert run.returncode == 0, run.stderr
    assert not (calc_project / "calc.py").exists() and "Run this command?" not in run.stderr
