"""Silent and flooding model servers against a real daemon (issue 10 items 12 and 8).

The fake model server stalls (accepts and sends nothing, sends headers and
nothing, stops mid-answer) or sends a 50 MB body. With tiny configured
limits the user hears how long the model has kept them waiting, the stall is
reported within its limit and asked again once, and a huge body is read only
up to its cap; the session stays usable.
"""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from coding_harness.protocol.client import Connection
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.model_faults import Huge, Stall
from tests.support.processes import client, run_harness
from tests.support.waiting import wait_for

PROMPT = "say hello"
LIMITS = {"first_byte": 1, "idle": 1}
FIFTY_MB = 50_000_000


def configure(sandbox: Sandbox, endpoint: str, kind: str = "openai") -> None:
    profile = {"type": kind, "endpoint": endpoint, "model": "fake-model", "timeouts": LIMITS}
    config = {
        "default_provider": "fake",
        "retry": {"attempts": 4, "base_delay": 0.01, "max_delay": 0.05},
        "providers": {"fake": profile},
    }
    (sandbox.home / ".coding_harness.json").write_text(json.dumps(config))


def harness(sandbox: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, timeout=60)


def turn_events(conn: Connection, timeout: float = 30) -> list[tuple[str, dict[str, Any]]]:
    """Every event up to and including the turn's `turn.finished`."""
    seen: list[tuple[str, dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        note = conn.next_notification(timeout=deadline - time.monotonic())
        if note is None or note.get("method") != "event":
            continue
        seen.append((note["params"]["kind"], note["params"]["data"]))
        if seen[-1][0] == "turn.finished":
            return seen
    raise AssertionError(f"no turn.finished within {timeout} s: {seen}")


def test_a_silent_server_is_reported_within_its_limit_and_asked_again_once(
    sandbox: Sandbox, model: FakeModelServer, daemon: subprocess.Popen[bytes]
) -> None:
    configure(sandbox, model.endpoint)
    model.add(Stall(), Stall(), Stall())
    with client(sandbox.socket) as conn:
        session = conn.request("session.create", {"cwd": str(sandbox.workspace)})["session"]
        conn.request("session.attach", {"session": session})
        started = time.monotonic()
        conn.request("session.submit", {"session": session, "text": PROMPT})
        events = turn_events(conn)
        elapsed = time.monotonic() - started
        # The server's thread records a request as it reads it, which on a busy machine
        # can come after the daemon gave up on it.
        wait_for(lambda: len(model.requests) >= 2, "the second request to be recorded")
        assert len(model.requests) == 2  # asked again once, not four times
        assert elapsed < 8, elapsed  # two 1 s limits and the retry wait, not 2 x 300 s
        waits = [data for kind, data in events if kind == "model.waiting"]
        assert len(waits) >= 4, events  # every 0.25 s under a 1 s limit, on each attempt
        assert all(w["done"] is False and 0 < w["seconds"] <= 1.2 for w in waits)
        [retry] = [d["message"] for k, d in events if k == "notice" and "retrying" in d["message"]]
        assert "went silent" in retry and "(attempt 2 of 2)" in retry
        [error] = [d["message"] for k, d in events if k == "error"]
        assert "no answer from the model server" in error and "nothing for 1 s" in error
        assert "providers.fake.timeouts.first_byte" in error
        assert events[-1][1]["exit_code"] == 1
        model.add(Reply(content="Hello again."))
        conn.request("session.submit", {"session": session, "text": PROMPT})
        assert turn_events(conn)[-1][1]["reply"] == "Hello again."


def test_silence_after_headers_then_an_answer(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint)
    model.add(Stall(headers=True), Reply(content="Hello there."))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert "Hello there." in result.stdout
    retries = [line for line in result.stderr.splitlines() if "retrying in" in line]
    assert len(retries) == 1 and "went silent" in retries[0]


def test_silence_in_the_middle_of_a_shown_answer_ends_the_turn(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint)
    model.add(Stall(partial=Reply(content="Hello there, friend"), after_chunks=2))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "went silent in the middle of the answer" in error
    assert "providers.fake.timeouts.idle" in error and "already shown" in error
    assert len(model.requests) == 1


def test_a_50_mb_answer_sent_whole_is_refused(sandbox: Sandbox, model: FakeModelServer) -> None:
    configure(sandbox, model.endpoint, kind="mlx")
    huge = Huge(size=FIFTY_MB, declare=False)
    model.add(huge, Reply(content="A normal answer."))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    [error] = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert "is larger than 16 MiB" in error and "not read further" in error
    assert huge.sent < 30_000_000  # 16 MiB read, then the connection was dropped
    assert len(model.requests) == 1  # not asked again: the same answer would come
    again = harness(sandbox, "-p", PROMPT)
    assert again.returncode == 0 and "A normal answer." in again.stdout


def test_a_50_mb_error_body_is_read_only_for_its_message(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    configure(sandbox, model.endpoint)
    head = b'{"error": {"message": "overloaded '
    huge = Huge(size=FIFTY_MB, status=503, head=head, declare=False)
    model.add(huge, Reply(content="Recovered."))
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert "Recovered." in result.stdout
    [retry] = [line for line in result.stderr.splitlines() if "retrying in" in line]
    assert "HTTP 503" in retry
    assert huge.sent < 20_000_000  # 64 KiB read, then the connection was dropped
