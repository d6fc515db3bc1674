"""Nothing an MCP server sends can freeze or fill the daemon (issue 25, items 8 and 9).

The real daemon with the hostile servers of tests/support/hostile_mcp.py: one
whose tool call answers forever (an endless stdio line, an endless HTTP body)
fails that call with one line while the daemon's memory stays bounded, and the
next call works on a restarted link; one that lists 4,000 tools whose schemas
multiply through `$ref`s offers at most 256, names the rest in `harness mcp list`,
and `daemon.status` is answered while it loads: the listing (3.3 MB) is
condensed in a child process, and the daemon parses only the child's small
answer; so is a valid tool result of 120,000 blocks, which the model gets cut.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from coding_harness.daemon.mcp.catalog import MAX_TOOLS
from coding_harness.daemon.mcp.offload import CONDENSE_ABOVE
from coding_harness.daemon.mcp.results import MAX_RESULT_CHARS
from coding_harness.protocol import methods as m
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.hostile_mcp import BLOCKS, HostileHttp
from tests.support.mcp_setup import daemon_with_servers, offered_tools, tool_results, use_servers
from tests.support.memory_watch import RssWatch
from tests.support.processes import client, run_harness

pytestmark = pytest.mark.integration

HOSTILE = str(Path(__file__).resolve().parents[1] / "support" / "hostile_mcp.py")
# What the daemon may grow by while a server floods it: a few capped messages and
# their copies, far from the gigabytes an endless answer read whole reaches.
GROWTH_BOUND = 200 * 1024 * 1024
MANY = 4000
BASE = 3  # echo, flood and blocks come before the many
CONDENSED = re.compile(r"MCP server (\w+): (.*); condensed in a child process from .* to (\d+) KiB")


def condensed(sandbox: Sandbox) -> list[tuple[str, str, int]]:
    """The daemon's log lines of messages it had the child condense: (server, what, KiB)."""
    log = (sandbox.root / "state" / "coding-harness" / "daemon.log").read_text()
    return [(name, what, int(kib)) for name, what, kib in CONDENSED.findall(log)]


def stdio_entry(*args: str) -> dict[str, Any]:
    return {"command": sys.executable, "args": [HOSTILE, "stdio", *args], "approve": "never"}


@pytest.fixture
def harnessd(sandbox: Sandbox, model: FakeModelServer) -> Iterator[subprocess.Popen[bytes]]:
    with daemon_with_servers(sandbox) as process:
        yield process


@pytest.fixture
def web() -> Iterator[str]:
    with HostileHttp() as url:
        yield url


@pytest.fixture
def crowded_web() -> Iterator[str]:
    with HostileHttp(tools=MANY) as url:
        yield url


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_endless_answer_fails_the_call_in_one_line_and_the_next_call_works(
    sandbox: Sandbox,
    model: FakeModelServer,
    harnessd: subprocess.Popen[bytes],
    web: str,
    transport: str,
) -> None:
    entry = stdio_entry() if transport == "stdio" else {"url": web, "approve": "never"}
    use_servers(sandbox, {"hostile": {**entry, "call_timeout": 30}})
    model.add(
        Reply(tool_calls=[tool_call("mcp__hostile__flood")]),
        Reply(tool_calls=[tool_call("mcp__hostile__echo", text="still here")]),
        Reply(content="done"),
    )
    before = psutil.Process(harnessd.pid).memory_info().rss
    with RssWatch(harnessd.pid, before + GROWTH_BOUND) as watch:
        done = run_harness(["-p", "flood it"], env=sandbox.env, cwd=sandbox.workspace)
    assert not watch.killed, f"the daemon grew to {watch.peak // 2**20} MiB"
    assert done.returncode == 0, done.stderr
    [flooded] = tool_results(model, 1)
    assert "more than 4 MiB, the most one MCP message may carry" in flooded
    assert "restarted" in flooded and "\n" not in flooded
    [echoed] = tool_results(model, 2)[1:]
    assert "\nstill here (pid " in echoed  # between the lines that frame it
    log = (sandbox.root / "state" / "coding-harness" / "daemon.log").read_text()
    assert "more than 4 MiB" in log and "Traceback" not in log  # said in one line


def test_thousands_of_tools_are_capped_named_and_the_daemon_answers_meanwhile(
    sandbox: Sandbox, model: FakeModelServer, harnessd: subprocess.Popen[bytes], crowded_web: str
) -> None:
    web = {"url": crowded_web, "approve": "never"}
    use_servers(sandbox, {"many": stdio_entry("--tools", str(MANY)), "web": web})
    restarted: list[dict[str, Any]] = []

    def restart_both() -> None:
        with client(sandbox.socket) as conn:
            for name in ("many", "web"):
                params = {"name": name, "cwd": str(sandbox.workspace)}
                restarted.append(conn.request(m.MCP_RESTART, params, timeout=120)["server"])

    loading = threading.Thread(target=restart_both)
    loading.start()
    answered = 0
    with client(sandbox.socket) as conn:
        while loading.is_alive():
            assert conn.request(m.DAEMON_STATUS, timeout=30)["pid"] == harnessd.pid
            answered += 1
    loading.join()
    assert answered > 0
    for server in restarted:
        assert server["state"] == "ready", server["error"]
        assert len(server["tools"]) == MAX_TOOLS
        assert server["dropped_count"] == MANY + BASE - MAX_TOOLS
        assert server["dropped"][0] == {
            "tool": "tool_0253",
            "reason": f"past the first {MAX_TOOLS} tools, the most one server may offer",
        }

    listed = run_harness(["mcp", "list"], env=sandbox.env, cwd=sandbox.workspace)
    assert listed.returncode == 0, listed.stderr
    assert f"many: {MANY + BASE - MAX_TOOLS} listed tools not offered:" in listed.stdout
    assert "tool_0253, tool_0254" in listed.stdout
    # Both listings were parsed in a child: the daemon read only its answer.
    done_by_child = {name: (what, kib) for name, what, kib in condensed(sandbox)}
    for name in ("many", "web"):
        what, kib = done_by_child[name]
        assert f"{MAX_TOOLS} tools kept, {MANY + BASE - MAX_TOOLS} left out" in what
        assert kib * 1024 < CONDENSE_ABOVE

    model.add(Reply(content="fine"))
    done = run_harness(["-p", "hello"], env=sandbox.env, cwd=sandbox.workspace)
    assert done.returncode == 0, done.stderr
    offered = offered_tools(model)
    assert sum(name.startswith("mcp__many__") for name in offered) == MAX_TOOLS
    assert "mcp__many__tool_0252" in offered and "mcp__many__tool_0253" not in offered


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_result_of_many_blocks_is_rendered_in_the_child_and_cut(
    sandbox: Sandbox,
    model: FakeModelServer,
    harnessd: subprocess.Popen[bytes],
    web: str,
    transport: str,
) -> None:
    entry = stdio_entry() if transport == "stdio" else {"url": web, "approve": "never"}
    use_servers(sandbox, {"pieces": entry})
    model.add(Reply(tool_calls=[tool_call("mcp__pieces__blocks")]), Reply(content="done"))
    done = run_harness(["-p", "read it"], env=sandbox.env, cwd=sandbox.workspace)
    assert done.returncode == 0, done.stderr
    [shown] = tool_results(model, 1)
    assert "x\nx\nx" in shown
    assert f"[cut here: {MAX_RESULT_CHARS} of {2 * BLOCKS - 1} characters shown" in shown
    [(name, what, kib)] = condensed(sandbox)
    assert name == "pieces" and "tool result, rendered" in what and kib < 64
