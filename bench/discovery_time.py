"""How long first-run discovery (`daemon/providers/discovery.py`) takes.

Two cases, each run several times in one event loop, median and worst printed:

- nothing listening: the four usual ports (11434, 1234, 8080, 8000) on loopback,
  as on a machine with no model server (the ports are checked free first);
- one hanging port: the same four plus a port that accepts and never answers,
  which bounds discovery at its per-probe limit (`PROBE_SECONDS`).

The target is well under a second in total.

    .venv/bin/python bench/discovery_time.py [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import time

from coding_harness.daemon.providers.discovery import LOCAL_SERVERS, PROBE_PORTS_VARIABLE, discover


def _free(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) != 0


async def _times(env: dict[str, str], runs: int) -> list[float]:
    taken = []
    for _ in range(runs):
        started = time.perf_counter()
        await discover({}, env)
        taken.append(time.perf_counter() - started)
    return taken


def _show(what: str, taken: list[float]) -> None:
    print(
        f"{what:<28} median {statistics.median(taken) * 1000:6.1f} ms   "
        f"worst {max(taken) * 1000:6.1f} ms   ({len(taken)} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    busy = [port for _, _, port in LOCAL_SERVERS if not _free(port)]
    if busy:
        print(f"note: something listens on {busy}; 'nothing listening' is not clean here")
    usual = ",".join(f"{name}={port}" for name, _, port in LOCAL_SERVERS)
    hanging = socket.socket()
    hanging.bind(("127.0.0.1", 0))
    hanging.listen(16)
    port = hanging.getsockname()[1]
    try:
        _show("nothing listening", asyncio.run(_times({PROBE_PORTS_VARIABLE: usual}, runs)))
        env = {PROBE_PORTS_VARIABLE: f"{usual},hangs={port}"}
        _show("one hanging port", asyncio.run(_times(env, runs)))
    finally:
        hanging.close()


if __name__ == "__main__":
    main()
