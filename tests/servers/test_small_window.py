"""A real tiny model at a 4,096-token window: a coding turn of several tool calls that
never overflows it (issue 27, items 4, 5 and 9).

The server runs with `-c 4096` (llama-server) or `--n_ctx 4096`
(llama-cpp-python). llama-server says its window at `/props`, and the daemon
must read it there; llama-cpp-python's server says nothing about its window,
so its profile sets `context_window` as a user of that server would. Either
way the turn runs on the small-window budget (short prompt and schemas, no
propose_edit, compaction from 60%), says once that 4,096 is too small and how
to raise it, and every request it sends fits, its answer's room included, as
the server itself counts the tokens.

The tiny model does not always make two calls in one turn (its prompt holds
the sandbox's path, which changes from run to run): when it answers in words
first, the same session gets another turn, up to three, a longer history in
the same window.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.servers.conftest import write_config
from tests.servers.harness_runs import ProxyFor, assert_valid_history, figure, harness, kinds, parse
from tests.servers.real_servers import LLAMA_CPP_PYTHON, LLAMA_SERVER, RunningServer, prompt_sizes
from tests.servers.recording_proxy import Exchange

pytestmark = pytest.mark.timeout(900)

WINDOW = 4096
ANSWER_ROOM = 160  # the profiles' max_tokens (conftest.write_config)
MAX_TURNS = 3
GO_ON = "Go on: read calc.py, run `make check`, and fix add."
SEVERAL_CALLS = (
    "Read calc.py and the Makefile, run `make check`, fix the bug in the function add, "
    "then run `make check` again."
)


@pytest.mark.parametrize(
    ("name", "profile"), [(LLAMA_CPP_PYTHON, "whole"), (LLAMA_SERVER, "stream")]
)
def test_coding_turns_in_a_4k_window_never_overflow_it(
    sandbox: Sandbox, proxy_for: ProxyFor, calc_project: Path, name: str, profile: str
) -> None:
    server, proxy = proxy_for(name, WINDOW)
    told_by_server = name == LLAMA_SERVER
    own = {} if told_by_server else {"context_window": WINDOW}
    write_config(sandbox, proxy.endpoint, own, max_iterations=6)
    events, runs, said = [], [], ""
    args = ["-y", "--provider", profile, "-p", SEVERAL_CALLS]
    for _ in range(MAX_TURNS):
        run, seconds = harness(sandbox, *args)
        turn_events, result = parse(run.stdout)
        events += turn_events
        runs.append((run.stdout, seconds))
        said += run.stderr
        if name == LLAMA_SERVER or len(kinds(events, "tool.result")) >= 2:
            break
        # The tiny model answered in words before a second call: the session goes on.
        args = ["-y", "--session", result["session"], "-p", GO_ON]
    exchanges = proxy.take()
    sizes = sent_prompts(server, exchanges)
    figure(name, f"coding, 4,096 window ({profile})", exchanges, runs, max(sizes, default=0))

    assert kinds(events, "intent")[0]["route"] == "coding"
    source = "llama.cpp /props n_ctx" if told_by_server else f"providers.{profile}.context_window"
    notices = [str(data.get("message") or "") for data in kinds(events, "notice")]
    assert any(f"is 4,096 tokens ({source})" in n for n in notices), notices
    if told_by_server:
        assert any(look.path == "/props" and look.status == 200 for look in proxy.lookups)
    offered = {tool["function"]["name"] for tool in exchanges[0].body.get("tools") or []}
    assert offered and "propose_edit" not in offered, "not the small-window budget"
    assert all(size + ANSWER_ROOM <= WINDOW for size in sizes), sizes
    for exchange in exchanges:
        assert_valid_history(exchange)
        used = exchange.usage.get("prompt_tokens", 0) + exchange.usage.get("completion_tokens", 0)
        assert used <= WINDOW, exchange.usage
    refused = [e for e in exchanges if e.status != 200]
    if name == LLAMA_SERVER:
        assert not refused, said
        errors = [str(data.get("message") or "") for data in kinds(events, "error")]
        assert not any("context" in error.lower() for error in errors), errors
    else:
        # With chatml-function-calling the tiny model calls tools: several, all in the
        # window. The server writes a call's arguments with no token limit (not the
        # request's max_tokens), so a runaway call can fill the window on its own:
        # such a refusal had a prompt that fit (above), and is counted in the figures.
        assert all("context length" in e.answer.decode(errors="replace") for e in refused)
        assert len(kinds(events, "tool.result")) >= 2, said
        assert len(exchanges) >= 3


def sent_prompts(server: RunningServer, exchanges: list[Exchange]) -> list[int]:
    """The prompt of each request as the server counted it: its usage, and for
    llama-cpp-python also its log, which counts the refused requests too."""
    logged = (
        prompt_sizes(server.log_text())[-len(exchanges) :]
        if server.name == LLAMA_CPP_PYTHON
        else []
    )
    sizes = [exchange.usage.get("prompt_tokens", 0) for exchange in exchanges]
    if len(logged) == len(sizes):
        sizes = [max(size, found or 0) for size, found in zip(sizes, logged, strict=True)]
    return sizes
