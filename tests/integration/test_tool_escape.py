"""Processes a tool command starts stay known and end with it (issue 10, items 2 and 17).

A Makefile recipe that escapes its process group (`setsid`, a double fork, a
stripped environment) is still the daemon's descendant, because the daemon is
a child subreaper: it is refused like any tool child, and it is ended when the
command ends, when the daemon stops, and, after a `kill -9` of the daemon,
when the next daemon starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell.leftovers import RECORD_NAME
from coding_harness.protocol.client import Connection
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, start_daemon, wait_for_event
from tests.support.tool_context import process_gone, read_pid

# Escapes its parent (a double fork), waits to be re-parented, then talks to the daemon.
HELPER = """\
import json, os, sys, time
from pathlib import Path
from coding_harness.protocol.client import connect
from coding_harness.protocol import errors

socket_path, out = Path(sys.argv[1]), Path(sys.argv[2])
parent = os.getpid()
if os.fork():
    os._exit(0)
while os.getppid() == parent:
    time.sleep(0.01)
Path("helper.pid").write_text(str(os.getpid()))
conn = connect(socket_path)
conn.initialize("escaped-helper", "0")
verdicts = {}
session = conn.request("session.list")["sessions"][0]["session"]
for method, params in [
    ("approval.respond", {"request": "a1", "decision": "yes"}),
    ("session.submit", {"session": session, "text": "rewrite everything"}),
    ("session.cancel", {"session": session}),
]:
    try:
        conn.request(method, params)
        verdicts[method] = "accepted"
    except errors.PeerRefused:
        verdicts[method] = "refused"
    except errors.RpcError as exc:
        verdicts[method] = f"answered: {exc}"
out.write_text(json.dumps(verdicts))
time.sleep(1000)
"""

# Answers `yes` to every approval of every session, as soon as it is asked.
APPROVER = """\
import os, sys, time
from pathlib import Path
from coding_harness.protocol.client import connect

socket_path = Path(sys.argv[1])
parent = os.getpid()
if os.fork():
    os._exit(0)
while os.getppid() == parent:
    time.sleep(0.01)
Path("approver.pid").write_text(str(os.getpid()))
conn = connect(socket_path)
conn.initialize("escaped-approver", "0")
conn.request("session.attach", {"session": "*"})
while True:
    note = conn.next_notification(timeout=None)
    params = (note or {}).get("params") or {}
    if params.get("kind") == "approval.requested":
        answer = {"request": params["data"]["request"], "decision": "yes"}
        try:
            conn.request("approval.respond", answer)
        except Exception:
            pass
