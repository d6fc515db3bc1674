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
from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.notes_requests import is_notes_request
from tests.support.processes import events_until_finished, run_harness
from tests.support.sse_text import streamed_text
from tests.support.waiting import wait_for

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


def _turn_entries(path: Path) -> list[dict[str, Any]]:
    """The turn's own lines: the turn-close notes call that follows it (marked `notes`,
    written some time after the run ends) left out."""
    return [entry for entry in _entries(path) if not entry.get("notes")]


def _notes_lines(path: Path) -> list[dict[str, Any]]:
    return [entry for entry in _entries(path) if entry.get("notes")]


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
    request, response = _turn_entries(path)
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
    assert [e["kind"] for e in _turn_entries(_log_of(result.stderr))] == ["request", "response"]


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
    # The first turn's notes call writes after the run: its lines first, then the padding.
    wait_for(lambda: len(_notes_lines(path)) == 2, "the notes call's lines")
    with path.open("a") as log:
        log.write(json.dumps({"kind": "padding", "pad": "p" * (MAX_LOG_BYTES - 200)}) + "\n")
    session = path.stem
    second = _ask(sandbox, "--debug", "--session", session, "-p", "two")
    assert second.returncode == 0, second.stderr
    rotated = path.with_name(path.name + ".1")
    assert [e["kind"] for e in _turn_entries(rotated)] == ["request", "response", "padding"]
    assert [e["kind"] for e in _turn_entries(path)] == ["request", "response"]
    assert streamed_text(_turn_entries(path)[1]["body"]) == "second"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_notes_call_is_in_the_log_marked_apart_from_the_turns_requests(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    """The turn-close notes call is the session's request after the turn's last one: its
    two lines are in the log, each marked `notes: true` with the turn's id, so the last
    request of the turn read from the log is still the turn's own."""
    model.add(Reply(tool_calls=[tool_call("list_dir", path=".")]), Reply(content="Listed."))
    notes = {"decisions": [], "facts": ["The project is empty"], "todo": []}
    model.notes_script.append(Reply(content=json.dumps(notes)))
    session = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
    switched = conn.request("session.configure", {"session": session, "debug": True})
    path = Path(switched["debug_log"])
    conn.request("session.attach", {"session": session})
    conn.request("session.submit", {"session": session, "text": "list the files"})
    finished = events_until_finished(conn)[-1]["data"]
    assert finished["exit_code"] == 0

    marked = wait_for(lambda: len(_notes_lines(path)) == 2 and _notes_lines(path), "the notes")
    assert [(e["kind"], e["turn"]) for e in marked] == [
        ("request", finished["turn"]),
        ("response", finished["turn"]),
    ]
    assert is_notes_request(marked[0]["body"]) and "The project is empty" in marked[1]["body"]
    own = _turn_entries(path)
    assert [e["kind"] for e in own] == ["request", "response"] * 2
    assert not any("turn" in e or is_notes_request(e["body"]) for e in own)
    assert own[-2]["body"] == model.requests[-1]  # the turn's last request, as the server got it
    assert streamed_text(own[-1]["body"]) == "Listed."
