"""MCP servers kept warm in the daemon, against one set of servers per session.

Real servers from PyPI (`mcp-server-time`, `mcp-server-fetch`, `mcp-server-git`,
stdio) under a real daemon on a temporary socket, driven by the fake model
server through sessions on the protocol client. Prints:

(a) the first call to a cold server (mcp-server-time) in a daemon that has run
    a turn already: from `session.submit` to the call's `tool.result`, as an
    attached client sees them; the daemon starts a turn's servers before its
    first model request, so the server's start-up, handshake and tool listing
    are inside it (and shown apart: its `mcp.state` starting to ready);
(b) median and p95 of `--calls` calls to the same server, warm, each in a turn
    of its own: from the `tool.call` event to its `tool.result`, and from the
    submit to the result; for contrast, the same calls made straight through
    the SDK's `Client` (no daemon, no turn);
(c) processes and memory of `--sessions` sessions that each call one tool of
    each of the three servers in one daemon, against the same sessions each
    starting its own set of the three (spawned with the SDK's `Client`, a set at
    a time, all held open, each server called once as in the daemon). Memory is
    the servers' RSS summed, and their USS (pages no other process shares).

    .venv/bin/python bench/mcp.py [--calls 50] [--sessions 10]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.protocol.client import Connection
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import client, start_daemon, stop_daemon
from tests.support.web_pages import local_site, send

BIN = Path(sys.executable).parent
PROGRAMS = ("mcp-server-time", "mcp-server-fetch", "mcp-server-git")
MB = 1024 * 1024


@dataclass(kw_only=True, slots=True)
class Place:
    """Where the daemon runs, and the things its servers are pointed at."""

    home: Path
    socket: Path
    repo: Path
    page: str
    endpoint: str


@dataclass(kw_only=True, slots=True)
class Footprint:
    processes: int
    rss: int
    uss: int


@dataclass(kw_only=True, slots=True)
class Turn:
    """One turn's times: submit to the first tool result, and each call to its result."""

    to_result: float
    calls: list[float]
    errors: int  # tool results that are errors (a server not there, a call that failed)
    server_start: float = 0.0  # from an `mcp.state` starting to its ready
    to_starting: float = 0.0  # from the submit to that starting


def server_args(repo: Path) -> dict[str, list[str]]:
    return {
        "time": [],
        "fetch": ["--ignore-robots-txt", "--allow-private-ips"],
        "git": ["--repository", str(repo)],
    }


def git_init(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def calls_of_each(page: str, repo: Path, turn: int) -> list[tuple[str, dict[str, Any]]]:
    """One call per server; the arguments change each turn (the repetition guard)."""
    return [
        tool_call("mcp__time__convert_time", **convert(turn)),
        tool_call("mcp__fetch__fetch", url=f"{page}?turn={turn}", raw=True),
        tool_call("mcp__git__git_status", repo_path=str(repo)),
    ]


def convert(turn: int) -> dict[str, str]:
    return {
        "source_timezone": "UTC",
        "time": f"{turn // 60 % 24:02d}:{turn % 60:02d}",
        "target_timezone": "Europe/Paris",
    }


def configure(place: Place, *names: str) -> None:
    """The daemon's config: the fake model and the servers `names` (read at each submit)."""
    servers = {
        name: {"command": str(BIN / f"mcp-server-{name}"), "args": args, "approve": "never"}
        for name, args in server_args(place.repo).items()
        if name in names
    }
    profile = {"type": "openai", "endpoint": place.endpoint, "model": "fake-model"}
    config = {"default_provider": "fake", "providers": {"fake": profile}, "mcp_servers": servers}
    (place.home / ".coding_harness.json").write_text(json.dumps(config))


@contextmanager
def daemon_place(model: FakeModelServer, page: str) -> Iterator[Place]:
    root = Path(tempfile.mkdtemp(prefix="mcpb-", dir="/tmp"))
    home, socket = root / "home", root / "run" / "harnessd.sock"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODING_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket),
        CODING_HARNESS_PROBE_PORTS="none",
    )
    repo = git_init(root / "repo")
    place = Place(home=home, socket=socket, repo=repo, page=page, endpoint=model.endpoint)
    configure(place)
    start_daemon(socket, env)
    try:
        yield place
    finally:
        stop_daemon(socket)
        shutil.rmtree(root, ignore_errors=True)


