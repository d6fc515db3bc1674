"""The REPL against a real daemon, typed into through prompt_toolkit's pipe input."""

from __future__ import annotations

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
