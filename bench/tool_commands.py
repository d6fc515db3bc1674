"""What running a tool command and a grep cost, now that both run as contained children.

Every tool command goes through `run_process`: its own session, an
allow-listed environment, a parent-death signal (so `fork` instead of
`vfork`), a marker that lets the daemon find what the command left behind,
and a kill of the whole group when it ends. grep runs ripgrep the same way,
so a pathological pattern can be stopped. This prints the median of several
runs for:

- `run_process(["true"])`: the fixed cost of one contained command;
- grep of a word that is nowhere, and of one that is on every 50th line, over
  a generated tree (folders of Python-like files plus a hidden folder the
  search must skip);
- grep of `(a+)+$` over 34 `a`s and `!`: catastrophic for a backtracking
  engine, linear for ripgrep's.

The tree is removed at the end.

    .venv/bin/python bench/tool_commands.py [--files 5000] [--runs 9]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.tools.code_search import grep
from coding_harness.daemon.tools.shell.process import run_process
from coding_harness.daemon.tools.workspace import Workspace


def build_tree(root: Path, files: int) -> None:
    body = "".join(
        f"def function_{i}(value):\n    return value + {i}  # {'marker' if i % 50 == 0 else 'x'}\n"
        for i in range(100)
    )
    for index in range(files):
        folder = root / f"pkg{index // 100:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"module_{index}.py").write_text(body)
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("marker\n" * 1000)
    (root / "a.txt").write_text("a" * 34 + "!\n")


def median_ms(runs: int, action: Callable[[], Coroutine[Any, Any, object]]) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        asyncio.run(action())
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tools-") as folder:
        root = Path(folder)
        build_tree(root, args.files)
        workspace = Workspace(root)
        true_ms = median_ms(args.runs, lambda: run_process(["true"], root, 10))
        miss_ms = median_ms(args.runs, lambda: grep(workspace, "zzzz_not_there", "."))
        hits_ms = median_ms(args.runs, lambda: grep(workspace, "marker", "."))
        redos_ms = median_ms(args.runs, lambda: grep(workspace, "(a+)+$", "a.txt"))
    lines = args.files * 200
    print(f"tree: {args.files:,} files, {lines:,} lines; median of {args.runs} runs")
    print(f"run_process(['true'])          {true_ms:8.1f} ms")
    print(f"grep, no match                 {miss_ms:8.1f} ms")
    print(f"grep, a match every 50 lines   {hits_ms:8.1f} ms  (capped at 500 matches)")
    print(f"grep '(a+)+$' on 34 a's and !  {redos_ms:8.1f} ms")


if __name__ == "__main__":
    main()
