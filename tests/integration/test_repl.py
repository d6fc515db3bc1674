"""The REPL against a real daemon, typed into through prompt_toolkit's pipe input.

The REPL runs on a thread of the test, exactly as at a terminal: its prompt
stays open while turns stream, so each test types a line, waits for what it
should print, then types the next. Its screen is a VT100 output recorded in
a string; its standard output and error are recording streams.
"""

from __future__ import annotations

import json

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from coding_harness.client.args import OneShotOptions
from coding_harness.client.repl.repl import run_repl
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client
from tests.support.repl_run import user_messages


def test_repl_submits_answers_approval_and_quits(
    sandbox: Sandbox, model: FakeModelServer, calc_project, repl
) -> None:
    model.add(
        Reply(content="Hello there."),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )
    run = repl()
    run.type("/help\n")
    run.wait_for("/quit")  # the help text
    run.type("say hi\n")
    run.wait_for("Hello there.")
    run.type("/context\n")
    run.wait_for("context:")  # a table: one row per message
    assert "assistant" in run.out.text()
    run.type("fix calc\n")
    run.wait_for("Apply this change?", "screen")
    assert "+    return a + b" in run.err.text()
    run.type("y\n")
    run.wait_for("Fixed it.")
    assert run.finish() == 0
    assert (calc_project / "calc.py").read_text() == FIXED
    history = (sandbox.home / ".coding_agent_history").read_text()
    assert "say hi" in history and "fix calc" in history
    assert "\n+y\n" not in history  # the approval answer is not a task


def test_repl_end_of_input_leaves_cleanly(sandbox: Sandbox, calc_project, repl_env) -> None:
    with create_pipe_input() as pipe:
        pipe.close()
        assert (
            run_repl(OneShotOptions(cwd=str(calc_project)), pt_input=pipe, pt_output=DummyOutput())
            == 0
        )


def test_save_reset_load_and_history(sandbox: Sandbox, model: FakeModelServer, repl) -> None:
    model.add(Reply(content="The word is kumquat."), Reply(content="Still kumquat."))
    saved = sandbox.root / "conversation.json"
    broken = sandbox.root / "broken.json"
    broken.write_text('{"messages": [{"role": "wizard"}]}')
    run = repl()
    run.type("remember kumquat\n")
    run.wait_for("The word is kumquat.")
    run.type(f"/save {saved}\n/reset\n/history\n/load {broken}\n/load {saved}\n/history\n")
    run.wait_for("replaced by 2 loaded messages", "err")
    run.type("what was it?\n")
    run.wait_for("Still kumquat.")
    assert run.finish() == 0
    err = run.err.text()
    saved_messages = json.loads(saved.read_text())["messages"]
    assert [m["role"] for m in saved_messages] == ["user", "assistant"]
    assert "(no messages yet)" in err
    # One line per outcome: the daemon's notice, not the command's echo of it too.
    assert err.count("conversation cleared") == 1 and "history replaced" not in err
    assert "history not loaded: message 0" in err  # the bad file is refused...
    assert err.count("replaced by 2 loaded messages") == 1  # ...the good one taken, said once
    assert err.count("> remember kumquat") == 1  # /history after the load shows it
    assert user_messages(model) == ["remember kumquat", "what was it?"]


def test_skip_asks_for_the_reason_and_sends_it(
    sandbox: Sandbox, model: FakeModelServer, calc_project, repl
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Understood."),
    )
    run = repl()
    run.type("fix calc\n")
    run.wait_for("Apply this change?", "screen")
    run.type("s\n")
    run.wait_for("Reason for the model", "screen")
    run.type("add a docstring too\n")
    run.wait_for("Understood.")
    assert run.finish() == 0
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert any("add a docstring too" in result for result in results)
    assert "add a docstring too" not in (sandbox.home / ".coding_agent_history").read_text()


def test_an_approval_answered_elsewhere_withdraws_the_question(
    sandbox: Sandbox, model: FakeModelServer, calc_project, repl
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Left it alone."),
        Reply(content="Hi again."),
    )
    run = repl()
    run.type("fix calc\n")
    run.wait_for("Apply this change?", "screen")
    with client(sandbox.socket, "other") as other:
        [listed] = other.request("session.list")["sessions"]
        other.request("session.attach", {"session": listed["session"]})  # sends what is pending
        pending = other.next_notification(timeout=5) or {}
        request = pending["params"]["data"]["request"]
        other.request("approval.respond", {"request": request, "decision": "no"})
        run.wait_for("Left it alone.")
    run.type("say hi\n")  # a task again, not an answer
    run.wait_for("Hi again.")
    assert run.finish() == 0
    err = run.err.text()
    assert (
        "rejected in another terminal (other, pid " in err
        and "(other, pid" not in err.split("rejected in another terminal")[0]
    )
    assert "(edit rejected)" in err and "exit code" not in err  # said as a person would
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_a_command_approval_is_asked_as_a_command(
    sandbox: Sandbox, model: FakeModelServer, repl
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="uv run pytest")]),
        Reply(content="Left it."),
    )
    run = repl()
    run.type("run the tests\n")
    run.wait_for("Run this command?", "screen")
    assert "run the command `uv run pytest` in the workspace" in run.err.text()
    run.type("n\n")
    run.wait_for("Left it.")
    assert run.finish() == 0
    tools = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert tools == ["the user declined to run `uv run pytest`; it did not run."]


def test_a_history_file_that_cannot_be_used_costs_only_the_recall(
    sandbox: Sandbox, model: FakeModelServer, repl
) -> None:
    (sandbox.home / ".coding_agent_history").mkdir()  # neither readable nor writable as a file
    model.add(Reply(content="Hello there."))
    run = repl()
    run.type("say hi\n")
    run.wait_for("Hello there.")
    assert run.finish() == 0


def test_revert_is_an_answer_at_the_repl_prompt(
    sandbox: Sandbox, model: FakeModelServer, calc_project, repl
) -> None:
    wrong = "def add(a, b):\n    return a * b\n"
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=wrong)]),
        Reply(content="Tried."),
    )
    run = repl()
    run.type("fix calc\n")
    run.wait_for("[r]evert it if the check fails", "screen")
    run.type("r\n")
    run.wait_for("Tried.")
    assert run.finish() == 0
    assert (calc_project / "calc.py").read_text() == BUGGY  # make check failed: put back
    assert "Please answer" not in run.err.text()


def test_budget_shows_what_is_used_and_left(sandbox: Sandbox, model: FakeModelServer, repl) -> None:
    model.add(Reply(content="Hello there.", prompt_tokens=100, completion_tokens=20))
    run = repl()
    run.type("say hi\n")
    run.wait_for("Hello there.")
    run.type("/budget 5000\n")
    run.wait_for("5,000 tokens", "err")
    run.type("/budget\n")
    run.wait_for("session token budget: 5,000 (120 used, 4,880 left)", "err")
    assert run.finish() == 0
