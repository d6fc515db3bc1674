"""How long the look at the workspace before and after a command takes (undo's snapshot).

Generates a tree of N files (default 5,000 of 2 KB in 100 folders) in a temporary
folder and prints the median time of a cold look (every file read), a warm look
(nothing changed: only stat), and a look after one file changed; then the same
against a real tree when given (e.g. the Python standard library, read only).

    .venv/bin/python bench/workspace_snapshot.py [--files 5000] [--tree PATH]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coding_harness.daemon.store.workspace_snapshot import WorkspaceSnapshot


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def measure(root: Path, change: Path | None, runs: int = 5) -> dict[str, float]:
    colds, warms, changed = [], [], []
    for _ in range(runs):
        snapshot = WorkspaceSnapshot(root)
        colds.append(timed(snapshot.refresh))
        warms.append(timed(snapshot.refresh))
        if change is not None:
            change.write_text(change.read_text() + "x")
            changed.append(timed(snapshot.refresh))
    kept = sum(len(s.data or b"") for s in snapshot.current().values())
    figures = {
        "files": float(len(snapshot.current())),
        "kept MB": kept / 1e6,
        "cold ms": statistics.median(colds),
        "warm ms": statistics.median(warms),
    }
    if changed:
        figures["one changed ms"] = statistics.median(changed)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--tree", type=Path)
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="chs-"))
    try:
        for n in range(options.files):
            folder = root / f"pkg{n % 100}"
            folder.mkdir(exist_ok=True)
            (folder / f"m{n}.py").write_text("x = 1\n" * 340)
        print("generated:", measure(root, root / "pkg0" / "m0.py"))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if options.tree:
        print(f"{options.tree}:", measure(options.tree, None))


if __name__ == "__main__":
    main()
