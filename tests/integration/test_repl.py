"""The REPL against a real daemon, typed into through prompt_toolkit's pipe input."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from coding_harness.client.args import OneShotOptions
from coding_harness.client.repl import run_repl
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import start_daemon


@pytest.fixture
def repl_env(
    sandbox: Sandbox, model: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    for key, value in sandbox.env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    process = start_daemon(sandbox.socket, sandbox.env)
    yield
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def test_repl_submits_answers_approval_and_quits(
    sandbox: Sandbox,
    model: FakeModelServer,
    calc_project,
    repl_env,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model.add(
        Reply(content="Hello there."),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )
    with create_pipe_input() as pipe:
        pipe.send_text("/help\nsay hi\nfix calc\ny\n/quit\n")
        code = run_repl(
            OneShotOptions(cwd=str(calc_project), plain=True),
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
    out, err = capsys.readouterr()
    assert code == 0
    assert "/quit" in out  # the help text
    assert "Hello there." in out and "Fixed it." in out
    assert "+    return a + b" in err
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


def test_save_reset_load_and_history(
    sandbox: Sandbox,
    model: FakeModelServer,
    calc_project,
    repl_env,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model.add(Reply(content="The word is kumquat."), Reply(content="Still kumquat."))
    saved = sandbox.root / "conversation.json"
    broken = sandbox.root / "broken.json"
    broken.write_text('{"messages": [{"role": "wizard"}]}')
    script = (
        "remember kumquat\n"
        f"/save {saved}\n"
        "/reset\n"
        "/history\n"
        f"/load {broken}\n"
        f"/load {saved}\n"
        "/history\n"
        "what was it?\n"
        "/quit\n"
    )
    with create_pipe_input() as pipe:
        pipe.send_text(script)
        code = run_repl(
            OneShotOptions(cwd=str(calc_project), plain=True),
            pt_input=pipe,
            pt_output=DummyOutput(),
        )
    _out, err = capsys.readouterr()
    assert code == 0
    saved_messages = json.loads(saved.read_text())["messages"]
    assert [m["role"] for m in saved_messages] == ["user", "assistant"]
    assert "conversation cleared" in err and "(no messages yet)" in err
    assert "history not loaded: message 0" in err  # the bad file is refused...
    assert "loaded 2 messages" in err  # ...and the good one accepted
    assert err.count("> remember kumquat") == 1  # /history after the load shows it
    sent = model.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "remember kumquat",
        "what was it?",
    ]
