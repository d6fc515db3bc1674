"""How fast `harness -p` answers against a warm daemon and an instant model.

Prints the median time from process start to the first byte of output for
`harness -p hi`, the same for the bare interpreter (`python -c pass`), and
their ratio (target: under 3x). Everything runs in a temporary HOME and socket;
the daemon and the fake model server are stopped at the end.

    .venv/bin/python bench/oneshot_startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import start_daemon, stop_daemon


def first_byte(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    process.stdout.read(1)
    elapsed = time.perf_counter() - start
    process.communicate()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    root = Path(tempfile.mkdtemp(prefix="chb-", dir="/tmp"))
    (root / "home").mkdir()
    (root / "ws").mkdir()
    socket_path = root / "run" / "harnessd.sock"
    env = dict(
        os.environ,
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(socket_path),
    )
    server = FakeModelServer([Reply(content="ok")] * (runs + 2)).start()
    config = {"providers": {"fake": {"type": "openai", "endpoint": server.endpoint, "model": "m"}}}
    (root / "home" / ".coding_harness.json").write_text(json.dumps(config))
    daemon = start_daemon(socket_path, env)
    try:
        harness = [sys.executable, "-m", "coding_harness.client", "-q", "-p", "hi"]
        first_byte(harness, env, root / "ws")  # warm the connection pool
        oneshot = [first_byte(harness, env, root / "ws") for _ in range(runs)]
        bare = [first_byte([sys.executable, "-c", "print(1)"], env, root) for _ in range(runs)]
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        stop_daemon(socket_path)
        server.stop()
    a, b = statistics.median(oneshot), statistics.median(bare)
    print(f"harness -p to first byte (median of {runs}): {a * 1000:.1f} ms")
    print(f"python -c 'print(1)' to first byte:         {b * 1000:.1f} ms")
    print(f"ratio: {a / b:.2f}x (target < 3x)")


if __name__ == "__main__":
    main()
