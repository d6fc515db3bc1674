"""An approval left waiting reaches the user: `notify.command` and the desktop notifier
run by the real daemon, with the request as JSON, and a hanging command harms nothing."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished, start_daemon, wait_for_event


def _configure(sandbox: Sandbox, **sections: Any) -> None:
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    config.update(sections)
    path.write_text(json.dumps(config))


def _fake_notify_send(sandbox: Sandbox) -> Path:
    """A `notify-send` first on the daemon's PATH that writes its arguments to a file."""
    folder = sandbox.root / "bin"
    folder.mkdir()
    script = folder / "notify-send"
    script.write_text(f"#!{sys.executable}\nimport json, sys\n"
                      f"open({str(sandbox.root / 'desktop.json')!r}, 'w').write("
                      "json.dumps(sys.argv[1:]))\n")  # fmt: skip
    script.chmod(0o755)
    sandbox.env["PATH"] = f"{folder}:{sandbox.env['PATH']}"
    return sandbox.root / "desktop.json"


@pytest.fixture
def one_edit(model: FakeModelServer, calc_project: Path) -> Path:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    return calc_project


def test_the_command_and_the_desktop_get_a_waiting_approval(
    sandbox: Sandbox, one_edit: Path
) -> None:
    out, env_dump = sandbox.root / "request.json", sandbox.root / "env.txt"
    _configure(
        sandbox,
        notify={"after_seconds": 0.3, "desktop": "on", "command": f"env > {env_dump}; cat > {out}"},
        agent={"approval_timeout": 120},
    )
    desktop = _fake_notify_send(sandbox)
    sandbox.env["MY_SERVICE_TOKEN"] = "do-not-leak"
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(one_edit)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "fix"})
            asked = wait_for_event(conn, "approval.requested")["data"]
            waiting.wait_for(lambda: out.exists() and out.read_text().endswith("\n"), "the JSON")
            waiting.wait_for(desktop.exists, "the desktop notification")
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["request"], "decision": "yes"},
            )
            events = events_until_finished(conn)
    finally:
        process.terminate()
        process.wait(timeout=10)
    sent = json.loads(out.read_text())
    assert sent["session"] == session and sent["approval"] == asked["request"]
    assert (sent["kind"], sent["path"]) == ("edit", "calc.py")
    assert sent["summary"] == asked["summary"] and sent["folder"] == str(one_edit)
    assert sent["answer"] == f"harness approve {session}"
    assert 100 < sent["times_out_in_seconds"] < 120  # the notice says when "no" comes
    assert '"no"' in sent["message"]
    title, body = json.loads(desktop.read_text())[-2:]
    assert one_edit.name in title and "calc.py" in body
    assert "do-not-leak" not in env_dump.read_text()  # the allow-listed environment only
    assert events[-1]["data"]["exit_code"] == 0  # the approval still worked
    assert (one_edit / "calc.py").read_text() == FIXED


def test_an_approval_answered_in_time_notifies_nobody(sandbox: Sandbox, one_edit: Path) -> None:
    out = sandbox.root / "request.json"
    _configure(sandbox, notify={"after_seconds": 30, "desktop": "off", "command": f"cat > {out}"})
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(one_edit)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "fix"})
            asked = wait_for_event(conn, "approval.requested")["data"]
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["request"], "decision": "no"},
            )
            events_until_finished(conn)
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert not out.exists()


def test_a_hanging_command_leaves_the_daemon_serving_and_dies_with_it(
    sandbox: Sandbox, one_edit: Path
) -> None:
    pid_file = sandbox.root / "notify.pid"
    command = f"echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; exec sleep 600"
    _configure(sandbox, notify={"after_seconds": 0, "desktop": "off", "command": command})
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(one_edit)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": "fix"})
            asked = wait_for_event(conn, "approval.requested")["data"]
            waiting.wait_for(pid_file.exists, "the notify command to start")
            assert conn.request("daemon.status")["sessions"] >= 1
            conn.request(
                "approval.respond",
                {"session": session, "request": asked["request"], "decision": "yes"},
            )
            assert events_until_finished(conn)[-1]["data"]["exit_code"] == 0
    finally:
        process.terminate()
        process.wait(timeout=10)
    assert process.returncode == 0
    pid = int(pid_file.read_text())
    waiting.wait_for(lambda: not _running(pid), "the hanging command to be killed", within=5)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))
