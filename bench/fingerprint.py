"""How long the progress guard's workspace fingerprint takes on a 20,000-file tree.

Builds a tree in a temporary folder (folders of files nested two deep, plus a
`.gitignore`, an ignored build folder and a hidden `.git` folder that the walk
must skip), waits until its folders are older than the fingerprinter's settle
time (as in a workspace where most folders were not touched in the last two
seconds), then prints the median of several runs for:

- a cold walk (`workspace_fingerprint`: every folder listed and filtered),
  which is what the loop pays once, at the start of a turn;
- a warm walk (the same `Fingerprinter` called again, reusing the listings of
  unchanged folders), which is what it pays after each round of tool calls;
- for scale, one bare `os.lstat` per file relative to its open folder, the
  floor any stat-based fingerprint sits on.

The target is 50 ms for the per-round (warm) walk. The tree is removed at the end.

    .venv/bin/python bench/fingerprint.py [--files 20000] [--runs 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.agent.fingerprint import SETTLE_NS, Fingerprinter, workspace_fingerprint

TARGET_MS = 50.0
PER_FOLDER = 100


def build_tree(root: Path, files: int) -> list[Path]:
    """`files` visible files under `root`, plus skipped extras; returns the visible ones."""
    made: list[Path] = []
    for index in range(files):
        folder = root / f"pkg{index // (PER_FOLDER * 10):02}" / f"mod{index // PER_FOLDER:03}"
        if index % PER_FOLDER == 0:
            folder.mkdir(parents=True)
        path = folder / f"file{index % PER_FOLDER:03}.py"
        path.write_bytes(b"x = 1\n")
        made.append(path)
    (root / ".gitignore").write_text("build/\n*.log\n__pycache__/\n")
    for extra in (".git/objects", "build/out", "pkg00/__pycache__"):
        (root / extra).mkdir(parents=True)
        for index in range(200):
            (root / extra / f"skip{index}").write_bytes(b"")
    return made


def timed(function: Callable[[], object], runs: int) -> list[float]:
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return times


def group_by_folder(made: list[Path]) -> list[tuple[str, list[str]]]:
    by_folder: dict[str, list[str]] = {}
    for path in made:
        by_folder.setdefault(str(path.parent), []).append(path.name)
    return list(by_folder.items())


def lstat_floor(groups: list[tuple[str, list[str]]]) -> None:
    """One `lstat` per file relative to its open folder, and nothing else."""
    for folder, names in groups:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            for name in names:
                os.lstat(name, dir_fd=fd)
        finally:
            os.close(fd)


def report(label: str, times: list[float]) -> float:
    median = statistics.median(times)
    print(f"  {label:34} median {median:5.1f} ms  (min {min(times):.1f}, max {max(times):.1f})")
    return median


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fingerprint-") as folder:
        root = Path(folder)
        made = build_tree(root, options.files)
        time.sleep(SETTLE_NS / 1e9 + 0.5)
        probe = Fingerprinter(root)
        result = probe()
        print(f"tree: {options.files:,} files; the fingerprint covers {result.entries:,} entries")
        print(f"{options.runs} runs each:")
        cold = timed(lambda: workspace_fingerprint(root), options.runs)
        report("cold walk (start of a turn)", cold)
        warm = report("warm walk (after each round)", timed(probe, options.runs))
        groups = group_by_folder(made)
        report("bare lstat of every file (floor)", timed(lambda: lstat_floor(groups), options.runs))
    verdict = "meets" if warm < TARGET_MS else "misses"
    print(f"the per-round walk {verdict} the {TARGET_MS:.0f} ms target")


if __name__ == "__main__":
    main()
