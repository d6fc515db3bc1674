"""A question answered in one terminal goes from every other at once (issue 26.2, 26.8).

The one-shot runs as a process whose standard input stays open and silent, as
a person who has not pressed a key yet; another client answers its question.
`harness approve` reads its answers from a pipe and leaves at its end.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished, run_harness, wait_for_event

HARNESS = [sys.executable, "-m", "coding_harness.client"]


def _script_edit(model: FakeModelServer) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )


def _only_session(sandbox: Sandbox) -> str:
    found: list[str] = []

    def listed() -> bool:
        with client(sandbox.socket, "lister", approvals=False) as conn:
            found[:] = [s["session"] for s in conn.request("session.list")["sessions"]]
        return bool(found)

    waiting.wait_for(listed, "the one-shot's session")
    return found[0]


def _finish(
    process: subprocess.Popen[str], input: str | None = None, timeout: float = 30
) -> tuple[int, str]:
    """The exit code and standard error of `process`, given `input` and then the end of
    its input (when given); killed (and the test failed) when it does not end by itself."""
    try:
        _out, err = process.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _out, err = process.communicate()
        raise AssertionError(f"the client was still waiting after {timeout} s:\n{err}") from None
    return process.returncode, err


def test_a_oneshot_question_answered_elsewhere_goes_and_the_run_ends(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    _script_edit(model)
    oneshot = subprocess.Popen(
        [*HARNESS, "-p", "fix calc.py"],
        env=sandbox.env,
        cwd=calc_project,
        stdin=subprocess.PIPE,  # open, and nothing typed
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        session = _only_session(sandbox)
        with client(sandbox.socket, "harness-attach") as other:
            other.request("session.attach", {"session": session})
            asked = wait_for_event(other, "approval.requested")
            other.request(
                "approval.respond",
                {"session": session, "request": asked["data"]["request"], "decision": "yes"},
            )
            code, err = _finish(oneshot)
    finally:
        if oneshot.poll() is None:
            oneshot.kill()
            oneshot.communicate()
    assert code == 0, err
    assert (calc_project / "calc.py").read_text() == FIXED
    assert "approved in another terminal (harness attach, pid " in err
    assert "still waiting" not in err
    assert "(harness-attach" not in err and "yes from" not in err  # no internal labels


def test_echo_y_into_harness_approve_answers_once_and_exits(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    _script_edit(model)
    with client(sandbox.socket, "submitter", approvals=False) as conn:
        session = conn.request("session.create", {"cwd": str(calc_project)})["session"]
        conn.request("session.attach", {"session": session})
        conn.request("session.submit", {"session": session, "text": "fix calc.py"})
        wait_for_event(conn, "approval.requested")
        approver = subprocess.Popen(
            [*HARNESS, "approve", session],
            env=sandbox.env,
            cwd=calc_project,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        code, err = _finish(approver, "y\n")  # then the end of input: `echo y |`
        events = events_until_finished(conn)
    assert code == 0, err
    assert events[-1]["data"]["exit_code"] == 0
    assert (calc_project / "calc.py").read_text() == FIXED
    assert "approved" in err


def test_harness_approve_drops_a_question_another_client_answered(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    _script_edit(model)
    with client(sandbox.socket, "harness-repl") as conn:
        session = conn.request("session.create", {"cwd": str(calc_project)})["session"]
        conn.request("session.attach", {"session": session})
        approver = subprocess.Popen(
            [*HARNESS, "approve", session],
            env=sandbox.env,
            cwd=calc_project,
            stdin=subprocess.PIPE,  # open and silent
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            waiting.wait_for(lambda: _attached(conn, session) >= 2, "harness approve attached")
            conn.request("session.submit", {"session": session, "text": "fix calc.py"})
            asked = wait_for_event(conn, "approval.requested")
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["data"]["request"], "decision": "no"},
            )
            assert events_until_finished(conn)[-1]["data"]["exit_code"] == 3
        finally:
            code, err = _finish(approver, "")  # the end of its input
    assert code == 0, err
    assert "rejected in another terminal (harness REPL, pid " in err


def _attached(conn: Any, session: str) -> int:
    listed = conn.request("session.list")["sessions"]
    return int(next(s for s in listed if s["session"] == session)["clients"])


def test_a_oneshot_answered_by_pipe_says_approved_without_a_label(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    _script_edit(model)
    run = run_harness(["-p", "fix calc.py"], env=sandbox.env, cwd=calc_project, input="y\n")
    assert run.returncode == 0, run.stderr
    assert "approved" in run.stderr and "pid" not in run.stderr
