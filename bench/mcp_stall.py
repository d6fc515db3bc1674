"""How long hostile MCP servers can hold up the daemon: the worst `daemon.status` round trip.

A real daemon on a temporary socket, with the servers of tests/support/hostile_mcp.py,
stdio and Streamable HTTP each: one listing 4,000 tools whose schemas multiply
through `$ref`s, and one whose tool call answers forever. While a prober sends
`daemon.status` after `daemon.status` on a connection of its own, the bench
(1) starts the tool-heavy servers (`mcp.restart`: their listing read, 256 tools
of each converted), (2) runs a turn that offers every server's tools and calls
both endless tools, then an ordinary tool on the restarted links. Prints, per
phase and overall, the status round trips: count, median, p99 and the worst.
The issue's target is a worst stall under 100 ms. `measure()` returns the
figures for another bench to print.

    .venv/bin/python bench/mcp_stall.py
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = str(ROOT / "tests" / "support" / "hostile_mcp.py")
MANY = 4000


class Prober:
    """`daemon.status` in a loop on its own connection, each round trip kept by phase."""

    def __init__(self, socket: Path) -> None:
        from tests.support.processes import client

        self._conn = client(socket, name="stall-prober")
        self.phase = "idle"
        self.trips: dict[str, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=30)
        self._conn.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            began = time.perf_counter()
            self._conn.request("daemon.status", timeout=60)
            self.trips.setdefault(self.phase, []).append(time.perf_counter() - began)
            time.sleep(0.002)


@contextmanager
def hostile_daemon(endpoint: str, web_many: str, web_flood: str) -> Iterator[dict[str, Any]]:
    from tests.support.processes import start_daemon, stop_daemon

    root = Path(tempfile.mkdtemp(prefix="mcps-", dir="/tmp"))
    home, socket, work = root / "home", root / "run" / "harnessd.sock", root / "work"
    home.mkdir()
    work.mkdir()
    stdio = [sys.executable, HOSTILE, "stdio"]
    servers = {
        "many": {"command": stdio[0], "args": [*stdio[1:], "--tools", str(MANY)]},
        "flood": {"command": stdio[0], "args": stdio[1:]},
        "webmany": {"url": web_many},
        "webflood": {"url": web_flood},
    }
    for entry in servers.values():
        entry["approve"] = "never"
    profile = {"type": "openai", "endpoint": endpoint, "model": "fake-model"}
    config = {"default_provider": "fake", "providers": {"fake": profile}, "mcp_servers": servers}
    (home / ".coding_harness.json").write_text(json.dumps(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODING_", "XDG_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket),
        CODING_HARNESS_PROBE_PORTS="none",
    )
    start_daemon(socket, env)
    try:
        yield {"socket": socket, "env": env, "work": work}
    finally:
        stop_daemon(socket)
        shutil.rmtree(root, ignore_errors=True)


def measure() -> dict[str, dict[str, float]]:
    """`{phase: {count, median_ms, p99_ms, worst_ms}}`, and `all`."""
    from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
    from tests.support.hostile_mcp import HostileHttp
    from tests.support.processes import client, run_harness

    with (
        FakeModelServer() as model,
        HostileHttp(tools=MANY) as web_many,
        HostileHttp() as web_flood,
        hostile_daemon(model.endpoint, web_many, web_flood) as place,
        Prober(place["socket"]) as prober,
    ):
        time.sleep(0.3)
        with client(place["socket"]) as conn:
            for name, transport in (("many", "stdio"), ("webmany", "http")):
                prober.phase = f"load 4,000 tools, {transport}"
                params = {"name": name, "cwd": str(place["work"])}
                conn.request("mcp.restart", params, timeout=120)
        prober.phase = "turn: flood calls"
        model.add(
            Reply(tool_calls=[tool_call("mcp__flood__flood"), tool_call("mcp__webflood__flood")]),
            Reply(tool_calls=[tool_call("mcp__flood__echo", text="after")]),
            Reply(content="done"),
        )
        done = run_harness(["-p", "go"], env=place["env"], cwd=place["work"], timeout=180)
        if done.returncode != 0:
            raise SystemExit(f"the turn failed: {done.stderr.strip()}")
        prober.phase = "idle after"
        time.sleep(0.3)
    return summarize(prober.trips)


def summarize(trips: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    every = [trip for phase in trips.values() for trip in phase]
    return {phase: figures(values) for phase, values in [*trips.items(), ("all", every)]}


def figures(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {
        "count": len(values),
        "median_ms": statistics.median(values) * 1000,
        "p99_ms": p99 * 1000,
        "worst_ms": ordered[-1] * 1000,
    }


def main() -> None:
    # As a script, this folder is on the path first; it leaves, so that `mcp` is the SDK.
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
    sys.path.insert(0, str(ROOT))
    print(f"{'phase':<28}{'trips':>7}{'median ms':>11}{'p99 ms':>9}{'worst ms':>10}")
    for phase, row in measure().items():
        print(
            f"{phase:<28}{row['count']:>7.0f}{row['median_ms']:>11.1f}"
            f"{row['p99_ms']:>9.1f}{row['worst_ms']:>10.1f}"
        )


if __name__ == "__main__":
    main()
