"""The warm code index end to end: the real daemon, a generated repository of eight
languages, the fake model server over HTTP.

A coding turn's system prompt carries the repo map once the index is built, led by
the file the request names; find_symbol answers from the index; an edit and a
deletion show at the next turn; a restarted daemon parses nothing again, and its
first turn's find_symbol answers from the stored index while the files changed
meanwhile are parsed behind it; two sessions on one workspace share one build. A
hostile workspace and conversation never keep `daemon.status` waiting.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.index.symbols import UNCHECKED
from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.generated_repo import GeneratedRepo, generate_repo
from tests.support.processes import client, events_until_finished, start_daemon
from tests.support.restarts import new_session
from tests.support.waiting import wait_for

# Parse workers run niced (parse_worker.NICENESS): on a machine busy with other tests
# a bracket bomb's seconds of processor time can take a minute of the clock.
INDEX_WAIT = 120.0


@pytest.fixture
def repo(sandbox: Sandbox) -> GeneratedRepo:
    return generate_repo(sandbox.workspace, 24, body_lines=6)


def ready_map(conn: Connection, session: str) -> dict[str, Any]:
    def answer() -> dict[str, Any] | None:
        found: dict[str, Any] = conn.request("session.map", {"session": session})
        return found if found["state"] == "ready" else None

    return wait_for(answer, "the code index to be built", within=INDEX_WAIT)


def ready_status(conn: Connection) -> list[dict[str, Any]]:
    """`daemon.status`'s indexes once none is building."""

    def answer() -> list[dict[str, Any]] | None:
        found: list[dict[str, Any]] = conn.request("daemon.status", {})["indexes"]
        return found if found and all(s["state"] != "building" for s in found) else None

    return wait_for(answer, "the code index's refresh to end", within=INDEX_WAIT)


def turn(conn: Connection, session: str, text: str) -> list[dict[str, Any]]:
    conn.request("session.submit", {"session": session, "text": text})
    return events_until_finished(conn)


def system_prompt(model: FakeModelServer, request: int = -1) -> str:
    return str(model.requests[request]["messages"][0]["content"])


def test_a_coding_turn_carries_the_map_led_by_the_file_it_names(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection, repo: GeneratedRepo
) -> None:
    session = new_session(conn, sandbox.workspace)
    found = ready_map(conn, session)
    assert found["files"] == len(repo.files) and 0 < found["tokens"] <= found["budget"] == 1024
    named = repo.files[-1]
    model.add(Reply(content="Looked."))
    events = turn(conn, session, f"explain what {named} does and fix the bug in it")
    assert events[-1]["data"]["exit_code"] == 0
    prompt = system_prompt(model)
    section = prompt[prompt.index("<repo-map>") :]
    assert section.splitlines()[2] == f"{named}:"
    assert "find_symbol" in [t["function"]["name"] for t in model.requests[-1]["tools"]]
    context = conn.request("session.context", {"session": session})
    assert context["repo_map_tokens"] > 0


def test_find_symbol_answers_from_the_index_and_follows_edits(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection, repo: GeneratedRepo
) -> None:
    session = new_session(conn, sandbox.workspace)
    ready_map(conn, session)
    name = repo.popular[0]
    path, line = repo.definitions[name]
    model.add(Reply(tool_calls=[("find_symbol", {"name": name})]), Reply(content="Found."))
    turn(conn, session, f"refactor {name} in this project")
    result = model.requests[-1]["messages"][-1]["content"]
    assert f"{path}:{line}:" in result and "used in" in result
    python = next(p for p in repo.files if p.endswith(".py"))
    (sandbox.workspace / python).write_text("def freshly_added_helper():\n    return 42\n")
    gone = next(p for p in repo.files if p.endswith(".go"))
    gone_name = next(n for n, (p, _) in repo.definitions.items() if p == gone)
    (sandbox.workspace / gone).unlink()
    model.add(
        Reply(
            tool_calls=[
                ("find_symbol", {"name": "freshly_added_helper"}),
                ("find_symbol", {"name": gone_name}),
            ]
        ),
        Reply(content="Done."),
    )
    turn(conn, session, "refactor freshly_added_helper in this project")
    results = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert f"{python}:1: function: def freshly_added_helper():" in results[-2]
    assert results[-1].startswith(
        (f"no definition of {gone_name!r} found", f"no definition or use of {gone_name!r}")
    )


def test_a_restarted_daemon_reuses_the_index_and_sessions_share_one(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes], repo: GeneratedRepo
) -> None:
    with client(sandbox.socket) as first:
        ready_map(first, new_session(first, sandbox.workspace))
        status = first.request("daemon.status", {})["indexes"]
        assert [(s["root"], s["state"], s["done"]) for s in status] == [
            (str(sandbox.workspace), "ready", len(repo.files))
        ]
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=10)
    again = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as one, client(sandbox.socket) as two:
            sessions = [new_session(one, sandbox.workspace), new_session(two, sandbox.workspace)]
            answers = [ready_map(c, s) for c, s in zip((one, two), sessions, strict=True)]
            assert answers[0]["map"] == answers[1]["map"] != ""
            status = ready_status(one)  # the stored index answered before its refresh ended
            # One index for the workspace, and nothing parsed again after the restart.
            assert [(s["state"], s["files"], s["done"]) for s in status] == [
                ("ready", len(repo.files), 0)
            ]
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=10)


