"""What a hook costs a tool call: the daemon's side of running one, without a model.

Each case runs the real `HookRunner` (the same code a turn runs around every
matching call: the event as JSON on standard input, `/bin/sh -c`, the command
keeper's marker and its sweep of the process table at the end) `--runs` times
in a temporary workspace and prints the median, p90 and max wall time of one
PreToolUse event:

- `true`: a hook that does nothing (the floor: a shell started and reaped);
- `cat > /dev/null` with a 1 MB `tool_input` (a whole-file write_file call);
- two hooks on one event (they run side by side);
- `exit 2` with a reason (a block).

Nothing timed is asserted.

    .venv/bin/python bench/hooks.py [--runs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.hook_settings import HookSettings, HookSpec
from coding_harness.daemon.hooks.runner import HookRunner
from coding_harness.daemon.tools.shell.process import tool_environment


class _Quiet:
    def emit(self, kind: str, data: dict[str, Any]) -> None:
        pass


def _runner(root: Path, *commands: str) -> HookRunner:
    specs = tuple(HookSpec(event="PreToolUse", command=c) for c in commands)
    return HookRunner(
        settings=HookSettings(hooks=specs),
        session="bench",
        cwd=root,
        env=tool_environment(),
        events=_Quiet(),
    )


async def _time(hooks: HookRunner, fields: dict[str, Any], runs: int) -> list[float]:
    took: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        await hooks.run("PreToolUse", fields, "write_file")
        took.append((time.perf_counter() - start) * 1000)
    return took


def _line(name: str, took: list[float]) -> str:
    ordered = sorted(took)
    p90 = ordered[int(len(ordered) * 0.9) - 1]
    median = statistics.median(ordered)
    return f"{name:<34} median {median:6.1f} ms  p90 {p90:6.1f} ms  max {ordered[-1]:6.1f} ms"


async def _main(runs: int) -> None:
    small = {"tool_name": "write_file", "tool_input": {"path": "a.py", "content": "x = 1\n"}}
    big = {"tool_name": "write_file", "tool_input": {"path": "a.py", "content": "x" * 1_000_000}}
    with tempfile.TemporaryDirectory(prefix="bench-hooks-") as folder:
        root = Path(folder)
        cases = [
            ("true", _runner(root, "true"), small),
            ("cat > /dev/null, 1 MB input", _runner(root, "cat > /dev/null"), big),
            ("two hooks side by side", _runner(root, "true", "true"), small),
            ("exit 2 with a reason", _runner(root, "echo no >&2; exit 2"), small),
        ]
        for name, hooks, fields in cases:
            await _time(hooks, fields, 2)  # warm-up
            print(_line(name, await _time(hooks, fields, runs)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    asyncio.run(_main(parser.parse_args().runs))


if __name__ == "__main__":
    main()
