"""`initialize {session}`: create or join a session in the first request (issue 11 item 16).

Real daemon, real sockets, the fake model server. The combined form must answer
as `session.create` + `session.attach` would, errors included, and a one-shot
using it must still hand the daemon every key it needs.
"""

from __future__ import annotations

import json
import signal
import socket
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from coding_harness.protocol import errors
from coding_harness.protocol.client import Connection, connect
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import (
    FakeModelServer,
    Reply,
    start_stream,
    stream_chunks,
    write_piece,
)
from tests.support.processes import client, run_harness, start_daemon, wait_for_event

OLD_RESULT_KEYS = {"notice", "daemon", "protocol", "client_id", "key_env"}


def fresh(sandbox: Sandbox) -> Connection:
    return connect(sandbox.socket)


def test_initialize_with_a_new_session_creates_it_attached_to_the_connection(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    model.add(Reply(content="hello there"))
    with fresh(sandbox) as conn:
        info = conn.initialize("t", "0", session={"cwd": str(sandbox.workspace)})
        session = info["session"]
        assert set(info) == OLD_RESULT_KEYS | {"session"}
        assert session["cwd"] == str(sandbox.workspace.resolve())
        assert (session["provider"], session["model"]) == ("fake", "fake-model")
        assert session["last_seq"] == 0 and "key_env" in session
        conn.request("session.submit", {"session": session["session"], "text": "hi"})
        finished = wait_for_event(conn, "turn.finished")  # events come on this connection
        assert finished["data"]["reply"] == "hello there"
    with client(sandbox.socket) as other:
        [listed] = other.request("session.list")["sessions"]
        assert listed["session"] == session["session"]


def test_initialize_with_an_id_joins_an_existing_session(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    model.add(Reply(content="first"), Reply(content="second"))
    with client(sandbox.socket, "owner") as owner:
        sid = owner.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        owner.request("session.attach", {"session": sid})
        owner.request("session.submit", {"session": sid, "text": "one"})
        wait_for_event(owner, "turn.finished")
        with fresh(sandbox) as joiner:
            info = joiner.initialize("t", "0", session={"id": sid})
            assert info["session"]["session"] == sid
            assert info["session"]["last_seq"] > 0 and info["session"]["messages"] >= 2
            owner.request("session.submit", {"session": sid, "text": "two"})
            finished = wait_for_event(joiner, "turn.finished")
            assert finished["data"]["reply"] == "second"


def _error(conn: Connection, method: str, params: dict[str, Any]) -> errors.RpcError:
    with pytest.raises(errors.RpcError) as caught:
        conn.request(method, params)
    return caught.value


@pytest.mark.parametrize(
    ("spec", "separately"),
    [
        ({"id": "no-such-session"}, ("session.attach", {"session": "no-such-session"})),
        ({"cwd": "/no/such/folder"}, ("session.create", {"cwd": "/no/such/folder"})),
        (
            {"cwd": "WS", "provider": "nobody"},
            ("session.create", {"cwd": "WS", "provider": "nobody"}),
        ),
    ],
    ids=["unknown-session", "bad-cwd", "bad-provider"],
)
def test_the_combined_form_fails_as_the_separate_requests_do(
    sandbox: Sandbox, model: FakeModelServer, daemon, spec: dict[str, Any], separately: Any
) -> None:
    ws = str(sandbox.workspace)
    spec = {k: ws if v == "WS" else v for k, v in spec.items()}
    method, params = separately
    params = {k: ws if v == "WS" else v for k, v in params.items()}
    with client(sandbox.socket) as old:
        expected = _error(old, method, params)
    with fresh(sandbox) as conn:
        with pytest.raises(errors.RpcError) as caught:
            conn.initialize("t", "0", session=spec)
        assert (type(caught.value), caught.value.message) == (type(expected), expected.message)
        # The connection is not initialized: it may introduce itself again.
        with pytest.raises(errors.NotInitialized):
            conn.request("session.list")
        assert "session" not in conn.initialize("t", "0")
        assert conn.request("session.list")["sessions"] == []


@pytest.mark.parametrize(
    "spec", ["a string", {"id": "x", "cwd": "/"}, {"cwd": "/", "colour": "blue"}]
)
def test_a_session_param_of_the_wrong_shape_is_invalid_params(
    sandbox: Sandbox, model: FakeModelServer, daemon, spec: Any
) -> None:
    with (
        fresh(sandbox) as conn,
        pytest.raises(errors.InvalidParams, match=r"session must be \{cwd"),
    ):
        conn.request("initialize", {"protocol": 1, "session": spec})


def test_without_a_session_initialize_answers_as_before(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    with fresh(sandbox) as conn:
        assert set(conn.initialize("t", "0")) == OLD_RESULT_KEYS
        assert conn.request("session.list")["sessions"] == []


@dataclass
class KeyRecorder:
    """Scripted for the fake server: note the request's Authorization, answer `ok`."""

    seen: list[str | None] = field(default_factory=list)

    def perform(self, handler: BaseHTTPRequestHandler, released: Any) -> None:
        self.seen.append(handler.headers.get("Authorization"))
        start_stream(handler)
        for chunk in stream_chunks(Reply(content="ok")):
            write_piece(handler, f"data: {json.dumps(chunk)}\n\n".encode())
        write_piece(handler, b"data: [DONE]\n\n")
        write_piece(handler, b"")


def test_a_key_only_the_daemons_config_names_reaches_the_model(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    """The client's HOME has no config, so its first request cannot name the key; the
    daemon's answer names it, and the one-shot sends it with the submit."""
    sandbox.write_config(model.endpoint, api_key_env="ONLY_DAEMON_KNOWS_KEY")
    recorder = KeyRecorder()
    model.add(recorder)
    daemon_env = {k: v for k, v in sandbox.env.items() if k != "ONLY_DAEMON_KNOWS_KEY"}
    daemon = start_daemon(sandbox.socket, daemon_env)
    try:
        client_home = sandbox.root / "client-home"
        client_home.mkdir()
        env = {**sandbox.env, "HOME": str(client_home), "ONLY_DAEMON_KNOWS_KEY": "sk-from-shell"}
        done = run_harness(["-q", "-p", "hi"], env=env, cwd=sandbox.workspace)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert recorder.seen == ["Bearer sk-from-shell"]


def test_a_oneshot_with_an_unknown_session_still_exits_5(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    done = run_harness(["--session", "nope", "-p", "hi"], env=sandbox.env, cwd=Path("/"))
    assert done.returncode == 5
    assert "no session 'nope'" in done.stderr


def _first_request(path: Path, seen: list[dict[str, Any]]) -> threading.Thread:
    """A stand-in daemon on `path` that keeps the first request and refuses it."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path.parent.mkdir(parents=True, exist_ok=True)
    listener.bind(str(path))
    listener.listen(1)

    def serve() -> None:
        with listener:
            conn, _ = listener.accept()
            with conn, conn.makefile("rb") as lines:
                request = json.loads(lines.readline())
                seen.append(request)
                error = {"code": -32010, "message": "stand-in daemon"}
                answer = {"jsonrpc": "2.0", "id": request["id"], "error": error}
                conn.sendall(json.dumps(answer).encode() + b"\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return thread


def test_with_no_config_file_the_first_request_carries_the_keys_discovery_looks_for(
    sandbox: Sandbox,
) -> None:
    """First-run discovery runs in session.create, before any submit: a key exported
    only in the client's shell must already be in the combined initialize."""
    seen: list[dict[str, Any]] = []
    server = _first_request(sandbox.socket, seen)
    env = {**sandbox.env, "OPENROUTER_API_KEY": "sk-or-client-only"}
    done = run_harness(["-q", "-p", "hi"], env=env, cwd=sandbox.workspace, timeout=30)
    server.join(timeout=5)
    [request] = seen
    assert request["method"] == "initialize"
    assert request["params"]["session"]["env"]["OPENROUTER_API_KEY"] == "sk-or-client-only"
    assert done.returncode == 5 and "stand-in daemon" in done.stderr


def _key_env(sandbox: Sandbox) -> list[str]:
    with client(sandbox.socket) as plain:
        names: list[str] = plain.server_info["key_env"]
    return names


def test_a_submit_in_initialize_starts_the_first_turn_in_the_same_request(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    model.add(Reply(content="answered at once"))
    names = _key_env(sandbox)
    with fresh(sandbox) as conn:
        submit = {"text": "hi", "options": {"yes": False}, "env_names": names}
        info = conn.initialize("t", "0", session={"cwd": str(sandbox.workspace), "submit": submit})
        turn = info["session"]["turn"]
        assert turn["turn"].startswith("t-") and turn["queued"] is False
        finished = wait_for_event(conn, "turn.finished", turn=turn["turn"])
        assert finished["data"]["reply"] == "answered at once"
    [request] = model.requests
    assert request["messages"][-1]["content"] == "hi"


def test_a_submit_waits_for_the_client_when_a_key_the_session_names_was_not_looked_up(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """The daemon names a key the client did not say it looked for: the turn does not
    start without it, and the client submits with the key's value itself."""
    model.add(Reply(content="after the submit"))
    names = _key_env(sandbox)
    with fresh(sandbox) as conn:
        submit = {"text": "hi", "env_names": names[1:]}
        info = conn.initialize("t", "0", session={"cwd": str(sandbox.workspace), "submit": submit})
        session = info["session"]
        assert session["turn"] is None
        assert conn.request("session.list")["sessions"][0]["state"] == "idle"
        assert model.requests == []
        conn.request("session.submit", {"session": session["session"], "text": "hi"})
        finished = wait_for_event(conn, "turn.finished")
        assert finished["data"]["reply"] == "after the submit"


def test_a_submit_the_daemon_refuses_leaves_the_session_for_the_clients_own_submit(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    names = _key_env(sandbox)
    with fresh(sandbox) as conn:
        submit = {"text": 42, "env_names": names}  # session.submit wants a string
        info = conn.initialize("t", "0", session={"cwd": str(sandbox.workspace), "submit": submit})
        assert info["session"]["turn"] is None
        error = _error(conn, "session.submit", {"session": info["session"]["session"], "text": 42})
        assert isinstance(error, errors.InvalidParams)
    assert model.requests == []


@pytest.mark.parametrize(
    "submit",
    ["hi", {"options": {}}, {"text": "hi", "colour": "blue"}, {"text": "hi", "env_names": "A"}],
    ids=["not-an-object", "no-text", "unknown-key", "names-not-a-list"],
)
def test_a_submit_of_the_wrong_shape_is_invalid_params(
    sandbox: Sandbox, model: FakeModelServer, daemon, submit: Any
) -> None:
    with fresh(sandbox) as conn:
        spec = {"cwd": str(sandbox.workspace), "submit": submit}
        with pytest.raises(errors.InvalidParams, match=r"session.submit must be \{text"):
            conn.initialize("t", "0", session=spec)
        assert "session" not in conn.initialize("t", "0")
        assert conn.request("session.list")["sessions"] == []


def test_a_oneshots_first_request_carries_its_task_and_the_keys_it_looked_up(
    sandbox: Sandbox,
) -> None:
    seen: list[dict[str, Any]] = []
    server = _first_request(sandbox.socket, seen)
    env = {**sandbox.env, "OPENROUTER_API_KEY": "sk-or-client-only"}
    run_harness(["-q", "-y", "-p", "fix the tests"], env=env, cwd=sandbox.workspace, timeout=30)
    server.join(timeout=5)
    [request] = seen
    submit = request["params"]["session"]["submit"]
    assert submit["text"] == "fix the tests"
    assert submit["options"] == {"yes": True, "dry_run": False}
    assert {"OPENROUTER_API_KEY", "OPENAI_API_KEY"} <= set(submit["env_names"])


def test_with_debug_the_first_request_starts_no_turn(sandbox: Sandbox) -> None:
    """--debug switches the session's log on first, so the turn's first call is in it."""
    seen: list[dict[str, Any]] = []
    server = _first_request(sandbox.socket, seen)
    run_harness(["-q", "--debug", "-p", "hi"], env=sandbox.env, cwd=sandbox.workspace, timeout=30)
    server.join(timeout=5)
    [request] = seen
    assert "submit" not in request["params"]["session"]


def test_the_answer_to_a_submit_comes_before_its_turns_first_event(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    """The turn starts once the submit's answer is out: its first steps hold the daemon
    for milliseconds, and the answer used to wait behind them."""
    model.add(*[Reply(content="ok")] * 5)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw, raw.makefile("rb") as lines:
        raw.connect(str(sandbox.socket))

        def call(request_id: int, method: str, params: dict[str, Any]) -> None:
            message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
            raw.sendall(json.dumps(message).encode() + b"\n")

        call(1, "initialize", {"protocol": 1, "session": {"cwd": str(sandbox.workspace)}})
        sid = json.loads(lines.readline())["result"]["session"]["session"]
        for request_id in range(2, 7):
            call(request_id, "session.submit", {"session": sid, "text": "hi"})
            order = []
            while "turn.finished" not in order:
                message = json.loads(lines.readline())
                order.append(message["params"]["kind"] if "method" in message else "answer")
            assert order[0] == "answer", order
