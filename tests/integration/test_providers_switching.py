"""provider.list, provider.use, model.use and daemon.reload over the protocol client,
against a real daemon and fake model servers speaking real HTTP."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, run_harness, start_daemon, wait_for_event


def profiles(endpoint: str, **extra: Any) -> dict[str, Any]:
    return {
        "default_provider": "fake",
        "providers": {
            "fake": {"type": "openai", "endpoint": endpoint, "model": "model-a"},
            "other": {
                "type": "openai",
                "endpoint": endpoint,
                "model": "model-b",
                "api_key_env": "OTHER_KEY",
                "pricing": {"input": 1.0, "output": 2.0},
            },
        },
        **extra,
    }


def write_config(sandbox: Sandbox, config: dict[str, Any]) -> Path:
    path = sandbox.home / ".coding_harness.json"
    path.write_text(json.dumps(config))
    return path


@pytest.fixture
def daemon(sandbox: Sandbox, model: FakeModelServer) -> Iterator[None]:
    write_config(sandbox, profiles(model.endpoint))
    process = start_daemon(sandbox.socket, sandbox.env)
    yield
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=10)


def open_session(conn: Connection, cwd: Path, **params: Any) -> str:
    session: str = conn.request("session.create", {"cwd": str(cwd), **params})["session"]
    conn.request("session.attach", {"session": session})
    return session


def run_turn(conn: Connection, session: str, text: str = "hi") -> dict[str, Any]:
    turn = conn.request("session.submit", {"session": session, "text": text})["turn"]
    return wait_for(conn, "turn.finished", turn=turn)


def wait_for(conn: Connection, kind: str, timeout: float = 20, **match: Any) -> dict[str, Any]:
    """The matching event's data."""
    return dict(wait_for_event(conn, kind, timeout, **match)["data"])


def test_provider_list_describes_every_profile(
    sandbox: Sandbox, model: FakeModelServer, daemon: None
) -> None:
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox.workspace, env={"OTHER_KEY": "sk-other"})
        listed = conn.request("provider.list", {"session": session})
        by_name = {p["name"]: p for p in listed["providers"]}
        assert listed["default"] == listed["active"] == "fake"
        assert by_name["fake"] == {
            "name": "fake",
            "type": "openai",
            "model": "model-a",
            "endpoint": model.endpoint,
            "api_key_env": None,
            "key_present": None,
            "pricing": None,
            "default": True,
            "active": True,
        }
        assert by_name["other"]["key_present"] is True
        assert by_name["other"]["pricing"] == {"input": 1.0, "output": 2.0}
        without = conn.request("provider.list", {"cwd": str(sandbox.workspace)})
        assert {p["name"]: p["key_present"] for p in without["providers"]}["other"] is False
        assert "sk-other" not in json.dumps(listed)


def test_model_use_then_provider_use_drops_the_override(
    sandbox: Sandbox, model: FakeModelServer, daemon: None
) -> None:
    model.add(Reply(content="one"), Reply(content="two"), Reply(content="three"))
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox.workspace)
        switched = conn.request("model.use", {"session": session, "model": "model-z"})
        assert (switched["provider"], switched["model"]) == ("fake", "model-z")
        assert "model-z" in wait_for(conn, "notice")["message"]
        assert run_turn(conn, session)["exit_code"] == 0
        assert model.requests[-1]["model"] == "model-z"
        assert conn.request("provider.list", {"session": session})["model"] == "model-z"
        switched = conn.request("provider.use", {"session": session, "name": "other"})
        assert (switched["provider"], switched["model"]) == ("other", "model-b")
        assert run_turn(conn, session)["exit_code"] == 0
        assert model.requests[-1]["model"] == "model-b"
        conn.request("model.use", {"session": session, "model": None})
        assert run_turn(conn, session)["exit_code"] == 0
        assert model.requests[-1]["model"] == "model-b"
        summary = conn.request("session.list")["sessions"][-1]
        assert (summary["provider"], summary["model"]) == ("other", None)


def test_provider_use_refuses_an_unknown_name(sandbox: Sandbox, daemon: None) -> None:
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox.workspace)
        with pytest.raises(errors.InvalidParams, match=r"unknown provider 'nope'.*fake, other"):
            conn.request("provider.use", {"session": session, "name": "nope"})
        with pytest.raises(errors.SessionNotFound):
            conn.request("model.use", {"session": "no-such", "model": "m"})


def test_reload_reads_an_edit_the_stat_check_cannot_see(
    sandbox: Sandbox, model: FakeModelServer, daemon: None
) -> None:
    model.add(Reply(content="before"), Reply(content="after"))
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox.workspace)
        assert run_turn(conn, session)["reply"] == "before"
        path = sandbox.home / ".coding_harness.json"
        before = path.stat()
        path.write_text(path.read_text().replace("model-a", "model-c"))
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert path.stat().st_ino == before.st_ino and path.stat().st_size == before.st_size
        result = conn.request("daemon.reload")
        assert result["reloaded"] is True and result["closed_connections"] == 0
        assert run_turn(conn, session)["reply"] == "after"
        assert [r["model"] for r in model.requests] == ["model-a", "model-c"]


def test_reload_mid_turn_keeps_the_turn_on_its_settings(
    sandbox: Sandbox, model: FakeModelServer, daemon: None
) -> None:
    (sandbox.workspace / "notes.txt").write_text("hello\n")
    model.add(
        Reply(tool_calls=[tool_call("read_file", path="notes.txt")], delay=1.0),
        Reply(content="first turn done"),
    )
    with (
        FakeModelServer([Reply(content="from the new server")]) as newer,
        client(sandbox.socket) as conn,
    ):
        session = open_session(conn, sandbox.workspace)
        turn = conn.request("session.submit", {"session": session, "text": "read it"})["turn"]
        waiting.wait_for(lambda: len(model.requests) == 1, "the model request")
        config = profiles(newer.endpoint)
        config["providers"]["fake"]["model"] = "model-new"
        write_config(sandbox, config)
        result = conn.request("daemon.reload")
        assert result["closed_connections"] == 1  # the old server's client, retired
        finished = wait_for(conn, "turn.finished", turn=turn)
        assert (finished["exit_code"], finished["reply"]) == (0, "first turn done")
        assert [r["model"] for r in model.requests] == ["model-a", "model-a"]
        assert run_turn(conn, session)["reply"] == "from the new server"
        assert newer.requests[-1]["model"] == "model-new"
        assert len(conn.request("session.list")["sessions"]) == 1


def test_reload_reports_config_problems(sandbox: Sandbox, daemon: None) -> None:
    with client(sandbox.socket) as conn:
        (sandbox.home / ".coding_harness.json").write_text("{oops")
        result = conn.request("daemon.reload")
        assert any("not valid JSON" in p for p in result["problems"])


def test_provider_and_model_flags_switch_a_joined_session(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """`--session ID --provider NAME --model ID` switches that session, as /provider
    and /model would; before, the flags were silently ignored."""
    model.add(Reply(content="first"), Reply(content="second"))
    with client(sandbox.socket) as conn:
        session = open_session(conn, sandbox.workspace)
    first = run_harness(["--session", session, "-p", "one"], env=sandbox.env, cwd=sandbox.root)
    assert first.returncode == 0, first.stderr
    args = ["--session", session, "--provider", "other", "--model", "model-c", "-p", "two"]
    second = run_harness(args, env=sandbox.env, cwd=sandbox.root)
    assert second.returncode == 0, second.stderr
    assert [request["model"] for request in model.requests] == ["model-a", "model-c"]