def test_the_first_find_symbol_after_a_restart_answers_from_the_stored_index(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes], repo: GeneratedRepo
) -> None:
    """Before, the new daemon answered "the code index is still being built (0 of 1
    files parsed); use grep meanwhile" until its first refresh had parsed what changed
    while it was down: here a file the parser takes seconds on."""
    with client(sandbox.socket) as first:
        ready_map(first, new_session(first, sandbox.workspace))
    daemon.send_signal(signal.SIGTERM)
    daemon.wait(timeout=10)
    # Written while the daemon is down: its first refresh parses it.
    (sandbox.workspace / "slow.py").write_bytes(b"(" * 64_000)
    name = repo.popular[0]
    path, line = repo.definitions[name]
    model.add(Reply(tool_calls=[("find_symbol", {"name": name})]), Reply(content="Found."))
    model.add(Reply(tool_calls=[("find_symbol", {"name": name})]), Reply(content="Again."))
    again = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            session = new_session(conn, sandbox.workspace)
            events = turn(conn, session, f"refactor {name} in this project")
            assert events[-1]["data"]["exit_code"] == 0
            stored = model.requests[-1]["messages"][-1]["content"]
            assert ready_status(conn)[0]["done"] == 1  # the refresh behind it parsed it
            turn(conn, session, f"now refactor {name} in this project again")
            current = model.requests[-1]["messages"][-1]["content"]
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(timeout=10)
    assert f"{path}:{line}:" in stored and "still being built" not in stored
    assert stored.endswith(f"note: {UNCHECKED}")  # answered before the refresh ended
    assert f"{path}:{line}:" in current and UNCHECKED not in current


def test_a_secret_in_a_definition_line_is_redacted_from_the_map(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    secret = "s3cr3t-deploy-value-9f8e7d6c"
    (sandbox.workspace / "settings.py").write_text(
        f'DEPLOY_KEY = "{secret}"\nOTHER_KEY = "hunter2-not-known"\n\n'
        f'def deploy(token="{secret}"):\n    return DEPLOY_KEY\n'
    )
    process = start_daemon(sandbox.socket, {**sandbox.env, "DEPLOY_API_KEY": secret})
    try:
        with client(sandbox.socket) as conn:
            found = ready_map(conn, new_session(conn, sandbox.workspace))["map"]
            # A constant is shown without its value; a known secret elsewhere is redacted.
            assert "DEPLOY_KEY = ...\n" in found and "OTHER_KEY = ...\n" in found
            assert secret not in found and "hunter2" not in found
            assert "def deploy(token=" in found and "[redacted" in found
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


def test_a_small_context_gets_a_smaller_map(
    sandbox: Sandbox, model: FakeModelServer, repo: GeneratedRepo
) -> None:
    config = json.loads((sandbox.home / ".coding_harness.json").read_text())
    config["agent"]["context_limit"] = 2048
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))
    process = start_daemon(sandbox.socket, sandbox.env)
    try:
        with client(sandbox.socket) as conn:
            found = ready_map(conn, new_session(conn, sandbox.workspace))
            assert found["budget"] == 256 and 0 < found["tokens"] <= 256
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)


@contextmanager
def longest_status_wait(socket: Path) -> Iterator[list[float]]:
    """Asks `daemon.status` every 10 ms on its own connection meanwhile; the list holds
    the longest wait, in seconds, once the block ends."""
    longest = [0.0]
    done = threading.Event()

    def poll() -> None:
        with client(socket) as conn:
            while not done.wait(0.01):
                started = time.monotonic()
                conn.request("daemon.status", {}, timeout=120)
                longest[0] = max(longest[0], time.monotonic() - started)

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        yield longest
    finally:
        done.set()
        poller.join()


def test_daemon_status_answers_while_a_hostile_workspace_is_indexed(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    """Files of unclosed brackets (seconds of tree-sitter's query each) and a request
    holding a 120,000-character run without a dot (a backtracking scan for paths):
    before, each held the daemon's interpreter for seconds, and every session waited."""
    for n in range(2):
        (sandbox.workspace / f"bomb{n}.py").write_bytes(b"(" * 64_000)
    (sandbox.workspace / "app.py").write_text("def handle_request():\n    return 1\n")
    with longest_status_wait(sandbox.socket) as longest:
        session = new_session(conn, sandbox.workspace)
        found = ready_map(conn, session)
        model.add(Reply(content="Read it."), Reply(content="Again."))
        turn(conn, session, "a" * 120_000 + " then look at app.py")
        turn(conn, session, "and handle_request once more")
    # A correctness bound, not a speed figure: before, the daemon did not answer for
    # 3 s per file and 20 s or more per turn.
    assert longest[0] < 2.0
    assert found["files"] == 3 and "handle_request" in found["map"]
    assert "app.py:" in system_prompt(model)
