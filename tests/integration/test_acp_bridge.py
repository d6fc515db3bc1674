"""`harness acp` driven by a real ACP client (the SDK's client side), on the real daemon.

Each test starts the daemon and one or more `harness acp` processes, as editors
do, and scripts the model with the fake server.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import schema

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.acp_editor import Editor, open_editor, text_prompt
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, events_until_finished
from tests.support.tmux_terminal import Terminal

TIMEOUT = 60


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, TIMEOUT))


async def until(condition: Any, what: str, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_prompt_reads_a_file_and_the_editor_approves_the_edit(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(content="Looking.", tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed add."),
    )
    editor = Editor(choices=["allow"])

    async def scenario() -> tuple[str, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            answer = await conn.prompt(
                session_id=session.session_id, prompt=text_prompt("fix the bug in calc.py")
            )
            return session.session_id, answer

    session, answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    assert (calc_project / "calc.py").read_text() == FIXED
    starts = editor.of_kind("tool_call")
    assert [(s.kind, s.title) for s in starts] == [
        ("read", "read_file calc.py"),
        ("edit", "propose_edit calc.py"),
        ("execute", "make check"),
    ]
    assert starts[2].status == "completed"  # the check passed
    assert starts[0].locations[0].path == str(calc_project / "calc.py")
    [asked] = editor.permission_requests
    assert asked.tool_call_id == starts[1].tool_call_id
    [diff] = [c for c in asked.content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == (BUGGY, FIXED)
    assert "Fixed add." in editor.text()
    assert "user_message_chunk" not in editor.kinds()  # the editor's own prompt is not echoed
    with client(sandbox.socket, "check") as check:  # the ACP session id is the daemon's
        listed = check.request("session.list", {})["sessions"]
    assert session in [row["session"] for row in listed]


def test_a_terminal_answers_first_and_the_editors_question_is_withdrawn(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Done."),
    )
    editor = Editor()  # holds its permission requests: the terminal answers first

    async def scenario() -> Any:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix calc.py"))
            )
            await until(lambda: editor.permission_requests, "the permission request")
            approver = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "coding_harness.client", "approve", session.session_id,
                env=sandbox.env, cwd=str(calc_project),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            try:
                assert approver.stdin is not None
                approver.stdin.write(b"y\n")
                await approver.stdin.drain()
                answer = await prompt
            finally:
                approver.send_signal(signal.SIGINT)
                await approver.wait()
            return answer

    answer = run(scenario())
    assert answer.stop_reason == "end_turn"
    assert (calc_project / "calc.py").read_text() == FIXED
    permission_ids = [
        m["id"] for m in editor.incoming if m.get("method") == "session/request_permission"
    ]
    assert editor.cancelled_requests() == permission_ids  # withdrawn with $/cancel_request
    [call_id] = [s.tool_call_id for s in editor.of_kind("tool_call") if s.kind == "edit"]
    statuses = [u.status for u in editor.of_kind("tool_call_update") if u.tool_call_id == call_id]
    assert "in_progress" in statuses  # the terminal's yes shows on the editor's tool call


def test_cancel_mid_turn_ends_the_prompt_as_cancelled(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="Too slow.", delay=30))
    editor = Editor()

    async def scenario() -> Any:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=text_prompt("fix calc.py"))
            )
            await until(lambda: model.requests, "the model request")
            await conn.cancel(session_id=session.session_id)
            return await prompt

    answer = run(scenario())
    assert answer.stop_reason == "cancelled"
    assert "Too slow." not in editor.text()


def test_load_replays_the_conversation_before_it_answers(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(content="Reading.", tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="It subtracts."),
    )
    first, second = Editor(), Editor()

    async def scenario() -> tuple[int, list[str]]:
        async with open_editor(sandbox.env, calc_project, first) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("explain calc.py"))
        async with open_editor(sandbox.env, calc_project, second) as conn:
            await conn.load_session(
                session_id=session.session_id, cwd=str(calc_project), mcp_servers=[]
            )
            replayed = len(second.updates)  # what came before the answer
            listed = await conn.list_sessions(cwd=str(calc_project))
            return replayed, [info.session_id for info in listed.sessions]

    replayed, listed = run(scenario())
    kinds = second.kinds()[:replayed]
    assert kinds[:4] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    assert second.text("user_message_chunk") == "explain calc.py"
    assert "It subtracts." in second.text()
    [result] = second.of_kind("tool_call_update")
    assert BUGGY in result.content[0].content.text  # the tool's result, replayed
    assert len(listed) == 1


def test_two_editors_and_a_terminal_see_each_others_prompts(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    model.add(Reply(content="Answer A."), Reply(content="Answer T."), Reply(content="Answer B."))
    one, two = Editor(), Editor()

    async def scenario() -> None:
        async with (
            open_editor(sandbox.env, calc_project, one) as a,
            open_editor(sandbox.env, calc_project, two) as b,
        ):
            session = (await a.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            await b.resume_session(session_id=session, cwd=str(calc_project))
            term = Terminal(sandbox, calc_project, "repl", "attach", session)
            try:
                await asyncio.to_thread(term.wait_until, lambda: ">" in term.text(), "the prompt")
                await a.prompt(session_id=session, prompt=text_prompt("question from A"))
                await asyncio.to_thread(term.wait_for, "Answer A.")
                term.type("question from the terminal")
                await until(lambda: "Answer T." in two.text(), "the terminal's turn")
                await b.prompt(session_id=session, prompt=text_prompt("question from B"))
                await asyncio.to_thread(term.wait_for, "Answer B.")
            finally:
                term.close()

    run(scenario())
    assert one.text("user_message_chunk") == "question from the terminal" + "question from B"
    assert two.text("user_message_chunk") == "question from A" + "question from the terminal"
    for editor in (one, two):
        assert all(f"Answer {x}." in editor.text() for x in "ATB")


def test_read_file_sees_the_editors_unsaved_buffer(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    unsaved = "def add(a, b):\n    return a + b  # typed, not saved\n"
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(content="Seen."),
    )
    editor = Editor(buffers={str(calc_project / "calc.py"): unsaved})

    async def scenario() -> None:
        async with open_editor(sandbox.env, calc_project, editor, read_files=True) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("read calc.py"))

    run(scenario())
    assert editor.read_requests == [str(calc_project / "calc.py")]
    tool_message = model.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["content"] == unsaved
    assert (calc_project / "calc.py").read_text() == BUGGY  # the disk is untouched


def test_the_editor_gets_commands_usage_and_the_plan(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    skill = sandbox.home / ".agents" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: tidy the imports\n---\nSort imports.\n")
    steps = "1. read calc.py\n2. fix add"
    model.add(
        Reply(tool_calls=[tool_call("commit_plan", steps=steps)]),
        Reply(content="Planned.", prompt_tokens=300, completion_tokens=40),
        Reply(content="Tidied."),
    )
    editor = Editor()
    env = {**sandbox.env, "CODING_HARNESS_ACP_USAGE": "1"}  # usage_update asked for

    async def scenario() -> None:
        async with open_editor(env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("fix calc.py"))
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("/tidy now"))

    run(scenario())
    [commands] = editor.of_kind("available_commands_update")
    names = {c.name: c.description for c in commands.available_commands}
    assert {"compact", "summary"} <= set(names) and names["tidy"] == "tidy the imports"
    [plan] = editor.of_kind("plan")
    assert [(e.content, e.status) for e in plan.entries] == [
        ("read calc.py", "pending"),
        ("fix add", "pending"),
    ]
    usage = editor.of_kind("usage_update")
    assert usage[1].used == 340 and usage[1].size >= 340
    skill_request = model.requests[-1]["messages"]
    assert any("Sort imports." in str(m.get("content")) for m in skill_request)


def test_the_model_picker_switches_the_sessions_profile(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    profiles = {
        name: {"type": "openai", "endpoint": model.endpoint, "model": f"{name}-model"}
        for name in ("fake", "other")
    }
    config = {"default_provider": "fake", "providers": profiles}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    model.add(Reply(content="From the other one."))
    editor = Editor()

    async def scenario() -> tuple[Any, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            changed = await conn.set_config_option(
                config_id="model", session_id=session.session_id, value="other"
            )
            await conn.prompt(session_id=session.session_id, prompt=text_prompt("hello there"))
            return session, changed

    session, changed = run(scenario())
    [picker] = session.config_options
    assert (picker.id, picker.current_value) == ("model", "fake")
    assert [o.value for o in picker.options] == ["fake", "other"]
    assert changed.config_options[0].current_value == "other"
    assert model.requests[-1]["model"] == "other-model"


def test_an_answer_from_the_editor_is_named_for_the_other_clients(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Left alone."),
    )
    editor = Editor(choices=["reject"])

    async def scenario() -> list[dict[str, Any]]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            with client(sandbox.socket, "watcher") as watcher:
                watcher.request("session.attach", {"session": session})
                await conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
                return events_until_finished(watcher)

    events = run(scenario())
    [resolved] = [e["data"] for e in events if e["kind"] == "approval.resolved"]
    assert resolved["decision"] == "no"
    assert "harness-acp (test-editor)" in resolved["client"]
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_a_daemon_crash_mid_turn_ends_the_prompt_and_the_next_one_works(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    model.add(Reply(content="Never arrives.", delay=30), Reply(content="Back again."))
    editor = Editor()

    async def scenario() -> tuple[Any, Any]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = (await conn.new_session(cwd=str(calc_project), mcp_servers=[])).session_id
            first = asyncio.ensure_future(
                conn.prompt(session_id=session, prompt=text_prompt("fix calc.py"))
            )
            await until(lambda: model.requests, "the model request")
            daemon.kill()  # a crash: the bridge starts a daemon again and attaches
            interrupted = await first
            again = await conn.prompt(session_id=session, prompt=text_prompt("once more"))
            return interrupted, again

    interrupted, again = run(scenario())
    assert interrupted.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn"
    assert "Back again." in editor.text()
    assert "Never arrives." not in editor.text()


def test_the_iteration_cap_is_max_turn_requests(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"max_iterations": 2}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="calc.py")]),
        Reply(tool_calls=[tool_call("list_dir", path=".")]),
        Reply(content="Out of calls: here is what I found."),
    )
    editor = Editor()

    async def scenario() -> Any:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            session = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            return await conn.prompt(
                session_id=session.session_id, prompt=text_prompt("fix calc.py")
            )

    assert run(scenario()).stop_reason == "max_turn_requests"
    assert "Out of calls" in editor.text()


def test_close_detaches_and_leaves_the_session_in_the_daemon(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    editor = Editor()
    stdio = schema.McpServerStdio(name="docs", command="docs-mcp", args=[], env=[])

    async def scenario() -> tuple[list[str], list[str]]:
        async with open_editor(sandbox.env, calc_project, editor) as conn:
            shared = await conn.new_session(cwd=str(calc_project), mcp_servers=[stdio])
            alone = await conn.new_session(cwd=str(calc_project), mcp_servers=[])
            with client(sandbox.socket, "terminal") as terminal:
                terminal.request("session.attach", {"session": shared.session_id})
                await conn.close_session(session_id=shared.session_id)
                await conn.close_session(session_id=alone.session_id)
                listed = terminal.request("session.list", {})["sessions"]
            return [shared.session_id, alone.session_id], [row["session"] for row in listed]

    (shared, alone), listed = run(scenario())
    assert shared in listed  # a terminal is still on it
    assert alone in listed  # closing frees it in the agent; `harness sessions rm` removes it
    assert "MCP servers of this session: docs" in editor.text("agent_thought_chunk", session=shared)
