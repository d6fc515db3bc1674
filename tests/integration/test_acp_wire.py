"""`harness acp` at the wire: bad input gets a JSON-RPC error a person can act on, and
nothing but protocol messages ever reaches standard output."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}}


def exchange(env: dict[str, str], cwd: Path, lines: list[str]) -> tuple[list[dict[str, Any]], str]:
    """Send `lines` to a fresh `harness acp` one at a time, each once the previous one is
    answered, then close its input; every line it printed, parsed (a line that is not
    JSON fails the test), and its standard error."""
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", "acp"],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    printed: list[dict[str, Any]] = []
    try:
        for line in lines:
            try:
                wanted = json.loads(line).get("id")
            except ValueError:
                wanted = None
            process.stdin.write(line + "\n")
            process.stdin.flush()
            while True:
                out = process.stdout.readline()
                assert out, "harness acp closed its output"
                printed.append(json.loads(out))
                if printed[-1].get("id") == wanted and "method" not in printed[-1]:
                    break
        process.stdin.close()
        rest = process.stdout.read()
        stderr = process.stderr.read() if process.stderr else ""
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
    printed.extend(json.loads(line) for line in rest.splitlines())
    return printed, stderr


def answers(messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {m["id"]: m for m in messages if "id" in m and "method" not in m}


def test_bad_messages_get_errors_and_stdout_stays_protocol_only(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    lines = [
        json.dumps(INIT),
        "this is not json",
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {}}),
        json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/fly", "params": {}}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "session/prompt",
                "params": {"sessionId": "s-nope", "prompt": [{"type": "text", "text": "hi"}]},
            }
        ),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "session/load",
                "params": {"sessionId": "s-nope", "cwd": str(calc_project), "mcpServers": []},
            }
        ),
    ]
    messages, _ = exchange(sandbox.env, calc_project, lines)
    got = answers(messages)
    assert got[0]["result"]["protocolVersion"] == 1
    assert got[0]["result"]["agentCapabilities"]["loadSession"] is True
    assert got[0]["result"]["authMethods"] == []
    [parse] = [m for m in messages if m.get("id") is None and "error" in m]
    assert parse["error"]["code"] == -32700
    assert got[2]["error"]["code"] == -32602 and "cwd" in got[2]["error"]["message"]
    assert got[3]["error"]["code"] == -32601 and "session/fly" in got[3]["error"]["message"]
    assert got[4]["error"]["code"] == -32002 and "session/load" in got[4]["error"]["message"]
    assert got[5]["error"]["code"] == -32002


def test_an_image_is_refused_with_a_message(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    new = {"cwd": str(calc_project), "mcpServers": []}
    messages, _ = exchange(
        sandbox.env,
        calc_project,
        [
            json.dumps(INIT),
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": new}),
        ],
    )
    session = answers(messages)[1]["result"]["sessionId"]
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    prompt = {"sessionId": session, "prompt": [image]}
    lines = [
        json.dumps(INIT),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/resume",
                "params": {"sessionId": session, "cwd": str(calc_project)},
            }
        ),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": prompt}),
    ]
    messages, _ = exchange(sandbox.env, calc_project, lines)
    error = answers(messages)[2]["error"]
    assert error["code"] == -32602 and "image content is not supported" in error["message"]
    assert model.requests == []


def test_a_missing_key_is_offered_as_an_auth_method(
    sandbox: Sandbox, model: FakeModelServer, daemon: Any, calc_project: Path
) -> None:
    sandbox.write_config(model.endpoint, api_key_env="FAKE_PROVIDER_API_KEY")
    lines = [
        json.dumps(INIT),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "authenticate",
                "params": {"methodId": "env:FAKE_PROVIDER_API_KEY"},
            }
        ),
    ]
    messages, _ = exchange(sandbox.env, calc_project, lines)
    got = answers(messages)
    [method] = got[0]["result"]["authMethods"]
    assert method["id"] == "env:FAKE_PROVIDER_API_KEY"
    assert method["vars"] == [{"name": "FAKE_PROVIDER_API_KEY", "optional": False, "secret": True}]
    assert "FAKE_PROVIDER_API_KEY is not set" in got[1]["error"]["message"]
    with_key = {**sandbox.env, "FAKE_PROVIDER_API_KEY": "sk-test"}
    messages, _ = exchange(with_key, calc_project, [json.dumps(INIT)])
    assert answers(messages)[0]["result"]["authMethods"] == []


def test_an_unreachable_daemon_is_an_initialize_error_naming_the_fix(
    sandbox: Sandbox, calc_project: Path
) -> None:
    blocked = sandbox.root / "not-a-folder"
    blocked.write_text("")
    env = {**sandbox.env, "CODING_HARNESS_SOCKET": str(blocked / "harnessd.sock")}
    messages, _ = exchange(env, calc_project, [json.dumps(INIT)])
    error = answers(messages)[0]["error"]
    assert "cannot reach the coding-harness daemon" in error["message"]
    assert "harness doctor" in error["message"]
