"""A provider key that shows up in a tool's output never reaches the model, the store
or the log, and a fetch_url carrying it is refused before any connection (issue 10,
item 5; RELIABILITY 41 and 73).

The key lives only in the submitting client's environment, as a profile's
`api_key_env`. Tool commands cannot see that variable, so the workspace holds
the key in plain files, as a leaked `.env` copy or a hard-coded setting would.
"""

from __future__ import annotations

import json
import signal
import subprocess
from http.server import BaseHTTPRequestHandler

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Fault, Reply, tool_call
from tests.support.processes import run_harness, start_daemon
from tests.support.web_pages import local_site, send

KEY = "sk-test-7d2c9e41b08a5f36"
KEY_VARIABLE = "FAKE_PROVIDER_KEY"


def _configure(sandbox: Sandbox, endpoint: str) -> None:
    config = {
        "default_provider": "fake",
        "providers": {
            "fake": {
                "type": "openai",
                "endpoint": endpoint,
                "model": "fake-model",
                "api_key_env": KEY_VARIABLE,
            }
        },
        "agent": {"fetch_private_urls": True},
    }
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def _ask(sandbox: Sandbox, prompt: str) -> subprocess.CompletedProcess[str]:
    env = {**sandbox.env, KEY_VARIABLE: KEY}
    return run_harness(["-y", "-p", prompt], env=env, cwd=sandbox.workspace)


def _state_files_holding_the_key(sandbox: Sandbox) -> list[str]:
    state = sandbox.root / "state" / "coding-harness"
    return [
        str(path.relative_to(state))
        for path in sorted(state.rglob("*"))
        if path.is_file() and KEY.encode() in path.read_bytes()
    ]


def _tool_results(model: FakeModelServer, request: int) -> list[str]:
    messages = model.requests[request]["messages"]
    return [message["content"] for message in messages if message["role"] == "tool"]


def test_a_printed_key_reaches_neither_model_nor_store_nor_log(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    # A gateway that wants the key in the URL: the provider's DEBUG line names it.
    _configure(sandbox, f"{model.endpoint}?key={KEY}")
    (sandbox.workspace / "settings.txt").write_text(f"api_key = {KEY}\n")
    (sandbox.workspace / "Makefile").write_text(f"show:\n\t@echo the key is {KEY}\n")
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make show")]),
        Reply(tool_calls=[tool_call("run_shell", command="cat settings.txt")]),
        Reply(content="done"),
    )
    daemon = start_daemon(sandbox.socket, sandbox.env, "--log-level", "DEBUG")
    try:
        result = _ask(sandbox, "show me the settings")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    assert "the key is [redacted]" in _tool_results(model, 1)[0]
    assert "api_key = [redacted]" in _tool_results(model, 2)[1]
    # The system prompt names the local endpoint, without its query string.
    sent = json.dumps([m for r in model.requests for m in r["messages"]])
    assert KEY not in sent, sent[max(0, sent.find(KEY) - 300) : sent.find(KEY) + 50]
    assert KEY not in result.stdout + result.stderr
    log = (sandbox.root / "state" / "coding-harness" / "daemon.log").read_text()
    assert "POST" in log  # the provider's request line was logged, without the key
    assert _state_files_holding_the_key(sandbox) == []


def test_a_fetch_carrying_the_key_makes_no_connection(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    seen: list[str] = []

    def page(handler: BaseHTTPRequestHandler) -> None:
        seen.append(handler.path)
        send(handler, 200, b"thanks")

    with local_site({"/collect": page}) as base:
        _configure(sandbox, model.endpoint)
        model.add(
            Reply(tool_calls=[tool_call("fetch_url", url=f"{base}/collect?k={KEY}")]),
            Reply(tool_calls=[tool_call("fetch_url", url=f"{base}/collect?k=harmless")]),
            Reply(content="done"),
        )
        daemon = start_daemon(sandbox.socket, sandbox.env)
        try:
            result = _ask(sandbox, "fetch the page")
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    [refusal] = _tool_results(model, 1)
    assert "refused" in refusal and f"the value of {KEY_VARIABLE}" in refusal
    assert "thanks" in _tool_results(model, 2)[1]  # the server was up and reachable
    assert seen == ["/collect?k=harmless"]
    # The model's own call is kept and shown redacted too.
    assert KEY not in json.dumps(model.requests[2]["messages"])
    assert _state_files_holding_the_key(sandbox) == []


def test_a_provider_error_echoing_the_key_is_shown_and_kept_redacted(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    _configure(sandbox, model.endpoint)
    model.add(Fault(status=401, body=json.dumps({"error": {"message": f"bad key {KEY}"}})))
    daemon = start_daemon(sandbox.socket, sandbox.env)
    try:
        result = _ask(sandbox, "hello")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert result.returncode == 1
    assert "bad key [redacted]" in result.stderr
    assert KEY not in result.stdout + result.stderr
    assert _state_files_holding_the_key(sandbox) == []
