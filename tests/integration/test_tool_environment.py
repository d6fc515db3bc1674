"""What a tool command sees of the daemon's environment (issue 10, item 5).

A Makefile recipe that prints `env` must see no provider key (whatever its
variable is called), no DATABASE_URL-style secret and no search key, whether
the key came from the daemon's environment or from the submitting client.
"""

from __future__ import annotations

import json
import signal

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness, start_daemon

SECRETS = {
    "MODEL_PASS": "model-pass-9f3a1c",  # the profile's api_key_env: no KEY in the name
    "DATABASE_URL": "postgres://app:db-pass-77c1@db/app",
    "MY_CREDENTIALS": "cred-value-5b2e",
    "BRAVE_SEARCH_API_KEY": "brave-key-0d9e",
}


def test_a_recipe_printing_env_sees_no_secret(sandbox: Sandbox, model: FakeModelServer) -> None:
    sandbox.write_config(model.endpoint, api_key_env="MODEL_PASS")
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"] = {"env_pass": ["PROJECT_MODE", "MODEL_PASS"]}  # a key is never passed
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    (sandbox.workspace / "Makefile").write_text("dump:\n\t@env\n")
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="make dump")]),
        Reply(content="done"),
    )
    daemon_env = {**sandbox.env, **SECRETS, "CODING_HARNESS_PASS_ME": "visible"}
    daemon_env["PROJECT_MODE"] = "passed-on-purpose"
    daemon = start_daemon(sandbox.socket, daemon_env)
    try:
        client_env = {**sandbox.env, "MODEL_PASS": "client-pass-4e8d"}
        result = run_harness(["-y", "-p", "show env"], env=client_env, cwd=sandbox.workspace)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    tool_output = next(
        message["content"] for message in model.requests[1]["messages"] if message["role"] == "tool"
    )
    assert f"HOME={sandbox.home}" in tool_output  # the recipe ran and printed env
    assert "PROJECT_MODE=passed-on-purpose" in tool_output  # agent.env_pass
    for value in [*SECRETS.values(), "client-pass-4e8d", "visible"]:
        assert value not in tool_output
    assert "MODEL_PASS" not in tool_output


def test_a_search_key_exported_in_a_new_shell_reaches_the_daemon(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """The client sends the search key variables like the profiles' keys (issue 11,
    item 9): the daemon knows the value, so it is redacted from a tool's output."""
    value = "brave-from-a-new-shell-5c1d"
    (sandbox.workspace / "Makefile").write_text(f"show:\n\t@echo key {value}\n")
    model.add(Reply(tool_calls=[tool_call("run_shell", command="make show")]), Reply(content="ok"))
    client_env = {**sandbox.env, "BRAVE_SEARCH_API_KEY": value}
    result = run_harness(["-y", "-p", "show"], env=client_env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr
    [shown] = [m["content"] for m in model.requests[1]["messages"] if m["role"] == "tool"]
    assert shown.startswith("key [redacted]")
