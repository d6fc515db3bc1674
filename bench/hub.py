"""The team hub on a real PostgreSQL: event fan-out to readers on other daemons, and a
queue drained by several runners.

`fanout`: one runner streams a turn of `--events` text deltas (a model sending a
chunk every `--pace` seconds); `--readers` clients follow that session live, spread
over `--reader-daemons` other daemons, each attached through the hub (rows written
by the runner's mirror, LISTEN/NOTIFY waking each reader daemon). Prints the
events per second the readers received in all, and the latency of each event
from its emission on the runner (the event's own `at`) to its arrival at a
reader: median, p99, longest. Every daemon and the server run on this machine,
so their clocks agree.

`queue`: `--tasks` tasks queued at once, drained by `--runners` runners of
`--slots` slots each (each task a trivial turn in a fresh worktree of a bare
repository); prints the time from the first submit to the last task done, tasks
per second, how many each runner ran, and whether each ran exactly once.

    .venv/bin/python bench/hub.py [fanout|queue|all] [--events 2000] [--readers 20]

Needs PostgreSQL's server (Debian's postgresql), as the tests do.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.instant_model import InstantModel
from coding_harness.protocol.client import Connection
from tests.support.hub_machines import Machine, machines
from tests.support.hub_tasks import joined, origin_repo, runner_config, task_rows
from tests.support.postgres import PostgresServer, start_server, why_absent
from tests.support.waiting import wait_for

CHUNK_CHARS = 7  # the fake stream's characters per delta (stream_chunks)


class Reader:
    """One client following a session: the arrival time of each text delta."""

    def __init__(self, machine: Machine, session: str) -> None:
        self.conn: Connection = machine.client(name="bench-reader", approvals=False)
        self.conn.request("session.attach", {"session": session})
        self.latencies: list[float] = []
        self.seqs: list[int] = []
        self.done = threading.Event()
        self.last_arrival = 0.0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self.done.is_set():
            try:
                note = self.conn.next_notification(timeout=60)
            except Exception:
                return
            now = time.time()
            params = note.get("params") or {}
            if params.get("kind") == "text.delta":
                self.latencies.append(now - float(params.get("at", now)))
                self.seqs.append(int(params["seq"]))
                self.last_arrival = now
            if params.get("kind") == "turn.finished":
                self.done.set()

    def close(self) -> None:
        self.done.set()
        self.conn.close()


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def fanout(postgres: PostgresServer, args: argparse.Namespace) -> None:
    url = postgres.fresh_database()
    model = InstantModel(content="x" * (CHUNK_CHARS * args.events), pace=args.pace).start()
    with machines() as team:
        runner = team.make("runner")
        runner.configure(model.endpoint, url)
        others = [team.make(f"reader{n}") for n in range(args.reader_daemons)]
        for machine in others:
            machine.configure(model.endpoint, url)
        for machine in [runner, *others]:
            machine.start()
        for machine in [runner, *others]:
            joined(machine)
        conn = runner.client()
        session = str(conn.request("session.create", {"cwd": str(runner.workspace)})["session"])
        wait_for(lambda: _in_hub(postgres, url, session), "the session in the hub", within=30)
        readers = [Reader(others[n % len(others)], session) for n in range(args.readers)]
        started = time.time()
        conn.request("session.submit", {"session": session, "text": "stream"})
        for reader in readers:
            reader.done.wait(timeout=300)
        conn.close()
        received = sum(len(r.latencies) for r in readers)
        ended = max(r.last_arrival for r in readers)
        every = [value for r in readers for value in r.latencies]
        whole = all(r.seqs == sorted(set(r.seqs)) for r in readers)
        counts = sorted({len(r.seqs) for r in readers})
        for reader in readers:
            reader.close()
    model.stop()
    print(
        f"fanout: {args.events} deltas (one every {args.pace * 1000:g} ms) to {args.readers}"
        f" readers on {args.reader_daemons} daemons: {received / (ended - started):,.0f}"
        f" events/s received; latency median {statistics.median(every) * 1000:.1f} ms,"
        f" p99 {_percentile(every, 0.99) * 1000:.1f} ms, longest {max(every) * 1000:.1f} ms;"
        f" deltas per reader {counts}, each in order without repeats: {whole}"
    )


def _in_hub(postgres: PostgresServer, url: str, session: str) -> bool:
    return bool(postgres.psql(f"SELECT 1 FROM sessions WHERE id = '{session}'", url).strip())


def queue(postgres: PostgresServer, args: argparse.Namespace) -> None:
    url = postgres.fresh_database()
    model = InstantModel(content="ok").start()
    with machines() as team:
        origin = origin_repo(team.root)
        runners = [team.make(f"runner{n}") for n in range(args.runners)]
        for machine in runners:
            runner_config(machine, model.endpoint, url, slots=args.slots, repos=[str(origin)])
            machine.start()
        for machine in runners:
            joined(machine)
        conn = runners[0].client()
        started = time.monotonic()
        ids = [
            str(
                conn.request(
                    "queue.submit", {"text": f"task {n}", "repo": str(origin), "ref": "main"}
                )["task"]
            )
            for n in range(args.tasks)
        ]
        conn.close()

        def drained() -> list[dict[str, str]] | None:
            rows = [r for r in task_rows(postgres, url) if r["id"] in ids]
            return rows if all(r["state"] in ("done", "failed") for r in rows) else None

        rows = wait_for(drained, "every task done", within=600, every=0.2)
        took = time.monotonic() - started
    model.stop()
    by = {m.name: sum(r["runner"] == m.name for r in rows) for m in runners}
    once = all(r["attempt"] == "1" for r in rows) and len({r["session_id"] for r in rows}) == len(
        rows
    )
    done = sum(r["state"] == "done" for r in rows)
    print(
        f"queue: {args.tasks} tasks, {args.runners} runners x {args.slots} slots: {took:.1f} s,"
        f" {args.tasks / took:.1f} tasks/s; done {done}; by runner {by};"
        f" each exactly once: {once}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="?", default="all", choices=["fanout", "queue", "all"])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--pace", type=float, default=0.002)
    parser.add_argument("--readers", type=int, default=20)
    parser.add_argument("--reader-daemons", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--runners", type=int, default=3)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    tempfile.tempdir = "/tmp"
    postgres = start_server()
    if postgres is None:
        print(why_absent())
        return 1
    try:
        if args.which in ("fanout", "all"):
            fanout(postgres, args)
        if args.which in ("queue", "all"):
            queue(postgres, args)
    finally:
        postgres.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