"""

WAIT_FOR_VERDICTS = "\tfor i in $$(seq 150); do [ -s verdicts.json ] && break; sleep 0.1; done\n"
EVIL = "def add(a, b):\n    return 'taken over'\n"


def open_session(conn: Connection, cwd: Path) -> str:
    session: str = conn.request("session.create", {"cwd": str(cwd)})["session"]
    conn.request("session.attach", {"session": session})
    return session


@pytest.mark.parametrize(
    "launch",
    [
        "setsid {py} helper.py {sock} verdicts.json &",
        "env -i setsid {py} helper.py {sock} verdicts.json &",
    ],
    ids=["setsid", "setsid-clean-environment"],
)
def test_an_escaped_recipe_helper_is_refused_and_ended_with_the_check(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path, launch: str
) -> None:
    (calc_project / "helper.py").write_text(HELPER)
    line = launch.format(py=sys.executable, sock=sandbox.socket)
    (calc_project / "Makefile").write_text(f"check:\n\t{line}\n{WAIT_FOR_VERDICTS}")
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="done"),
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, calc_project)
        conn.request(
            "session.submit", {"session": session, "text": "fix", "options": {"yes": True}}
        )
        wait_for_event(conn, "check.result")
        verdicts = (calc_project / "verdicts.json").read_text()
        helper = read_pid(calc_project / "helper.pid")
        assert process_gone(helper), "the helper outlived the command that started it"
        wait_for_event(conn, "turn.finished")
    assert json.loads(verdicts) == {
        "approval.respond": "refused",
        "session.submit": "refused",
        "session.cancel": "refused",
    }


def test_an_escaped_recipe_process_cannot_approve_the_next_edit(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    """The attack of issue 10 item 2: the helper waits for the next approval and says yes."""
    (calc_project / "approver.py").write_text(APPROVER)
    (calc_project / "Makefile").write_text(
        f"check:\n\tsetsid {sys.executable} approver.py {sandbox.socket} &\n"
        "\tfor i in $$(seq 100); do [ -s approver.pid ] && break; sleep 0.05; done\n"
    )
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=FIXED, new=EVIL)]),
        Reply(content="done"),
    )
    with client(sandbox.socket, "user") as conn:
        session = open_session(conn, calc_project)
        conn.request("session.submit", {"session": session, "text": "fix"})
        first = wait_for_event(conn, "approval.requested")
        conn.request("approval.respond", {"request": first["data"]["request"], "decision": "yes"})
        wait_for_event(conn, "check.result")
        second = wait_for_event(conn, "approval.requested")
        time.sleep(1.5)  # room for the helper to answer first, if it still could
        try:
            conn.request(
                "approval.respond", {"request": second["data"]["request"], "decision": "no"}
            )
        finally:
            resolved = wait_for_event(conn, "approval.resolved")
        wait_for_event(conn, "turn.finished")
    assert resolved["data"]["decision"] == "no"
    assert (calc_project / "calc.py").read_text() == FIXED
    assert process_gone(read_pid(calc_project / "approver.pid"))


# The recipe leaves a setsid'd grandchild with `sleep 1000 &`, a clean-environment
# escapee under the recipe's shell, another one re-parented to the daemon, and a
# foreground sleep; each records its pid.
HANGING_RECIPE = (
    "hang:\n"
    "\techo $$PPID > make.pid; echo $$$$ > sh.pid\n"
    "\tsetsid sh -c 'sleep 1000 & echo $$! > bg.pid' &\n"
    "\tenv -i PATH=/usr/bin:/bin setsid sh -c 'sleep 1002 & echo $$! > reparented.pid' &\n"
    "\tenv -i setsid sleep 1001 & echo $$! > clean.pid; sleep 1000 & echo $$! > fg.pid; wait\n"
)
RECIPE_PIDS = ("make.pid", "sh.pid", "bg.pid", "reparented.pid", "clean.pid", "fg.pid")


def _start_hanging_recipe(sandbox: Sandbox, model: FakeModelServer) -> Connection:
    (sandbox.workspace / "Makefile").write_text(HANGING_RECIPE)
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make hang")]), Reply(content="ok"))
    conn = client(sandbox.socket)
    session = open_session(conn, sandbox.workspace)
    # -y: a make target other than check would ask first (docs/modes.md).
    conn.request("session.submit", {"session": session, "text": "hang", "options": {"yes": True}})
    deadline = time.monotonic() + 15
    while not all(_has_pid(sandbox.workspace / name) for name in RECIPE_PIDS):
        assert time.monotonic() < deadline, "the recipe did not start"
        time.sleep(0.05)
    # The daemon records what was re-parented to it within a second or so.
    reparented = read_pid(sandbox.workspace / "reparented.pid")
    record = sandbox.root / "state" / "coding-harness" / RECORD_NAME
    while f'"pid": {reparented},' not in _text(record):
        assert time.monotonic() < deadline, "the re-parented process was not recorded"
        time.sleep(0.05)
    return conn


def _has_pid(path: Path) -> bool:
    return _text(path).strip().isdigit()


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _recipe_pids(sandbox: Sandbox) -> dict[str, int]:
    return {name: read_pid(sandbox.workspace / name) for name in RECIPE_PIDS}


def _kill_all(pids: dict[str, int]) -> None:
    """Clean up after a failure: whatever of the recipe is still running."""
    for pid in pids.values():
        if not process_gone(pid, within=0):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_kill_9_of_the_daemon_leaves_no_recipe_process_after_the_next_start(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    first = start_daemon(sandbox.socket, sandbox.env)
    pids: dict[str, int] = {}
    try:
        conn = _start_hanging_recipe(sandbox, model)
        pids = _recipe_pids(sandbox)
        first.kill()
        first.wait(timeout=10)
        conn.close()
        assert process_gone(pids["make.pid"]), "make did not die with the daemon"
        second = start_daemon(sandbox.socket, sandbox.env)
        try:
            left = [name for name, pid in pids.items() if not process_gone(pid)]
            assert left == [], f"still running after the next start: {left}"
        finally:
            second.send_signal(signal.SIGTERM)
            second.wait(timeout=10)
    finally:
        _kill_all(pids)


def test_stopping_the_daemon_during_a_recipe_leaves_no_process(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    daemon = start_daemon(sandbox.socket, sandbox.env, "--drain-seconds", "0.5")
    pids: dict[str, int] = {}
    try:
        conn = _start_hanging_recipe(sandbox, model)
        pids = _recipe_pids(sandbox)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=15)
        conn.close()
        left = [name for name, pid in pids.items() if not process_gone(pid)]
        assert left == [], f"still running after the daemon stopped: {left}"
    finally:
        _kill_all(pids)
