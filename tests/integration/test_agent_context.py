"""Routing, context, compaction, plans, skills and /summary through a real daemon.

The fake model server plays the model; each test asserts what it was sent and
what the new methods (`session.context`, `session.compact`, `plan.get`,
`skills.list`) and events (`intent`, `plan`, `context.compacted`) answer.
"""

from __future__ import annotations

import io
import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.client.render.style import Style
from coding_harness.client.repl.slash_commands import SlashCommands
from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, start_daemon

pytestmark = pytest.mark.integration

SUMMARY_TOOLS = ["read_file", "list_dir", "grep", "find_symbol"]


def configure(sandbox: Sandbox, endpoint: str) -> None:
    config = {
        "default_provider": "fake",
        "providers": {"fake": {"type": "openai", "endpoint": endpoint, "model": "fake-model"}},
        "agent": {"context_limit": 50_000, "list_ports": False},
    }
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


class Daemon:
    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.process: subprocess.Popen[bytes] = start_daemon(sandbox.socket, sandbox.env)

    def restart(self) -> None:
        self.stop()
        self.process = start_daemon(self.sandbox.socket, self.sandbox.env)

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)


@pytest.fixture
def daemon(sandbox: Sandbox, model: FakeModelServer) -> Iterator[Daemon]:
    configure(sandbox, model.endpoint)
    running = Daemon(sandbox)
    yield running
    running.stop()


