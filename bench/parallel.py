"""Ten turns at once: wall time and the daemon's memory.

N sessions, each in a folder of its own, get one task each at the same moment
against a model that takes `--latency` seconds per answer
(`instant_model.py` with a delay, every connection served side by side). The
turns overlap: the total should be close to one turn's time, far under N
times it. Prints one turn alone, then the N together, the most requests the
model had at once, and the daemon's resident memory (RSS, psutil: before, the
peak sampled every 20 ms while the turns run, and after), with its child
processes (the code index's parse workers) apart. `--max-parallel 1` shows the
queue of a local server instead: the turns then take N times one.

    .venv/bin/python bench/parallel.py [--sessions 10] [--latency 1.0] [--max-parallel 0]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.instant_model import InstantModel
from coding_harness.protocol.client import Connection
from tests.support.processes import client, start_daemon

MB = 1024 * 1024


class MemoryWatch:
    """The peak RSS of a process, and of its children, sampled on a thread."""

    def __init__(self, pid: int) -> None:
        self.process = psutil.Process(pid)
        self.peak = self.children_peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def now(self) -> int:
        return int(self.process.memory_info().rss)

    def __enter__(self) -> MemoryWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(0.02):
            self.peak = max(self.peak, self.now())
            children = 0
            for child in self.process.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    children += child.memory_info().rss
            self.children_peak = max(self.children_peak, children)


def run_turns(conn: Connection, root: Path, count: int, tag: str) -> float:
    """Create `count` sessions in folders of their own, submit a task to each at once,
    and return the seconds until every turn finished."""
    sessions = []
    for n in range(count):
        folder = root / f"{tag}{n}"
        folder.mkdir()
        (folder / "notes.txt").write_text(f"folder {n}\n")
        sid = conn.request("session.create", {"cwd": str(folder)})["session"]
        conn.request("session.attach", {"session": sid})
        sessions.append(sid)
    start = time.monotonic()
    for sid in sessions:
        conn.request("session.submit", {"session": sid, "text": "say ok"})
    finished: set[str] = set()
    while len(finished) < count:
        note = conn.next_notification(timeout=120)
        if note is None:
            raise TimeoutError("the turns did not finish within 120 s")
        params = note["params"]
        if params.get("kind") == "turn.finished":
            assert params["data"]["exit_code"] == 0, params["data"]
            finished.add(params["session"])
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--max-parallel", type=int, default=0, help="0: no limit")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="chp-", dir="/tmp"))
    (root / "home").mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CODING_", "XDG_"))}
    env.update(
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
        CODING_HARNESS_PROBE_PORTS="none",
    )
    model = InstantModel(content="ok", latency=args.latency).start()
    profile = {"type": "openai", "endpoint": model.endpoint, "model": "m", "notes": False}
    config = {
        "default_provider": "slow",
        "providers": {"slow": {**profile, "max_parallel": args.max_parallel}},
        "agent": {"sandbox": "off"},
    }
    (root / "home" / ".coding_harness.json").write_text(json.dumps(config))
    daemon = start_daemon(socket_path, env)
    try:
        with client(socket_path, "bench") as conn:
            one = run_turns(conn, root, 1, "alone")
            watch = MemoryWatch(daemon.pid)
            before = watch.now()
            with watch:
                together = run_turns(conn, root, args.sessions, "many")
            after = watch.now()
        limit = args.max_parallel or "none"
        print(f"model latency {args.latency:.2f} s, max_parallel {limit}")
        print(f"one turn alone:          {one:6.2f} s")
        serial = args.sessions * one
        print(
            f"{args.sessions} turns at once:      {together:6.2f} s "
            f"({together / one:.2f}x one turn; one after another: {serial:.1f} s)"
        )
        calls = model.posts / (args.sessions + 1)
        print(f"model calls per turn:    {calls:.1f}; most at once: {model.most_at_once}")
        print(
            f"daemon RSS: {before / MB:.1f} MB before, peak {watch.peak / MB:.1f} MB, "
            f"{after / MB:.1f} MB after; its children peaked at {watch.children_peak / MB:.1f} MB"
        )
    finally:
        daemon.terminate()
        daemon.wait(timeout=15)
        model.stop()


if __name__ == "__main__":
    main()
