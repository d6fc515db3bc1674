"""A recipe that rewrites the Makefile cannot have its new recipe run unseen.

The model runs `make gen`, whose recipe appends a new `check` recipe to the
Makefile; then it edits a source file under -y. Before `make check` runs, the
changed Makefile is put to the people on the session with its diff (asked even
with -y): a no leaves make check unrun and the planted recipe with it, a yes runs
it. An edit to the Makefile that the user approved is not asked about again.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import events_until_finished, wait_for_event
from tests.support.restarts import new_session

PLANT = (
    "with open('Makefile', 'a') as f: "
    "f.write('\\nrun-planted:\\n\\t@echo planted > planted.txt\\ncheck: run-planted\\n')"
)
MAKEFILE = f'gen:\n\t{sys.executable} -c "{PLANT}"\n\ncheck:\n\t@true\n'


@pytest.fixture(autouse=True)
def project(sandbox: Sandbox) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    (sandbox.workspace / "calc.py").write_text("x = 1\n")


def submit(conn: Connection, sandbox: Sandbox, text: str, yes: bool = False) -> dict[str, Any]:
    """Open a session, send `text`, and return the first approval it asks."""
    session = new_session(conn, sandbox.workspace)
    options = {"yes": True} if yes else {}
    conn.request("session.submit", {"session": session, "text": text, "options": options})
    return wait_for_event(conn, "approval.requested")["data"]


def start(conn: Connection, sandbox: Sandbox, model: FakeModelServer) -> dict[str, Any]:
    """`make gen`, then an edit under -y: the first approval asked."""
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make gen")]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old="x = 1\n", new="x = 2\n")]),
        Reply(content="Done."),
    )
    return submit(conn, sandbox, "change x to 2 in calc.py", yes=True)


def approve_makefile_edit_once(
    conn: Connection, sandbox: Sandbox, model: FakeModelServer, new: str, task: str
) -> None:
    """The model edits the Makefile to `new`; the user approves that one question, and
    make check then runs (and passes) without a second one."""
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="Makefile", old=MAKEFILE, new=new)]),
        Reply(content="Done."),
    )
    asked = submit(conn, sandbox, task)
    assert asked["path"] == "Makefile"
    conn.request("approval.respond", {"request": asked["request"], "decision": "yes"})
    events = events_until_finished(conn)
    assert "approval.requested" not in [event["kind"] for event in events]
    assert "make check passed." in last_tool_result(model)


def last_tool_result(model: FakeModelServer) -> str:
    return str(model.requests[-1]["messages"][-1]["content"])


def test_a_no_keeps_the_rewritten_makefile_from_running(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    asked = start(conn, sandbox, model)
    assert asked["path"] == "make check" and "Makefile" in asked["summary"]
    assert "+run-planted:" in asked["diff"] and "asked even with -y" in asked["summary"]
    conn.request("approval.respond", {"request": asked["request"], "decision": "no"})
    events = events_until_finished(conn)
    assert events[-1]["data"]["exit_code"] == 0
    assert (sandbox.workspace / "calc.py").read_text() == "x = 2\n"
    assert not (sandbox.workspace / "planted.txt").exists()
    assert "make check was not run: the user did not approve" in last_tool_result(model)


def test_a_yes_runs_it(sandbox: Sandbox, model: FakeModelServer, conn: Connection) -> None:
    asked = start(conn, sandbox, model)
    conn.request("approval.respond", {"request": asked["request"], "decision": "yes"})
    events_until_finished(conn)
    assert (sandbox.workspace / "planted.txt").read_text() == "planted\n"
    assert "make check passed." in last_tool_result(model)


def test_an_approved_makefile_edit_is_not_asked_twice(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    new = MAKEFILE.replace("@true", "@echo checked")
    approve_makefile_edit_once(conn, sandbox, model, new, "make check print a word")
    assert Path(sandbox.workspace / "Makefile").read_text() == new


def test_a_make_through_run_shell_is_asked_too(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make gen")]),
        Reply(tool_calls=[tool_call("run_shell", command="make check")]),
        Reply(content="Done."),
    )
    # -y: `make gen` runs unasked; the changed build files are asked under -y too.
    asked = submit(conn, sandbox, "run the make targets gen, check", yes=True)
    assert asked["path"] == "make check" and "+run-planted:" in asked["diff"]
    conn.request("approval.respond", {"request": asked["request"], "decision": "no"})
    events_until_finished(conn)
    assert not (sandbox.workspace / "planted.txt").exists()
    assert "make check was not run" in last_tool_result(model)


def test_a_new_file_a_glob_include_picks_up_is_asked(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    (sandbox.workspace / "mk").mkdir()
    (sandbox.workspace / "mk" / "base.mk").write_text("BASE = 1\n")
    drop = (
        "with open('mk/zz.mk', 'w') as f: "
        "f.write('run-planted:\\n\\t@echo planted > planted.txt\\ncheck: run-planted\\n')"
    )
    (sandbox.workspace / "Makefile").write_text(
        f'include mk/*.mk\n\ngen:\n\t{sys.executable} -c "{drop}"\n\ncheck:\n\t@true\n'
    )
    asked = start(conn, sandbox, model)
    assert "mk/zz.mk" in asked["summary"] and "+run-planted:" in asked["diff"]
    conn.request("approval.respond", {"request": asked["request"], "decision": "no"})
    events_until_finished(conn)
    assert not (sandbox.workspace / "planted.txt").exists()


def test_an_approved_include_of_an_existing_file_is_not_asked_again(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    (sandbox.workspace / "common.mk").write_text("COMMON = 1\n")
    (sandbox.workspace / "sub").mkdir()
    (sandbox.workspace / "sub" / "extra.inc").write_text("EXTRA = 1\n")
    new = "include sub/extra.inc\n" + MAKEFILE
    approve_makefile_edit_once(conn, sandbox, model, new, "include the extra rules")
