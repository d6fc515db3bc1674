"""The real `harness` command against real model servers serving a real tiny model.

Run by `make test-servers` (never by `make test`). Each test drives the
installed `harness` in a temporary HOME whose config points at a recording
proxy in front of llama-cpp-python's server or llama.cpp's `llama-server`,
both serving SmolLM2-135M-Instruct from the cache. The model cannot code; the
tests check the wire: what the servers accept, stream, refuse and abort.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.servers.conftest import write_config
from tests.servers.harness_runs import (
    CODING,
    ProxyFor,
    assert_valid_history,
    figure,
    harness,
    kinds,
    parse,
)
from tests.servers.real_servers import LLAMA_CPP_PYTHON, LLAMA_SERVER
from tests.support.commands import start_command

pytestmark = pytest.mark.timeout(900)

GENERAL = "Who is Alan Turing? Answer in two sentences."
LONG_GENERAL = "Give me a long recipe for tomato soup, step by step, with a story for each step."
BIG_FILE = "".join(f"def scale_{i}(value):\n    return value * {i} + {i}\n\n" for i in range(300))


@pytest.mark.parametrize(
    ("name", "profile"),
    [(LLAMA_CPP_PYTHON, "stream"), (LLAMA_CPP_PYTHON, "whole"), (LLAMA_SERVER, "stream")],
)
def test_a_general_question_is_answered(
    sandbox: Sandbox, proxy_for: ProxyFor, name: str, profile: str
) -> None:
    _, proxy = proxy_for(name)
    write_config(sandbox, proxy.endpoint)
    run, seconds = harness(sandbox, "--provider", profile, "-p", GENERAL)
    events, result = parse(run.stdout)
    exchanges = proxy.take()
    figure(name, f"general question ({profile})", exchanges, [(run.stdout, seconds)])
    assert run.returncode == 0, run.stderr
    assert kinds(events, "intent")[0]["route"] == "general"
    assert str(result.get("reply") or "").strip()
    assert [e.status for e in exchanges] == [200]
    assert exchanges[0].streamed == (profile == "stream")
    if profile == "stream":
        assert len(kinds(events, "text.delta")) >= 2, "the answer came in one piece"


@pytest.mark.parametrize(
    ("name", "profile"), [(LLAMA_CPP_PYTHON, "whole"), (LLAMA_SERVER, "stream")]
)
def test_a_coding_turns_tool_results_are_accepted(
    sandbox: Sandbox, proxy_for: ProxyFor, calc_project: Path, name: str, profile: str
) -> None:
    _, proxy = proxy_for(name)
    write_config(sandbox, proxy.endpoint)
    run, seconds = harness(sandbox, "-y", "--provider", profile, "-p", CODING)
    events, _ = parse(run.stdout)
    exchanges = proxy.take()
    figure(name, f"coding turn ({profile})", exchanges, [(run.stdout, seconds)])
    assert kinds(events, "intent")[0]["route"] == "coding"
    assert exchanges and exchanges[0].with_tools
    assert [e.status for e in exchanges] == [200] * len(exchanges), run.stderr
    for exchange in exchanges:
        assert_valid_history(exchange)
    if name == LLAMA_CPP_PYTHON:
        # With chatml-function-calling the tiny model calls tools: results went back.
        assert kinds(events, "tool.result"), run.stderr
        assert any(m["role"] == "tool" for m in exchanges[1].messages)


@pytest.mark.parametrize(
    ("name", "profile"), [(LLAMA_CPP_PYTHON, "whole"), (LLAMA_SERVER, "stream")]
)
def test_a_big_file_in_a_small_context_compacts_or_names_the_context(
    sandbox: Sandbox, proxy_for: ProxyFor, name: str, profile: str
) -> None:
    server, proxy = proxy_for(name, 1024)
    write_config(sandbox, proxy.endpoint)
    prompt = f"Review this file, scale.py:\n\n{BIG_FILE}"
    run, seconds = harness(sandbox, "--provider", profile, "--stdin", stdin=prompt)
    events, result = parse(run.stdout)
    exchanges = proxy.take()
    figure(name, "1,024-token context", exchanges, [(run.stdout, seconds)])
    refused = [e for e in exchanges if e.status != 200]
    assert refused, f"{server.name} with a {server.context}-token context took it all"
    assert len(refused) <= 2, "a context refusal was retried"
    if kinds(events, "context.compacted"):
        return
    assert result["exit_code"] != 0
    errors = [str(data.get("message") or "") for data in kinds(events, "error")]
    assert errors, run.stderr
    assert "context" in errors[-1].lower() and "\n" not in errors[-1], errors[-1]


def _read_until_text(process: subprocess.Popen[bytes], timeout: float) -> list[bytes]:
    """Lines of standard output up to the first `text.delta` event (or the end)."""
    assert process.stdout is not None
    lines: list[bytes] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 1)
        if not ready:
            continue
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if b'"text.delta"' in line:
            break
    return lines


@pytest.mark.parametrize("name", [LLAMA_CPP_PYTHON, LLAMA_SERVER])
def test_a_cancel_mid_stream_leaves_a_valid_history(
    sandbox: Sandbox, proxy_for: ProxyFor, calc_project: Path, name: str
) -> None:
    _, proxy = proxy_for(name)
    write_config(sandbox, proxy.endpoint)
    started = time.monotonic()
    process = start_command(
        "harness",
        ["--output-format", "stream-json", "--provider", "stream", "-p", LONG_GENERAL],
        env=sandbox.env,
        cwd=calc_project,
    )
    try:
        before = _read_until_text(process, timeout=300)
        assert before and b'"text.delta"' in before[-1], b"".join(before).decode()
        os.kill(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    cancelled_seconds = time.monotonic() - started
    _, result = parse((b"".join(before) + out).decode())
    assert result["exit_code"] == 130, err.decode()
    # The next turn runs on the session's profile (`stream`): with llama-cpp-python
    # that is the streaming fallback as well.
    run, seconds = harness(sandbox, "-y", "--session", result["session"], "-p", CODING)
    exchanges = proxy.take()
    cancelled = (b"".join(before) + out).decode()
    figure(
        name,
        "cancel, then a coding turn",
        exchanges,
        [(cancelled, cancelled_seconds), (run.stdout, seconds)],
    )
    assert exchanges[0].streamed and len(exchanges) >= 2
    assert [e.status for e in exchanges[1:]] == [200] * (len(exchanges) - 1), run.stderr
    assert run.returncode != 1, run.stderr
    for follow in exchanges[1:]:
        assert_valid_history(follow)
    said = [m for m in exchanges[1].messages if m["role"] == "user"]
    assert any("tomato soup" in str(m.get("content")) for m in said), "the cancelled turn is lost"


def test_streaming_with_tools_falls_back_to_a_whole_answer(
    sandbox: Sandbox, proxy_for: ProxyFor, calc_project: Path
) -> None:
    server, proxy = proxy_for(LLAMA_CPP_PYTHON)
    write_config(sandbox, proxy.endpoint)
    first, first_seconds = harness(sandbox, "-y", "--provider", "stream", "-p", CODING)
    second, second_seconds = harness(sandbox, "-y", "--provider", "stream", "-p", CODING)
    exchanges = proxy.take()
    runs = [(first.stdout, first_seconds), (second.stdout, second_seconds)]
    figure(LLAMA_CPP_PYTHON, "streaming fallback (2 turns)", exchanges, runs)
    assert "Automatic streaming tool choice" in server.log_text()
    assert exchanges[0].streamed and exchanges[0].with_tools
    later = exchanges[1:]
    assert later and not any(e.streamed for e in later if e.with_tools), "no fallback"
    assert [e.status for e in later] == [200] * len(later), first.stderr + second.stderr
    assert "stream ended before the answer was complete" not in first.stderr
    said = first.stderr + second.stderr
    assert said.count('"type": "mlx"') == 1, said
