"""How fast `harness -p` answers against a warm daemon and an instant model.

Prints the median time from process start to the first byte of output for
`harness -q -p hi`, the same for the bare interpreter (`python -c 'print(1)'`),
and their ratio (target: 1.5x or under with the bytecode cache), twice: with a
bytecode cache, as an installed package runs (in a temporary
PYTHONPYCACHEPREFIX, so the source tree is not written), and with
PYTHONDONTWRITEBYTECODE=1, where the project's modules are compiled on every
run (when the tree has no __pycache__). The
runs of each kind are interleaved, so a busy machine slows all of them alike.
Everything runs in a temporary HOME and socket; the daemon and the model
server are stopped at the end. The profile takes no turn-close notes: that
second model call follows each reply, so it would overlap the next run. The
model is `bench/instant_model.py`, which answers each request with a reply
rendered in advance; `--model fake` uses the test suite's `http.server` fake
instead (1.5 to 2 ms of its own per request), as the rows before 2026-12-02 in
docs/benchmarks.md did.

With `--importtime N` it also prints the N costliest imports of one warm
`harness -q -p hi` that the bare interpreter does not make (`python -X
importtime`, self time: the figure inflates each import a little).

    .venv/bin/python bench/oneshot_startup.py [--runs 20] [--importtime 15] [--model fake]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.instant_model import InstantModel
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import start_daemon, stop_daemon

HARNESS = [sys.executable, "-m", "coding_harness.client", "-q", "-p", "hi"]
BARE = [sys.executable, "-c", "print(1)"]


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


def sandbox(root: Path) -> dict[str, str]:
    (root / "home").mkdir()
    (root / "ws").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        HOME=str(root / "home"),
        XDG_STATE_HOME=str(root / "state"),
        CODING_HARNESS_SOCKET=str(root / "run" / "harnessd.sock"),
        PYTHONPYCACHEPREFIX=str(root / "pycache"),
    )
    return env


def measure(env: dict[str, str], root: Path, runs: int) -> dict[str, list[float]]:
    """Interleaved runs of each command, cached and uncached bytecode."""
    # The standard library's own caches are read; the project's modules, which have
    # none in a tree that was never run without PYTHONDONTWRITEBYTECODE, are compiled.
    uncached = {k: v for k, v in env.items() if k != "PYTHONPYCACHEPREFIX"}
    uncached["PYTHONDONTWRITEBYTECODE"] = "1"
    kinds = {
        "harness, cached": (HARNESS, env, root / "ws"),
        "python, cached": (BARE, env, root),
        "harness, compiled": (HARNESS, uncached, root / "ws"),
        "python, compiled": (BARE, uncached, root),
    }
    for argv, kind_env, cwd in kinds.values():  # warm the pool and the bytecode cache
        first_byte(argv, kind_env, cwd)
    times: dict[str, list[float]] = {name: [] for name in kinds}
    for _ in range(runs):
        for name, (argv, kind_env, cwd) in kinds.items():
            times[name].append(first_byte(argv, kind_env, cwd))
    return times


def imported(argv: list[str], env: dict[str, str], cwd: Path) -> dict[str, int]:
    """Each module `argv` imports, with its self time in microseconds (-X importtime)."""
    run = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]], env=env, cwd=cwd, capture_output=True, text=True
    )
    found: dict[str, int] = {}
    for line in run.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            found[parts[2].strip()] = int(parts[0])
    return found


def import_report(env: dict[str, str], root: Path, top: int) -> list[str]:
    """The `top` costliest imports of a warm one-shot that `python -c` does not make."""
    bare = imported(BARE, env, root)
    ours = imported(HARNESS, env, root / "ws")
    extra = {name: us for name, us in ours.items() if name not in bare}
    total = sum(extra.values()) / 1000
    lines = [f"imports beyond the bare interpreter's: {len(extra)}, {total:.1f} ms self"]
    for name, us in sorted(extra.items(), key=lambda item: -item[1])[:top]:
        lines.append(f"  {us / 1000:5.2f} ms  {name}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--importtime", type=int, default=0, metavar="N")
    parser.add_argument("--model", choices=("instant", "fake"), default="instant")
    parsed = parser.parse_args()
    runs = parsed.runs
    root = Path(tempfile.mkdtemp(prefix="chb-", dir="/tmp"))
    env = sandbox(root)
    server: InstantModel | FakeModelServer
    if parsed.model == "instant":
        server = InstantModel("ok").start()
    else:
        server = FakeModelServer([Reply(content="ok")] * (2 * runs + 8)).start()
    # No turn-close notes call: it follows each reply and would run during the next start.
    profile = {"type": "openai", "endpoint": server.endpoint, "model": "m", "notes": False}
    config = {"providers": {"fake": profile}}
    (root / "home" / ".coding_harness.json").write_text(json.dumps(config))
    socket_path = Path(env["CODING_HARNESS_SOCKET"])
    daemon = start_daemon(socket_path, env)
    try:
        times = measure(env, root, runs)
        report = import_report(env, root, parsed.importtime) if parsed.importtime else []
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        stop_daemon(socket_path)
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    print(f"medians of {runs} runs, process start to first byte ({parsed.model} model):")
    for kind in ("cached", "compiled"):
        a, b = medians[f"harness, {kind}"], medians[f"python, {kind}"]
        label = "bytecode cached " if kind == "cached" else "no bytecode cache"
        print(f"  {label}: harness -p {a:5.1f} ms, python -c {b:5.1f} ms, ratio {a / b:.2f}x")
    print("target: 1.5x or under, bytecode cached")
    print("\n".join(report))


if __name__ == "__main__":
    main()
