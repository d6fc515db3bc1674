"""Sessions over the protocol client: approvals, cancel, replay, peers."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, wait_for_event


def open_session(conn: Connection, cwd: str) -> str:
    session = conn.request("session.create", {"cwd": cwd})["session"]
    conn.request("session.attach", {"session": session})
    return session


wait_for = wait_for_event


def test_two_clients_see_the_approval_first_answer_wins(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    with client(sandbox.socket, "first") as first, client(sandbox.socket, "second") as second:
        session = open_session(first, str(calc_project))
        second.request("session.attach", {"session": session})
        first.request("session.submit", {"session": session, "text": "fix it"})
        asked_first = wait_for(first, "approval.requested")
        asked_second = wait_for(second, "approval.requested")
        assert asked_first == asked_second and "+    return a + b" in asked_first["data"]["diff"]
        request = asked_first["data"]["request"]
        second.request("approval.respond", {"request": request, "decision": "yes"})
        with pytest.raises(errors.ApprovalNotPending, match="already resolved by c"):
            first.request("approval.respond", {"request": request, "decision": "no"})
        resolved = wait_for(first, "approval.resolved")
        assert resolved["data"]["decision"] == "yes" and "second" in resolved["data"]["client"]
        finished = wait_for(first, "turn.finished")
        assert finished["data"]["exit_code"] == 0
    assert (calc_project / "calc.py").read_text() == FIXED


def test_late_attach_sees_pending_approval_and_replays_missed_events(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(
        Reply(
            content="Proposing.",
            tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)],
        ),
        Reply(content="ok"),
    )
    with client(sandbox.socket, "first") as first:
        session = open_session(first, str(calc_project))
        first.request("session.submit", {"session": session, "text": "fix it"})
        asked = wait_for(first, "approval.requested")
    # The only client left while the approval waits: nothing was written.
    assert (calc_project / "calc.py").read_text() == BUGGY
    with client(sandbox.socket, "late") as late:
        late.request("session.attach", {"session": session})
        shown = wait_for(late, "approval.requested", timeout=5)
        assert shown["seq"] == asked["seq"]
        late.request("approval.respond", {"request": asked["data"]["request"], "decision": "no"})
        finished = wait_for(late, "turn.finished")
        assert finished["data"]["exit_code"] == 3
    with client(sandbox.socket, "replay") as replay:
        replay.request("session.attach", {"session": session, "since_seq": 0})
        seqs, kinds = [], []
        while True:
            note = replay.next_notification(timeout=5)
            assert note is not None
            seqs.append(note["params"]["seq"])
            kinds.append(note["params"]["kind"])
            if note["params"]["kind"] == "turn.finished":
                break
    assert seqs == list(range(1, len(seqs) + 1))
    assert kinds[0] == "turn.started" and "approval.resolved" in kinds


def test_cancel_stops_a_slow_model_and_repairs_history(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]), Reply(content="slow", delay=30)
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, str(calc_project))
        conn.request("session.submit", {"session": session, "text": "look"})
        wait_for(conn, "tool.result")
        waiting.wait_for(lambda: len(model.requests) >= 2, "the second model call")
        assert conn.request("session.cancel", {"session": session}) == {"cancelled": True}
        finished = wait_for(conn, "turn.finished", timeout=5)
        assert finished["data"]["exit_code"] == 130
        history = conn.request("session.history", {"session": session})["messages"]
    calls = {c["id"] for m in history if m["role"] == "assistant" for c in m.get("tool_calls", [])}
    results = {m["tool_call_id"] for m in history if m["role"] == "tool"}
    assert calls == results


def test_ctrl_c_in_oneshot_exits_130(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(Reply(content="never", delay=30))
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "-p", "slow please"],
        env=sandbox.env,
        cwd=calc_project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 10
    while not model.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=15)
    assert process.returncode == 130, err


def test_submit_queues_behind_running_turn(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    model.add(Reply(content="first", delay=0.5), Reply(content="second"))
    with client(sandbox.socket) as conn:
        session = open_session(conn, str(calc_project))
        one = conn.request("session.submit", {"session": session, "text": "a"})
        two = conn.request("session.submit", {"session": session, "text": "b"})
        assert (one["queued"], two["queued"]) == (False, True)
        assert wait_for(conn, "turn.queued")["data"]["turn"] == two["turn"]
        replies = [wait_for(conn, "turn.finished")["data"]["reply"] for _ in range(2)]
    assert replies == ["first", "second"]


def test_tool_child_cannot_approve_or_submit(
    sandbox: Sandbox, model: FakeModelServer, daemon, calc_project
) -> None:
    """A `make check` recipe that talks to the socket is refused."""
    probe = calc_project / "probe.py"
    probe.write_text(
        "import sys\n"
        "from coding_harness.protocol.client import connect\n"
        "from coding_harness.protocol import errors\n"
        "from pathlib import Path\n"
        f"c = connect(Path({str(sandbox.socket)!r})); c.initialize('sneaky', '0')\n"
        "try:\n"
        "    c.request('approval.respond', {'request': 'a1', 'decision': 'yes'})\n"
        "except errors.PeerRefused:\n"
        "    print('REFUSED')\n"
    )
    (calc_project / "Makefile").write_text(f"check:\n\t{sys.executable} probe.py\n")
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, str(calc_project))
        conn.request(
            "session.submit", {"session": session, "text": "fix", "options": {"yes": True}}
        )
        check = wait_for(conn, "check.result")
    assert "REFUSED" in check["data"]["output"]


def test_search_toggle_flips_what_is_in_force(sandbox: Sandbox, daemon) -> None:
    with client(sandbox.socket) as conn:
        session = open_session(conn, str(sandbox.workspace))
        toggle = {"session": session, "search": "toggle"}
        first = conn.request("session.configure", toggle)["options"]["search_enabled"]
        second = conn.request("session.configure", toggle)["options"]["search_enabled"]
    assert (first, second) == (True, False)  # the config leaves search off by default