def open_session(conn: Connection, place: Place) -> str:
    session: str = conn.request("session.create", {"cwd": str(place.repo)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def timed_turn(conn: Connection, session: str) -> Turn:
    """Runs one turn, timing it from the events an attached client sees."""
    submitted = time.perf_counter()
    conn.request("session.submit", {"session": session, "text": "go"})
    started: dict[str, float] = {}
    turn = Turn(to_result=0.0, calls=[], errors=0)
    starting = 0.0
    while True:
        note = conn.next_notification(timeout=120)
        if note is None:
            raise RuntimeError("no turn.finished within 120 s")
        now, params = time.perf_counter(), note["params"]
        data = params.get("data") or {}
        if params["kind"] == "mcp.state" and data.get("state") == "starting":
            starting = now
            turn.to_starting = turn.to_starting or now - submitted
        elif params["kind"] == "mcp.state" and data.get("state") == "ready" and starting:
            turn.server_start = now - starting
        elif params["kind"] == "tool.call":
            started[str(data.get("id"))] = now
        elif params["kind"] == "tool.result" and str(data.get("id")) in started:
            turn.calls.append(now - started.pop(str(data.get("id"))))
            turn.to_result = turn.to_result or now - submitted
            turn.errors += str(data.get("result", "")).startswith("Error")
        elif params["kind"] == "turn.finished":
            if data.get("exit_code") != 0:
                raise RuntimeError(f"turn failed: {data}")
            return turn


def footprint(processes: list[psutil.Process]) -> Footprint:
    rss = uss = 0
    for process in processes:
        info = process.memory_full_info()
        rss, uss = rss + info.rss, uss + info.uss
    return Footprint(processes=len(processes), rss=rss, uss=uss)


def servers_under(pid: int) -> list[psutil.Process]:
    found = []
    for child in psutil.Process(pid).children(recursive=True):
        if any(program in " ".join(child.cmdline()) for program in PROGRAMS):
            found.append(child)
    return found


def through_daemon(calls: int, sessions: int, page: str) -> dict[str, Any]:
    model = FakeModelServer().start()
    try:
        with daemon_place(model, page) as place, client(place.socket, "bench") as conn:
            of_each = functools.partial(calls_of_each, place.page, place.repo)
            first = open_session(conn, place)
            # A turn without servers first: a new daemon's first turn has costs of its own.
            model.add(Reply(content="ok"))
            timed_turn(conn, first)
            configure(place, "time")
            turns = []
            for turn in range(calls + 1):  # the first finds the server cold
                model.add(Reply(tool_calls=of_each(turn)[:1]), Reply(content="ok"))
                turns.append(timed_turn(conn, first))
            configure(place, "time", "fetch", "git")
            for number in range(sessions):
                session = open_session(conn, place)
                model.add(Reply(tool_calls=of_each(1000 + number)), Reply(content="ok"))
                turns.append(timed_turn(conn, session))
            daemon = psutil.Process(int(conn.request("daemon.status")["pid"]))
            listed = conn.request("mcp.list", {})["servers"]
            return {
                "cold": turns[0],
                "warm": turns[1 : calls + 1],
                "sessions": turns[calls + 2 :],  # the first started fetch and git
                "errors": sum(turn.errors for turn in turns),
                "states": {server["name"]: server["state"] for server in listed},
                "shared": footprint(servers_under(daemon.pid)),
                "daemon_rss": daemon.memory_info().rss,
            }
    finally:
        model.stop()


def stdio(command: str, args: list[str] | None = None) -> Any:
    """An SDK client of a server spawned here; its log lines go nowhere."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    quiet = Path(os.devnull).open("w")  # noqa: SIM115 (open as long as this process)
    return Client(stdio_client(StdioServerParameters(command=command, args=args or []), quiet))


async def direct_warm_calls(calls: int) -> list[float]:
    took = []
    async with stdio(str(BIN / "mcp-server-time")) as session:
        await session.call_tool("convert_time", convert(0))
        for turn in range(1, calls + 1):
            start = time.perf_counter()
            await session.call_tool("convert_time", convert(turn))
            took.append(time.perf_counter() - start)
    return took


async def one_set_per_session(sessions: int, page: str, repo: Path) -> tuple[Footprint, float]:
    """Each session starts its own three servers (a set at a time), all held open."""
    release = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    start = time.perf_counter()
    for number in range(sessions):
        ready = [asyncio.Event() for _ in PROGRAMS]
        calls = calls_of_each(page, repo, 2000 + number)
        for (name, args), event, (tool, arguments) in zip(
            server_args(repo).items(), ready, calls, strict=True
        ):
            command = str(BIN / f"mcp-server-{name}")
            own = tool.split("__")[-1]
            tasks.append(asyncio.create_task(hold(command, args, own, arguments, event, release)))
        await asyncio.gather(*(event.wait() for event in ready))
    started = time.perf_counter() - start
    measured = footprint(servers_under(os.getpid()))
    release.set()
    await asyncio.gather(*tasks)
    return measured, started


async def hold(
    command: str,
    args: list[str],
    tool: str,
    arguments: dict[str, Any],
    ready: asyncio.Event,
    release: asyncio.Event,
) -> None:
    async with stdio(command, args) as session:
        await session.call_tool(tool, arguments)
        ready.set()
        await release.wait()


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def spread(values: list[float]) -> str:
    return f"median {ms(statistics.median(values))}, p95 {ms(percentile(values, 0.95))}"


def report(
    sessions: int, daemon: dict[str, Any], direct: list[float], own: Footprint, started: float
) -> None:
    cold: Turn = daemon["cold"]
    warm: list[Turn] = daemon["warm"]
    shared: Footprint = daemon["shared"]
    print("(a) cold mcp-server-time, through the daemon (after a turn without servers):")
    print(f"    submit to the tool's result {ms(cold.to_result)}")
    print(f"    in it, submit to the server's starting {ms(cold.to_starting)}")
    print(f"    the server's start (starting to ready) {ms(cold.server_start)}")
    print(f"    and the call itself (tool.call to tool.result) {ms(cold.calls[0])}")
    print(f"(b) {len(warm)} warm calls through the daemon, each in a turn of its own:")
    print(f"    call to result: {spread([turn.calls[0] for turn in warm])}")
    print(f"    submit to the tool's result: {spread([turn.to_result for turn in warm])}")
    print(f"    the same calls straight through the SDK: {spread(direct)}")
    print(f"(c) {sessions} sessions x 3 servers (states {daemon['states']})")
    for label, used in (("shared in the daemon:", shared), ("one set per session: ", own)):
        print(
            f"    {label} {used.processes} processes,"
            f" RSS {used.rss / MB:.0f} MB, USS {used.uss / MB:.0f} MB"
        )
    later = [turn.to_result for turn in daemon["sessions"]]
    print(f"    a new session's submit to its first result, servers warm: {spread(later)}")
    print(f"    the daemon itself: RSS {daemon['daemon_rss'] / MB:.0f} MB")
    print(f"    one set per session took {started:.1f} s to start, a set at a time")
    if daemon["errors"]:
        print(f"WARNING: {daemon['errors']} tool results through the daemon were errors")


def main() -> None:
    # Run as a script, this file's folder is on the path, and its name would hide the
    # SDK's package `mcp` from the imports below: the folder leaves the path first.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--sessions", type=int, default=10)
    args = parser.parse_args()
    shelf = b"<html><body><p>The kettle is on the third shelf.</p></body></html>"
    with local_site({"/shelf": lambda h: send(h, 200, shelf, "text/html")}) as base:
        page = f"{base}/shelf"
        daemon = through_daemon(args.calls, args.sessions, page)
        direct = asyncio.run(direct_warm_calls(args.calls))
        root = Path(tempfile.mkdtemp(prefix="mcpb-", dir="/tmp"))
        try:
            repo = git_init(root / "repo")
            own, started = asyncio.run(one_set_per_session(args.sessions, page, repo))
        finally:
            shutil.rmtree(root, ignore_errors=True)
    report(args.sessions, daemon, direct, own, started)


if __name__ == "__main__":
    main()
