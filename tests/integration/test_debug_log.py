"""`harness --debug`, the config key `debug` and the REPL's `/debug on` write the
session's raw model exchanges, redacted, to its debug log (issue 11, item 7),
through the real daemon, the real `harness` command and the fake model server."""

from __future__ import annotations

import json
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

from coding_harness.daemon.sessions.debug_log import MAX_LOG_BYTES
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import run_harness
from tests.support.sse_text import streamed_text

KEY = "sk-debug-3e8a1c57f2b04d69"
KEY_VARIABLE = "FAKE_PROVIDER_KEY"
SECRET = "pw-77c1d0e9ab35f2"  # a secret variable of the daemon's environment
PATH_LINE = re.compile(r"debug: raw model exchanges go to (\S+\.jsonl)")


def _configure(sandbox: Sandbox, endpoint: str, **extra: Any) -> None:
    profile = {"type": "openai", "endpoint": endpoint, "model": "fake-model"}
    config = {
        "default_provider": "fake",
        "providers": {"fake": {**profile, "api_key_env": KEY_VARIABLE}},
        **extra,
    }
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def _ask(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**sandbox.env, KEY_VARIABLE: KEY}
    return run_harness([*args], env=env, cwd=sandbox.workspace)


def _log_of(stderr: str) -> Path:
    found = PATH_LINE.findall(stderr)
    assert len(found) == 1, stderr  # printed once
    return Path(found[0])


def _entries(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_debug_writes_the_request_and_the_response_with_the_key_redacted(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    _configure(sandbox, model.endpoint)
    model.add(Reply(content="the answer is kumquat"))
    result = _ask(sandbox, "--debug", "-p", f"say kumquat; my key is {KEY}, no {SECRET}")
    assert result.returncode == 0, result.stderr
    assert "kumquat" in result.stdout

    path = _log_of(result.stderr)
    assert path.parent == sandbox.root / "state" / "coding-harness" / "debug"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    text = path.read_text()
    assert KEY not in text
    request, response = _entries(path)
    assert request["kind"] == "request"
    assert request["endpoint"] == model.endpoint
    assert request["headers"]["Authorization"] == "Bearer [redacted]"
    prompt = request["body"]["messages"][-1]["content"]
    assert "my key is [redacted]" in prompt
    assert request["body"]["stream"] is True
    assert response["status"] == 200
    assert streamed_text(response["body"]) == "the answer is kumquat"
    assert "data: [DONE]" in response["body"]


def test_a_secret_of_the_daemon_is_redacted_in_the_log(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    from tests.support.processes import start_daemon

    _configure(sandbox, model.endpoint)
    model.add(Reply(content="fine"))
    daemon = start_daemon(sandbox.socket, {**sandbox.env, "DB_PASSWORD": SECRET})
    try:
        result = _ask(sandbox, "--debug", "-p", f"the password is {SECRET}")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
    assert result.returncode == 0, result.stderr
    text = _log_of(result.stderr).read_text()
    assert SECRET not in text
    assert "the password is [redacted]" in text


def test_without_debug_no_log_is_written(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    _configure(sandbox, model.endpoint)
    model.add(Reply(content="quiet"))
    result = _ask(sandbox, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert "debug:" not in result.stderr
    assert not (sandbox.root / "state" / "coding-harness" / "debug").exists()


def test_the_config_keys_debug_and_quiet_are_defaults_for_the_flags(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    _configure(sandbox, model.endpoint, debug=True, quiet=True)
    model.add(Reply(content="from config"))
    result = _ask(sandbox, "-p", "hello")
    assert result.returncode == 0, result.stderr
    assert "fake · fake-model" not in result.stderr  # quiet: no route line
    assert [e["kind"] for e in _entries(_log_of(result.stderr))] == ["request", "response"]


def test_the_log_is_capped_and_rotates_to_dot_1(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    """A log at its cap (16 MiB) becomes SESSION.jsonl.1 and a new one begins (issue 25,
    item 6): here the first run's log is padded up to the cap, then a second turn of the
    same session writes."""
    _configure(sandbox, model.endpoint)
    model.add(Reply(content="first"), Reply(content="second"))
    first = _ask(sandbox, "--debug", "-p", "one")
    assert first.returncode == 0, first.stderr
    path = _log_of(first.stderr)
    with path.open("a") as log:
        log.write(json.dumps({"kind": "padding", "pad": "p" * (MAX_LOG_BYTES - 200)}) + "\n")
    session = path.stem
    second = _ask(sandbox, "--debug", "--session", session, "-p", "two")
    assert second.returncode == 0, second.stderr
    rotated = path.with_name(path.name + ".1")
    assert [e["kind"] for e in _entries(rotated)] == ["request", "response", "padding"]
    assert [e["kind"] for e in _entries(path)] == ["request", "response"]
    assert streamed_text(_entries(path)[1]["body"]) == "second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
