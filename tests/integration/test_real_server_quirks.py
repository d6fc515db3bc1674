"""A coding turn through the real daemon and `harness` against a fake server that
answers as llama-cpp-python's does: it rejects `"content": null` (HTTP 500, a
validation error) and cannot stream a request with tools (200, then an aborted body).
Assertions are on the request bodies the server recorded and how many there were."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Fault, Reply, tool_call
from tests.support.picky_servers import LlamaCppPython, validation_error
from tests.support.processes import run_harness

TASK = "explain what calc.py does"
TINY_RETRIES = {"attempts": 4, "base_delay": 0.01, "max_delay": 0.05}
READ = Reply(tool_calls=[tool_call("read_file", path="calc.py")])
ANSWER = Reply(content="add subtracts: that is the bug.")


def configure(sandbox: Sandbox, endpoint: str, kind: str) -> None:
    profile = {"type": kind, "endpoint": endpoint, "model": "fake-model"}
    config = {"default_provider": "fake", "retry": TINY_RETRIES, "providers": {"fake": profile}}
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def harness(sandbox: Sandbox, prompt: str) -> subprocess.CompletedProcess[str]:
    args = ["--output-format", "json", "-y", "-p", prompt]
    return run_harness(args, env=sandbox.env, cwd=sandbox.workspace)


def tool_call_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "assistant" and m.get("tool_calls")]


def fallback_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if '"type": "mlx"' in line]


def test_a_tool_turn_is_accepted_by_a_server_that_rejects_null_content(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    configure(sandbox, model.endpoint, "mlx")
    model.add(LlamaCppPython(model, READ), LlamaCppPython(model, ANSWER))
    result = harness(sandbox, TASK)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reply"] == ANSWER.content
    assert len(model.requests) == 2
    (sent,) = tool_call_messages(model.requests[1])
    assert sent["content"] == ""
    assert sent["tool_calls"][0]["function"]["name"] == "read_file"


def test_a_request_the_server_calls_invalid_is_sent_once(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint, "openai")
    invalid = Fault(500, validation_error(2))
    model.add(invalid, invalid, invalid, invalid)
    result = harness(sandbox, "say hello")
    assert result.returncode == 1, result.stderr
    assert len(model.requests) == 1
    assert "retrying in" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if "refused the request" in line]
    assert len(errors) >= 1, result.stderr
    assert "HTTP 500" in errors[0] and "Input should be a valid string" in errors[0]


def test_a_server_that_cannot_stream_tools_gets_whole_answers_and_one_notice(
    sandbox: Sandbox, model: FakeModelServer, calc_project: Path
) -> None:
    configure(sandbox, model.endpoint, "openai")
    model.add(
        LlamaCppPython(model, READ),  # streamed: aborted before its first event
        LlamaCppPython(model, READ),
        LlamaCppPython(model, ANSWER),
    )
    first = harness(sandbox, TASK)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["reply"] == ANSWER.content
    assert [request["stream"] for request in model.requests] == [True, False, False]
    assert all(request.get("tools") for request in model.requests)
    assert model.requests[0]["messages"] == model.requests[1]["messages"]
    assert len(fallback_lines(first.stderr)) == 1, first.stderr
    assert "retrying in" not in first.stderr
    # The daemon remembers: the next turn asks for a whole answer at once, and says nothing.
    model.add(LlamaCppPython(model, ANSWER))
    second = harness(sandbox, "explain calc.py again")
    assert second.returncode == 0, second.stderr
    assert [request["stream"] for request in model.requests[3:]] == [False]
    assert fallback_lines(second.stderr) == []