def open_session(conn: Connection, cwd: Path) -> str:
    session: str = conn.request("session.create", {"cwd": str(cwd)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def run_turn(conn: Connection, session: str, text: str, **options: Any) -> list[dict[str, Any]]:
    """Submit and collect this turn's events up to and including `turn.finished`."""
    params = {"session": session, "text": text, "options": {"yes": True, **options}}
    turn = conn.request("session.submit", params)["turn"]
    events: list[dict[str, Any]] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        note = conn.next_notification(timeout=deadline - time.monotonic())
        if note is None:
            continue
        events.append(note["params"])
        if note["params"]["kind"] == "turn.finished" and note["params"]["data"]["turn"] == turn:
            return events
    raise AssertionError("the turn did not finish")


def submit_params(session: str, **options: Any) -> dict[str, Any]:
    return {"session": session, "text": "x", "options": options}


def of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["kind"] == kind]


def tools_sent(payload: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in payload.get("tools") or []]


def test_routes_are_announced_and_a_general_question_gets_no_tools(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    model.add(Reply(content="Looked."), Reply(content="Sunny."), Reply(content="Hello."))
    with client(sandbox.socket) as conn:
        session = open_session(conn, calc_project)
        coding = run_turn(conn, session, "explain what calc.py does")
        general = run_turn(conn, session, "what is the weather forecast for Oslo?")
        forced = run_turn(conn, session, "say hello", route="general")
        with pytest.raises(errors.InvalidParams, match=r"options\.route"):
            conn.request("session.submit", submit_params(session, route="x"))
    assert of_kind(coding, "intent") == [
        {"route": "coding", "source": "keywords", "label": "the tool loop"}
    ]
    assert [e["kind"] for e in coding][:2] == ["turn.started", "intent"]
    assert of_kind(general, "intent")[0]["route"] == "general"
    assert of_kind(forced, "intent")[0]["source"] == "option"
    assert len(model.requests) == 3  # no classifier calls
    assert "commit_plan" in tools_sent(model.requests[0])
    assert tools_sent(model.requests[1]) == [] and tools_sent(model.requests[2]) == []
    assert of_kind(general, "turn.finished")[0]["reply"] == "Sunny."


def test_context_then_compact_replaces_the_history_and_survives_a_restart(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="add subtracts: that is the bug."),
        Reply(content="Done: found that add subtracts.\nLeft: fix it."),
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, calc_project)
        run_turn(conn, session, "explain what calc.py does")
        context = conn.request("session.context", {"session": session})
        compacted = conn.request("session.compact", {"session": session}, timeout=30)
        after = conn.request("session.context", {"session": session})
    assert [row["role"] for row in context["messages"]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert context["messages"][2]["chars"] == len(BUGGY)
    assert context["context_limit"] == 50_000 and "characters / 4" in context["estimate"]
    assert context["total_tokens"] > context["system_tokens"] > 500
    summary_request = model.requests[-1]
    assert "tools" not in summary_request and "RESULT of read_file" in str(summary_request)
    assert compacted["compacted"] is True and compacted["messages_before"] == 4
    assert [row["role"] for row in after["messages"]] == ["user", "assistant"]
    assert after["messages"][0]["preview"].startswith("[Context compacted]")

    daemon.restart()
    with client(sandbox.socket) as conn:
        history = conn.request("session.history", {"session": session})["messages"]
    assert len(history) == 2 and history[0]["content"].startswith("[Context compacted]")
    goal = "Goal (the first request of this conversation):\nexplain what calc.py does"
    assert goal in history[0]["content"]
    assert "Done: found that add subtracts." in history[0]["content"]


def test_a_plan_is_reconciled_with_the_files_and_kept_across_a_restart(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    steps = "1. Fix add files: calc.py\n2. Add a test files: test_calc.py"
    model.add(
        Reply(tool_calls=[tool_call("commit_plan", steps=steps)]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed add; the test is still to do."),
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, calc_project)
        assert conn.request("plan.get", {"session": session})["plan"] is None
        events = run_turn(conn, session, "fix the bug in calc.py and add a test")
        plan = conn.request("plan.get", {"session": session})["plan"]
    assert [s["text"] for s in of_kind(events, "plan")[0]["steps"]] == ["Fix add", "Add a test"]
    assert [s["status"] for s in plan["steps"]] == ["touched", "pending"]
    assert (plan["done"], plan["touched"], plan["pending"]) == (0, 1, 1)
    assert "plan recorded (2 steps)" in str(model.requests[1]["messages"])

    daemon.restart()
    with client(sandbox.socket) as conn:
        again = conn.request("plan.get", {"session": session})["plan"]
    assert [s["status"] for s in again["steps"]] == ["touched", "pending"]


def test_skills_are_listed_and_loaded(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    for root, name, text in [
        (sandbox.home, "review", "---\ndescription: user review\n---\nUser review steps.\n"),
        (sandbox.home, "deploy", "---\ndescription: ship it\n---\nDeploy steps.\n"),
        (calc_project, "review", "---\ndescription: project review\n---\nProject steps.\n"),
    ]:
        folder = root / ".agents" / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(text)
    model.add(Reply(content="Reviewed."))
    with client(sandbox.socket) as conn:
        home_only = conn.request("skills.list", {})["skills"]
        listed = conn.request("skills.list", {"cwd": str(calc_project)})["skills"]
        session = open_session(conn, calc_project)
        assert conn.request("skills.list", {"session": session})["skills"] == listed
        run_turn(conn, session, "look at calc.py", skill="review")
        with pytest.raises(errors.InvalidParams, match="no skill named"):
            conn.request("session.submit", submit_params(session, skill="nope"))
    assert [(s["name"], s["description"]) for s in home_only] == [
        ("deploy", "ship it"),
        ("review", "user review"),
    ]
    assert [(s["name"], s["description"], s["scope"]) for s in listed] == [
        ("deploy", "ship it", "user"),
        ("review", "user review", "user"),  # a project skill never shadows the user's
    ]
    request = model.requests[0]["messages"][-1]["content"]
    assert "User review steps." in request and "Project steps." not in request
    assert request.endswith("Task: look at calc.py")


def test_summary_and_slash_commands(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="- calc.py: adds two numbers (wrongly)"),
        Reply(content="Done: summarised calc.py."),
    )
    out, err = io.StringIO(), io.StringIO()
    with client(sandbox.socket) as conn, pytest.MonkeyPatch.context() as patch:
        patch.setattr("sys.stdout", out)
        session = open_session(conn, calc_project)
        commands = SlashCommands(conn, session, Style(err))
        lines = ("/summary", "/context", "/compact", "/plan", "/skills", "/intent x y", "/nope")
        for line in lines:
            commands.handle(line)
        history = conn.request("session.history", {"session": session})["messages"]
    assert len(history) == 2  # /compact made the four messages a brief and its answer
    first = model.requests[0]
    assert tools_sent(first) == SUMMARY_TOOLS
    assert first["messages"][-1]["content"].startswith("Give me an overview of this project")
    printed = out.getvalue()
    assert "- calc.py: adds two numbers (wrongly)" in printed
    assert "context:" in printed and "read_file" in printed  # the table's title and a preview
    said = err.getvalue()
    assert "nothing to compact" not in said  # the `context.compacted` event says the rest
    assert "no plan yet" in said and "no skills" in said
    assert "usage: /intent" in said and "unknown command /nope" in said


def test_a_slow_compaction_does_not_hold_its_connection_and_can_be_cancelled(
    sandbox: Sandbox, model: FakeModelServer, daemon: Daemon, calc_project: Path
) -> None:
    model.add(
        Reply(content="calc.py adds badly."),
        Reply(content="It subtracts."),
        Reply(content="never used", delay=30),
    )
    with client(sandbox.socket) as conn:
        session = open_session(conn, calc_project)
        # Two turns: a conversation of fewer than four messages is not compacted at all.
        run_turn(conn, session, "explain what calc.py does")
        run_turn(conn, session, "and what does add do?")
        before = conn.request("session.history", {"session": session})["messages"]
        compaction = conn.send_request("session.compact", {"session": session})
        deadline = time.monotonic() + 10
        while len(model.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)  # the summary request is now with the (slow) model
        # The same connection is answered meanwhile, cancel included.
        assert conn.request("daemon.status", timeout=5)["pid"] == daemon.process.pid
        assert conn.request("session.cancel", {"session": session}, timeout=5) == {
            "cancelled": True
        }
        with pytest.raises(errors.SessionBusy, match="cancelled"):
            conn.response(compaction, timeout=10)
        assert conn.request("session.history", {"session": session})["messages"] == before
