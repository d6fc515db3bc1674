"""Running the real `harness` in a test's sandbox, and reading what it and the proxy saw.

Shared by the real-server tests: `harness` runs one `-p` turn with
`--output-format stream-json` and times it as the user waits; `parse` and
`kinds` read its events; `figure` records what a test measured for the
summary table (`conftest.py`); `assert_valid_history` is what every server
here accepts of a request's messages.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from tests.integration.conftest import Sandbox
from tests.servers.conftest import Figure, record_figure
from tests.servers.real_servers import RunningServer
from tests.servers.recording_proxy import Exchange, RecordingProxy
from tests.support.commands import run_command

ProxyFor = Callable[..., tuple[RunningServer, RecordingProxy]]

CODING = "Read calc.py, then fix the bug in the function add."


def harness(box: Sandbox, *args: str, stdin: str | None = None) -> tuple[Any, float]:
    started = time.monotonic()
    run = run_command(
        "harness",
        ["--output-format", "stream-json", *args],
        env=box.env,
        cwd=box.workspace,
        input=None if stdin is None else stdin.encode(),
        timeout=600,
    )
    return run, time.monotonic() - started


def parse(stdout: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The events of a stream-json run, and its final result object."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    assert lines, "harness printed nothing on standard output"
    return [line for line in lines if "kind" in line], lines[-1]


def kinds(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [event.get("data") or {} for event in events if event.get("kind") == kind]


def figure(
    server: str,
    test: str,
    exchanges: list[Exchange],
    runs: list[tuple[str, float]],
    largest: int | None = None,
) -> None:
    """Requests as the proxy saw them; tokens as `harness` reported them, per turn; the
    largest prompt of one request as the server counted it."""
    usages = [parse(stdout)[1].get("usage") or {} for stdout, _ in runs]
    record_figure(
        Figure(
            server=server,
            test=test,
            requests=len(exchanges),
            statuses=[e.status for e in exchanges],
            prompt_tokens=sum(int(u.get("prompt_tokens") or 0) for u in usages),
            completion_tokens=sum(int(u.get("completion_tokens") or 0) for u in usages),
            turn_seconds=[seconds for _, seconds in runs],
            largest_prompt=largest
            if largest is not None
            else max((e.usage.get("prompt_tokens", 0) for e in exchanges), default=0),
        )
    )


def assert_valid_history(exchange: Exchange) -> None:
    """What every server here accepts: string contents, each tool call answered."""
    asked: set[str] = set()
    for message in exchange.messages:
        assert message.get("role") in {"system", "user", "assistant", "tool"}, message
        if "content" in message:
            assert isinstance(message["content"], str), message
        for call in message.get("tool_calls") or []:
            asked.add(call["id"])
        if message.get("role") == "tool":
            assert message.get("tool_call_id") in asked, message
