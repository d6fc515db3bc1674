"""How long the daemon's event loop stalls while a hostile workspace is indexed.

Starts a real daemon (an instant model beside it), polls `daemon.status` on its
own connection every `--every` ms, and meanwhile runs loads, one after the other:

- `bombs`: a session on a workspace of eight 64,000-byte files of unclosed
  brackets (the whole workspace a small batch, once parsed in the daemon's own
  process), then the eight rewritten and a `session.map` that refreshes them;
- `mentions`: a turn whose request is a 120,000-character run without a dot,
  then turns and `session.map`s that scan that conversation again;
- `definitions`: a session on a workspace of many files full of definitions.

A `warmup` load runs first (a plain turn: the daemon imports what turns need, on
its event loop, once in its life); it is reported apart and not counted in `all`.
Prints, per load and over all, the longest and the 99th percentile wait for
`daemon.status` (the issue's target: the worst under 100 ms). Another load
(bench/mcp_stall.py) adds itself by importing `BenchDaemon`, `StatusPoller` and
`run_loads` and passing its own `Load`s.

    .venv/bin/python bench/daemon_stall.py [--load bombs --load mentions ...] [--every 10]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.instant_model import InstantModel
from coding_harness.protocol.client import Connection
from tests.support.processes import client, events_until_finished, start_daemon, stop_daemon

BOMB_BYTES = 64_000
DOTLESS_RUN = 120_000


class BenchDaemon:
    """A daemon in a fresh temporary home, with an instant model as its provider."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="chs-", dir="/tmp"))
        self.model = InstantModel().start()
        home = self.root / "home"
        home.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env.update(HOME=str(home), XDG_STATE_HOME=str(self.root / "state"))
        profile = {"type": "openai", "endpoint": self.model.endpoint, "model": "m", "notes": False}
        (home / ".coding_harness.json").write_text(json.dumps({"providers": {"m": profile}}))
        self.socket = self.root / "run" / "harnessd.sock"
        self.process = start_daemon(self.socket, self.env)

    def workspace(self, name: str) -> Path:
        folder = self.root / name
        folder.mkdir()
        return folder

    def connect(self) -> Connection:
        return client(self.socket, "bench")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=15)
        stop_daemon(self.socket)
        self.model.stop()
        shutil.rmtree(self.root, ignore_errors=True)


class StatusPoller:
    """Sends `daemon.status` every `every` seconds on its own connection and keeps each
    wait, in ms, under the name of the load running (`phase`)."""

    def __init__(self, daemon: BenchDaemon, every: float) -> None:
        self._conn = daemon.connect()
        self._every = every
        self.phase = "idle"
        self.waits: dict[str, list[float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def __enter__(self) -> StatusPoller:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()

    def _poll(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            self._conn.request("daemon.status", timeout=120)
            waited = (time.perf_counter() - started) * 1000
            self.waits.setdefault(self.phase, []).append(waited)
            self._stop.wait(max(0.0, self._every - waited / 1000))


Load = Callable[[BenchDaemon, Connection], None]


def session_on(conn: Connection, workspace: Path) -> str:
    session: str = conn.request("session.create", {"cwd": str(workspace)})["session"]
    conn.request("session.attach", {"session": session})
    return session


def ready_map(conn: Connection, session: str, timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found: dict[str, Any] = conn.request("session.map", {"session": session}, timeout=120)
        if found["state"] != "building":
            return found
        time.sleep(0.2)
    raise SystemExit("the code index was not built in time")


def turn(conn: Connection, session: str, text: str) -> None:
    conn.request("session.submit", {"session": session, "text": text}, timeout=120)
    events_until_finished(conn, timeout=300)


def write_bombs(folder: Path, mark: str = "") -> None:
    for n in range(8):
        body = (f"# {mark}\n" + "(" * BOMB_BYTES)[:BOMB_BYTES]
        (folder / f"bomb{n}.py").write_text(body)


def warmup(daemon: BenchDaemon, conn: Connection) -> None:
    workspace = daemon.workspace("warmup")
    (workspace / "app.py").write_text("def handler():\n    return 1\n")
    session = session_on(conn, workspace)
    ready_map(conn, session)
    turn(conn, session, "what does handler do")


def bombs(daemon: BenchDaemon, conn: Connection) -> None:
    workspace = daemon.workspace("bombs")
    write_bombs(workspace)
    session = session_on(conn, workspace)
    ready_map(conn, session)
    time.sleep(2.5)  # past the walk cache's settling time: the rewrite is seen as a change
    write_bombs(workspace, "again")
    conn.request("session.map", {"session": session}, timeout=120)


def mentions(daemon: BenchDaemon, conn: Connection) -> None:
    workspace = daemon.workspace("mentions")
    (workspace / "app.py").write_text("def handler():\n    return 1\n")
    session = session_on(conn, workspace)
    ready_map(conn, session)
    turn(conn, session, "a" * DOTLESS_RUN + " then call handler")
    for _ in range(2):
        turn(conn, session, "and again, in handler")
        conn.request("session.map", {"session": session}, timeout=120)


def definitions(daemon: BenchDaemon, conn: Connection) -> None:
    workspace = daemon.workspace("definitions")
    for n in range(200):
        lines = [f"def f{n}_{i}(a, b):\n    return g{i}(a)\n" for i in range(2_000)]
        (workspace / f"m{n}.py").write_text("".join(lines))
    session = session_on(conn, workspace)
    ready_map(conn, session)
    turn(conn, session, "where is f3_7 used")


LOADS: dict[str, Load] = {"bombs": bombs, "mentions": mentions, "definitions": definitions}


def run_loads(loads: dict[str, Load], every: float) -> dict[str, list[float]]:
    """Each load in turn against one daemon, `daemon.status` polled all along."""
    daemon = BenchDaemon()
    try:
        with StatusPoller(daemon, every) as poller:
            conn = daemon.connect()
            try:
                time.sleep(0.5)
                for name, load in {"warmup": warmup, **loads}.items():
                    poller.phase = name
                    load(daemon, conn)
                poller.phase = "idle"
                time.sleep(0.5)
            finally:
                conn.close()
        return poller.waits
    finally:
        daemon.stop()


def report(waits: dict[str, list[float]]) -> None:
    every = [wait for name, found in waits.items() if name != "warmup" for wait in found]
    print("daemon.status waits, ms (longest, p99, median, count):")
    for name, found in [*waits.items(), ("all", every)]:
        p99 = statistics.quantiles(found, n=100, method="inclusive")[98] if found[1:] else found[0]
        median = statistics.median(found)
        print(f"  {name:12} {max(found):8.1f} {p99:8.1f} {median:6.1f} {len(found):6}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", action="append", choices=sorted(LOADS), default=[])
    parser.add_argument("--every", type=float, default=10.0, help="ms between polls")
    parsed = parser.parse_args()
    chosen = {name: LOADS[name] for name in parsed.load or LOADS}
    report(run_loads(chosen, parsed.every / 1000))


if __name__ == "__main__":
    main()
