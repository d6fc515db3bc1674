"""Retries over real HTTP: the fake server answers 429, 5xx, 401 or a context error,
and the real `harness` command shows what happened and exits with the right code."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from typing import Any

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Fault, Reply
from tests.support.processes import client, run_harness, start_daemon

PROMPT = "say hello"
TINY_RETRIES = {"attempts": 3, "base_delay": 0.01, "max_delay": 0.05}


def configure(sandbox: Sandbox, endpoint: str, **profile: Any) -> None:
    config = {
        "default_provider": "fake",
        "retry": TINY_RETRIES,
        "providers": {
            "fake": {"type": "openai", "endpoint": endpoint, "model": "fake-model", **profile}
        },
    }
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def harness(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace)


def retry_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "retrying in" in line]


def history(sandbox: Sandbox, session: str) -> list[dict[str, Any]]:
    with client(sandbox.socket) as conn:
        messages: list[dict[str, Any]] = conn.request("session.history", {"session": session})[
            "messages"
        ]
    return messages


def test_rate_limit_then_success_retries_once(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint)
    model.add(
        Fault(429, '{"error": {"message": "slow down"}}', headers={"Retry-After": "1"}),
        Reply(content="Hello there.", prompt_tokens=100, completion_tokens=7),
    )
    result = harness(sandbox, "--output-format", "json", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    (line,) = retry_lines(result.stderr)
    assert f"rate limited by {model.endpoint}, retrying in 1 s (attempt 2 of 3)" in line
    report = json.loads(result.stdout)
    assert report["reply"] == "Hello there."
    assert report["usage"]["prompt_tokens"] == 100  # counted once: the failed try had none
    assert report["usage"]["completion_tokens"] == 7
    assert len(model.requests) == 2
    assert model.requests[0]["messages"] == model.requests[1]["messages"]
    users = [m for m in history(sandbox, report["session"]) if m["role"] == "user"]
    assert [m["content"] for m in users] == [PROMPT]


def test_server_errors_until_the_end_exit_1_with_status_and_request_id(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint)
    failure = Fault(503, '{"error": {"message": "overloaded"}}', headers={"x-request-id": "req-42"})
    model.add(failure, failure, failure)
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1, result.stderr
    assert len(retry_lines(result.stderr)) == 2
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "HTTP 503" in errors[0] and "overloaded" in errors[0] and "req-42" in errors[0]
    assert "gave up after 3 attempts" in errors[0]
    assert len(model.requests) == 3


def test_server_errors_then_success(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint)
    model.add(Fault(500), Fault(502), Reply(content="Made it."))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert "Made it." in result.stdout
    assert len(retry_lines(result.stderr)) == 2


def test_bad_key_is_not_retried_and_names_the_variable(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint, api_key_env="FAKE_PROVIDER_KEY")
    sandbox.env["FAKE_PROVIDER_KEY"] = "sk-wrong-key-123"
    model.add(Fault(401, '{"error": {"message": "invalid api key"}}'), Reply(content="never"))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    assert retry_lines(result.stderr) == []
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "HTTP 401" in error and "$FAKE_PROVIDER_KEY" in error
    assert "sk-wrong-key-123" not in result.stderr + result.stdout
    assert len(model.requests) == 1


def test_context_length_error_is_not_retried_and_names_compaction(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint)
    body = json.dumps(
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens.",
                "code": "context_length_exceeded",
            }
        }
    )
    model.add(Fault(400, body), Reply(content="never"))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    assert retry_lines(result.stderr) == []
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "context" in error and "compact" in error
    assert len(model.requests) == 1


def test_cut_stream_before_any_text_is_retried(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint)
    model.add(Fault(cut_stream_after=""), Reply(content="Whole answer."))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert "Whole answer." in result.stdout
    assert len(retry_lines(result.stderr)) == 1


def test_cut_stream_after_text_is_an_error(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint)
    model.add(Fault(cut_stream_after="Half an ans"), Reply(content="never"))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    assert retry_lines(result.stderr) == []
    assert "already shown" in result.stderr
    assert len(model.requests) == 1


def test_no_local_server_is_retried_briefly_then_named(sandbox: Sandbox) -> None:
    endpoint = "http://127.0.0.1:9/v1/chat/completions"  # discard port: nothing listens
    configure(sandbox, endpoint)
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    assert len(retry_lines(result.stderr)) == 2
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert f"no model server answers at {endpoint}" in error
    assert ".coding_harness.json" in error


def next_event(conn: Connection, kind: str, timeout: float = 20) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        note = conn.next_notification(timeout=deadline - time.monotonic())
        if note and note["params"]["kind"] == kind:
            return dict(note["params"]["data"])
    raise AssertionError(f"no {kind} event within {timeout} s")


def test_cancel_during_the_wait_stops_at_once_and_the_session_goes_on(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint)
    model.add(Fault(429, headers={"Retry-After": "30"}), Reply(content="after the cancel"))
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
            conn.request("session.attach", {"session": session})
            conn.request("session.submit", {"session": session, "text": PROMPT})
            assert "retrying in 30 s" in next_event(conn, "notice")["message"]
            started = time.monotonic()
            assert conn.request("session.cancel", {"session": session})["cancelled"] is True
            finished = next_event(conn, "turn.finished")
            assert finished["exit_code"] == 130
            assert time.monotonic() - started < 5
            assert len(model.requests) == 1
            conn.request("session.submit", {"session": session, "text": "again"})
            again = next_event(conn, "turn.finished")
            assert (again["exit_code"], again["reply"]) == (0, "after the cancel")
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
