"""Permission modes end to end: the real daemon, the real `harness` and REPL, the fake
model server over HTTP.

accept-edits applies without an approval event; read-only offers no write tool,
refuses a write the model names anyway and tells the model so; `session.configure
{mode}` is told to another attached client by `mode.changed`; `harness sessions` has a
MODE column; in the REPL `/mode` shows and switches, the prompt carries the mode, and
the plan of a read-only turn is accepted with `a`, which carries it out with edits applied.
"""

from __future__ import annotations

import subprocess

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, wait_for_event

WRITE_TOOLS = {"propose_edit", "replace_text", "write_file"}


def harness(sandbox: Sandbox, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input=input)


def offered(request: dict[str, object]) -> set[str]:
    tools = request.get("tools") or []
    assert isinstance(tools, list)
    return {tool["function"]["name"] for tool in tools}


def tool_results(request: dict[str, object]) -> list[str]:
    messages = request["messages"]
    assert isinstance(messages, list)
    return [m["content"] for m in messages if m["role"] == "tool"]


def test_accept_edits_applies_without_an_approval_event(
    sandbox: Sandbox, model: FakeModelServer, calc_project, daemon
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed."),
    )
    result = harness(
        sandbox, "--mode", "accept-edits", "--output-format", "stream-json", "-p", "fix calc"
    )
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    kinds = [line.split('"kind": "')[1].split('"')[0] for line in result.stdout.splitlines()[:-1]]
    assert "diff" in kinds and "approval.requested" not in kinds
    assert "Apply this change?" not in result.stderr
    assert "Permission mode: accept-edits" in model.requests[0]["messages"][0]["content"]


def test_read_only_offers_no_write_tool_and_refuses_one_named_anyway(
    sandbox: Sandbox, model: FakeModelServer, calc_project, daemon
) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(tool_calls=[tool_call("run_shell", command="make check")]),
        Reply(content="Plan:\n1. In calc.py, make add() return a + b.\n2. Run make check."),
    )
    result = harness(sandbox, "--mode", "read-only", "-p", "fix calc")
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    first = model.requests[0]
    assert not offered(first) & WRITE_TOOLS and "read_file" in offered(first)
    assert "Permission mode: read-only (plan mode)" in first["messages"][0]["content"]
    refused_edit, refused_make = tool_results(model.requests[-1])
    assert refused_edit.startswith("refused: propose_edit is not available because this session")
    assert refused_make.startswith("refused: this session is in read-only mode")
    assert "Plan:" in result.stdout


def test_a_bad_mode_is_refused_with_the_modes_named(sandbox: Sandbox, daemon) -> None:
    result = harness(sandbox, "--mode", "yolo", "-p", "hi")
    assert result.returncode == 5
    assert "ask" in result.stderr and "read-only" in result.stderr
    assert harness(sandbox, "-y", "--mode", "read-only", "-p", "hi").returncode == 5


def test_configure_tells_another_client_who_changed_the_mode(
    sandbox: Sandbox, calc_project, daemon
) -> None:
    with client(sandbox.socket, "changer") as changer, client(sandbox.socket, "watcher") as watcher:
        session = changer.request("session.create", {"cwd": str(calc_project)})["session"]
        watcher.request("session.attach", {"session": session})
        answer = changer.request("session.configure", {"session": session, "mode": "read-only"})
        assert answer["options"]["mode"] == "read-only"
        event = wait_for_event(watcher, "mode.changed", timeout=10)
        assert event["data"]["mode"] == "read-only"
        assert "changer" in event["data"]["client"]
        rows = watcher.request("session.list")["sessions"]
        assert [row["options"]["mode"] for row in rows] == ["read-only"]
    listing = harness(sandbox, "sessions")
    header, row = listing.stdout.splitlines()[:2]
    assert header.split()[:3] == ["SESSION", "STATE", "MODE"]
    assert row.split()[:3] == [session, "idle", "read-only"]


def test_repl_mode_command_prompt_and_plan_acceptance(
    sandbox: Sandbox, model: FakeModelServer, calc_project, repl
) -> None:
    model.add(
        Reply(content="Plan:\n1. In calc.py, make add() return a + b."),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Carried out."),
    )
    run = repl()
    run.type("/mode\n")
    run.wait_for("mode: ask (the modes are ask, accept-edits or read-only", "err")
    run.type("/mode read-only\n")
    run.wait_for("mode: read-only (set by", "err")
    run.wait_for("[read-only]", "screen")
    run.type("fix calc\n")
    run.wait_for("accept the plan? [a]ccept-edits / [y]es (ask) / [n]o", "screen")
    run.type("a\n")
    run.wait_for("Carried out.")
    assert run.finish() == 0
    assert (calc_project / "calc.py").read_text() == FIXED
    carry_out = model.requests[1]["messages"]
    assert carry_out[-1] == {"role": "user", "content": "carry out the plan"}
    assert "Permission mode: accept-edits" in carry_out[0]["content"]
