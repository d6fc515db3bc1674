"""Routing end to end: the real daemon, its real code index, `harness -p` as a process.

A question that names a file or a symbol of the workspace goes to the tool loop
(tools offered, the history and the workspace in the prompt), whatever world words
it holds; a question about the world goes to the general route, which now carries
the conversation so far.
"""

from __future__ import annotations

from typing import Any

import pytest

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.invoicing_project import write_project
from tests.support.oneshot import harness
from tests.support.processes import events_until_finished
from tests.support.restarts import new_session
from tests.support.waiting import wait_for

INDEX_WAIT = 120.0  # parse workers run niced: a busy machine slows the first build


def index_ready(conn: Connection, session: str) -> None:
    def ready() -> bool:
        found: dict[str, Any] = conn.request("session.map", {"session": session})
        return found["state"] == "ready"

    wait_for(ready, "the code index to be built", within=INDEX_WAIT)


@pytest.mark.parametrize(
    "prompt",
    [
        "who is calling div with zero?",
        "news: did anything change in calc today?",
        "where is Invoice serialized",  # Invoice: only the code index knows it
    ],
)
def test_a_question_naming_the_workspace_gets_the_tools(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection, prompt: str
) -> None:
    write_project(sandbox.workspace)
    index_ready(conn, new_session(conn, sandbox.workspace))
    model.add(Reply(content="Looked at the code."))
    result = harness(sandbox, "-p", prompt)
    assert result.returncode == 0, result.stderr
    assert "intent: coding" in result.stderr
    sent = model.requests[-1]
    assert "read_file" in [tool["function"]["name"] for tool in sent["tools"]]
    assert f"Workspace: {sandbox.workspace}" in sent["messages"][0]["content"]


def test_a_general_question_keeps_the_conversation(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    (sandbox.workspace / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    session = new_session(conn, sandbox.workspace)
    model.add(Reply(content="calc.py adds two numbers; I am in Lyon, by the way."))
    conn.request("session.submit", {"session": session, "text": "what does calc.py do?"})
    assert events_until_finished(conn)[-1]["data"]["exit_code"] == 0
    model.add(Reply(content="Mild in Lyon."))
    result = harness(sandbox, "--session", session, "-p", "what's the weather there tomorrow?")
    assert result.returncode == 0, result.stderr
    assert "intent: general" in result.stderr and "Mild in Lyon." in result.stdout
    sent = model.requests[-1]
    assert "tools" not in sent
    said = [(m["role"], m["content"]) for m in sent["messages"][1:]]
    assert said[:2] == [
        ("user", "what does calc.py do?"),
        ("assistant", "calc.py adds two numbers; I am in Lyon, by the way."),
    ]
    assert said[-1] == ("user", "what's the weather there tomorrow?")
