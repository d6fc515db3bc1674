"""Several terminals on one session: attach, approve, replay, slow readers."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished, run_harness, start_daemon


def test_two_clients_see_identical_event_sequences(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project: Path
) -> None:
    model.add(
        Reply(content="Reading first.", tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="A long answer " * 20),
    )
    with client(sandbox.socket, "one") as one, client(sandbox.socket, "two") as two:
        session = one.request("session.create", {"cwd": str(calc_project)})["session"]
        one.request("session.attach", {"session": session})
        two.request("session.attach", {"session": session})
        one.request("session.submit", {"session": session, "text": "explain"})
        first, second = events_until_finished(one), events_until_finished(two)
    assert first == second
    assert [e["seq"] for e in first] == list(range(first[0]["seq"], first[0]["seq"] + len(first)))
    assert sum(e["kind"] == "text.delta" for e in first) > 10  # streamed as it arrived


def test_harness_approve_answers_for_a_oneshot_waiting_on_another_client(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    approver = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "approve"],
        env=sandbox.env,
        cwd=calc_project,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert approver.stdin is not None
        approver.stdin.write("y\n")  # read only once a request is shown
        approver.stdin.flush()
        # --stdin takes the input for the prompt, so this client cannot answer.
        oneshot = run_harness(["--stdin"], env=sandbox.env, cwd=calc_project, input="fix calc.py")
    finally:
        approver.send_signal(signal.SIGINT)
        _out, approver_err = approver.communicate(timeout=10)
    assert oneshot.returncode == 0, oneshot.stderr
    assert "waiting for another client to answer: harness approve" in oneshot.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    assert "+    return a + b" in approver_err  # the approver showed the full diff
    assert approver.returncode == 0


def test_attach_replays_history_and_submit_into_existing_session(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project: Path
) -> None:
    model.add(Reply(content="first reply"), Reply(content="second reply"))
    first = run_harness(["-p", "remember the word kumquat"], env=sandbox.env, cwd=calc_project)
    assert first.returncode == 0, first.stderr
    with client(sandbox.socket) as conn:
        [listed] = conn.request("session.list")["sessions"]
    again = run_harness(
        ["--session", listed["session"], "-p", "what was the word?"],
        env=sandbox.env,
        cwd=calc_project,
    )
    assert again.returncode == 0, again.stderr
    sent = model.requests[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "user"] == [
        "remember the word kumquat",
        "what was the word?",
    ]
    listing = run_harness(["sessions"], env=sandbox.env, cwd=calc_project)
    assert listed["session"] in listing.stdout and str(calc_project) in listing.stdout


def test_stalled_client_is_cut_off_without_slowing_others(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project: Path
) -> None:
    model.add(Reply(content="x" * 200_000))  # ~28,000 text.delta events
    with client(sandbox.socket, "fast") as fast:
        session = fast.request("session.create", {"cwd": str(calc_project)})["session"]
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(str(sandbox.socket))
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol": 1}}
        attach = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session.attach",
            "params": {"session": session},
        }
        stalled.sendall((json.dumps(hello) + "\n" + json.dumps(attach) + "\n").encode())
        waiting.wait_for(lambda: waiting.lines_waiting(stalled) >= 2, "the attach answered")
        fast.request("session.attach", {"session": session})
        fast.request("session.submit", {"session": session, "text": "go"})
        seqs, gaps, last = [], [], time.monotonic()
        while True:
            note = fast.next_notification(timeout=10)
            assert note is not None, "the fast client stopped receiving events"
            now = time.monotonic()
            gaps.append(now - last)
            last = now
            seqs.append(note["params"]["seq"])
            if note["params"]["kind"] == "turn.finished":
                break
        status = fast.request("daemon.status")
        stalled.close()
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs)))  # nothing lost, in order
    assert len(seqs) > 20_000
    assert max(gaps[1:]) < 1.0  # never held up waiting for the stalled reader
    assert status["clients"] == 1  # the stalled client was disconnected


def test_unanswered_approval_times_out_as_a_refusal(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"approval_timeout": 0.5}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="ok, left as is"),
    )
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(calc_project)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "fix"})
            events = events_until_finished(conn)
    finally:
        process.terminate()
        process.wait(timeout=10)
    resolved = next(e for e in events if e["kind"] == "approval.resolved")
    assert resolved["data"]["decision"] == "no" and "time limit" in resolved["data"]["client"]
    assert events[-1]["data"]["exit_code"] == 3
    assert (calc_project / "calc.py").read_text() == BUGGY
    told = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert "nobody answered within 0.5 s" in told[-1]


def test_close_removes_a_session_and_retention_forgets_old_ones(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            keep = conn.request("session.create", {"cwd": str(calc_project)})["session"]
            gone = conn.request("session.create", {"cwd": str(calc_project)})["session"]
            assert conn.request("session.close", {"session": gone}) == {"closed": True}
            assert [s["session"] for s in conn.request("session.list")["sessions"]] == [keep]
    finally:
        process.terminate()
        process.wait(timeout=10)
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"retention_days": 0.00001}  # about a second
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    time.sleep(1.2)
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            assert conn.request("session.list") == {"sessions": []}
    finally:
        process.terminate()
        process.wait(timeout=10)
