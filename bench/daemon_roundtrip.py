"""The daemon's share of a one-shot: connect, one combined `initialize` that
creates a session and submits `hi`, then `turn.finished`, against an instant model.

No client process is started, so these figures are the daemon's alone (with the
accept): a raw socket sends the request the moment it connects. Prints the
medians, in ms after connecting, of the answer and of `turn.finished`. With
`--tree DIR` (repeatable) the daemon of another copy of the code runs beside
this one's, interleaved, for a before/after comparison (DIR holds
`coding_harness/{client,daemon,protocol}`, e.g. from `git archive REV client
daemon protocol | tar -x -C DIR/coding_harness`).

    .venv/bin/python bench/daemon_roundtrip.py [--rounds 100] [--tree DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.instant_model import InstantModel
from tests.support.processes import start_daemon, stop_daemon


def one_round(socket_path: Path, workspace: Path, key_names: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(socket_path))
        lines = conn.makefile("rb")
        submit = {"text": "hi", "options": {}, "env_names": key_names}
        params = {"protocol": 1, "session": {"cwd": str(workspace), "submit": submit}}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        conn.sendall(json.dumps(request).encode() + b"\n")
        answered = 0.0
        while True:
            message = json.loads(lines.readline())
            if message.get("id") == 1:
                if message.get("result", {}).get("session", {}).get("turn") is None:
                    raise SystemExit(f"the daemon started no turn: {message}")
                answered = time.perf_counter()
            elif message.get("params", {}).get("kind") == "turn.finished":
                return (answered - started) * 1000, (time.perf_counter() - started) * 1000


def key_env(socket_path: Path) -> list[str]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(str(socket_path))
        conn.sendall(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":1}}\n')
        names: list[str] = json.loads(conn.makefile("rb").readline())["result"]["key_env"]
        return names


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--tree", action="append", default=[], metavar="DIR")
    parsed = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="chr-", dir="/tmp"))
    model = InstantModel().start()
    trees = {"this tree": None, **{f"tree {i + 1}": tree for i, tree in enumerate(parsed.tree)}}
    daemons: dict[str, tuple[subprocess.Popen[bytes], Path, Path, list[str]]] = {}
    try:
        for n, (name, tree) in enumerate(trees.items()):
            home, workspace = root / f"home{n}", root / f"ws{n}"
            home.mkdir()
            workspace.mkdir()
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            env.update(
                HOME=str(home),
                XDG_STATE_HOME=str(root / f"state{n}"),
                PYTHONPYCACHEPREFIX=str(root / f"pycache{n}"),
            )
            if tree is not None:
                env["PYTHONPATH"] = tree
            profile = {"type": "openai", "endpoint": model.endpoint, "model": "m", "notes": False}
            (home / ".coding_harness.json").write_text(json.dumps({"providers": {"m": profile}}))
            socket_path = root / f"run{n}" / "harnessd.sock"
            process = start_daemon(socket_path, env)
            daemons[name] = (process, socket_path, workspace, key_env(socket_path))
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in daemons}
        for round_number in range(parsed.rounds + 5):
            for name, (_, socket_path, workspace, names) in daemons.items():
                time.sleep(0.03)  # the daemon idles between one-shots, as it does in use
                figures = one_round(socket_path, workspace, names)
                if round_number >= 5:  # the first rounds warm the pool and caches
                    times[name].append(figures)
    finally:
        for process, socket_path, _, _ in daemons.values():
            process.terminate()
            process.wait(timeout=10)
            stop_daemon(socket_path)
        model.stop()
        shutil.rmtree(root, ignore_errors=True)
    print(f"medians of {parsed.rounds} rounds, ms after connecting:")
    for name, figures in times.items():
        answer = statistics.median(a for a, _ in figures)
        finished = statistics.median(f for _, f in figures)
        print(f"  {name}: answer {answer:5.2f}, turn.finished {finished:5.2f}")


if __name__ == "__main__":
    main()
