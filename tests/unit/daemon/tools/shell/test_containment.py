"""Containment of tool processes: ancestry, the subreaper, reaping, the leftover sweep.

Tests that need this process to be a subreaper (or non-dumpable) run a small
script in a child process, so pytest itself never adopts anyone's orphans.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from coding_harness.daemon.tools.shell import process_tree
from coding_harness.daemon.tools.shell.containment import CommandKeeper
from coding_harness.daemon.tools.shell.leftovers import Entry, LeftoverRecord
from coding_harness.daemon.tools.shell.process_tree import (
    EXPECTED_MARKER,
    MARKER,
    descends_from,
)
from tests.support.tool_context import process_gone
from tests.support.waiting import wait_for

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts; each is killed (with its group) and reaped afterwards."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for process in started:
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                process.kill()
        process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()


def start(
    spawned: list[subprocess.Popen[bytes]], script: str, token: str | None = None
) -> tuple[int, int]:
    """`sh -c script` in a new session; returns its pid and the pid it prints first."""
    env = {"PATH": os.environ["PATH"], **({MARKER: token} if token else {})}
    process = subprocess.Popen(
        ["sh", "-c", script], stdout=subprocess.PIPE, env=env, start_new_session=True
    )
    spawned.append(process)
    assert process.stdout is not None
    return process.pid, int(process.stdout.readline())


def start_of(pid: int) -> float:
    info = process_tree.read_proc(pid)
    assert info is not None
    return info.start


# -- ancestry ------------------------------------------------------------------


def test_descent_follows_the_parent_chain(spawned: list[subprocess.Popen[bytes]]) -> None:
    shell, grandchild = start(spawned, "sleep 30 & echo $!; wait")
    assert descends_from(grandchild, os.getpid())
    assert descends_from(grandchild, shell)
    assert not descends_from(os.getpid(), grandchild)
    assert not descends_from(os.getppid(), os.getpid())


def test_a_peer_that_is_gone_counts_as_a_descendant() -> None:
    """Fail closed: a pid that names nobody any more is not trusted."""
    done = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True)
    assert descends_from(int(done.stdout), os.getpid())


def test_a_process_started_after_the_clock_starts_later(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    """What tells a command's processes from older ones with the same group id."""
    before = process_tree.clock()
    _, sleeper = start(spawned, "echo $$; exec sleep 30")
    assert start_of(sleeper) >= before


# -- the leftover sweep ----------------------------------------------------------


def test_the_sweep_ends_recorded_processes_their_groups_and_marked_ones(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    leader, in_group = start(spawned, "sleep 1000 & echo $!; wait", token="t-recorded")
    _, marked = start(spawned, "echo $$; exec sleep 1000", token="t-recorded")
    _, stranger = start(spawned, "echo $$; exec sleep 1000", token="t-other")
    record = LeftoverRecord(tmp_path / "tool-processes.json")
    record.write([Entry(pid=leader, start=start_of(leader), token="t-recorded")])
    half_written = tmp_path / ".tool-processes.json.4242.tmp"  # a daemon killed mid-write
    half_written.write_text("{")

    assert LeftoverRecord(record.path).sweep() == 3
    assert all(process_gone(pid) for pid in (leader, in_group, marked))
    assert not process_gone(stranger, within=0)
    assert not record.path.exists()
    assert not half_written.exists()


def test_the_sweep_leaves_reused_pids_and_other_boots_alone(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    _, sleeper = start(spawned, "echo $$; exec sleep 1000", token="t-live")
    record = LeftoverRecord(tmp_path / "tool-processes.json")
    # Same pid, another start: the pid was reused since it was recorded.
    record.write([Entry(pid=sleeper, start=start_of(sleeper) - 1, token=None)])
    assert LeftoverRecord(record.path).sweep() == 0
    # The right process, recorded during another boot.
    record.write([Entry(pid=sleeper, start=start_of(sleeper), token="t-live")])
    data = json.loads(record.path.read_text())
    record.path.write_text(json.dumps({**data, "boot": "another-boot"}))
    assert LeftoverRecord(record.path).sweep() == 0
    assert not process_gone(sleeper, within=0)


def test_the_keeper_records_running_commands_until_they_end(
    tmp_path: Path, spawned: list[subprocess.Popen[bytes]]
) -> None:
    keeper = CommandKeeper()
    record = LeftoverRecord(tmp_path / "tool-processes.json")
    keeper.keep_record(record)
    command = keeper.begin()
    leader, in_group = start(spawned, "sleep 1000 & echo $!; wait", token=command.token)
    keeper.started(command, leader)
    entries = json.loads(record.path.read_text())["entries"]
    assert entries == [{"pid": leader, "start": start_of(leader), "token": command.token}]

    keeper.end(command)
    assert process_gone(leader) and process_gone(in_group)
    assert not record.path.exists()


# -- the keeper's rules, on this process's own children ------------------------
# A keeper told it is a subreaper treats this process's children in other
# sessions as adoptees unless they are its own; nothing here needs prctl.


def adopting_keeper() -> CommandKeeper:
    keeper = CommandKeeper()
    keeper.subreaper = True
    return keeper


def test_adoptees_live_only_while_their_command_runs(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    keeper = adopting_keeper()
    running = keeper.begin()
    _, ours = start(spawned, "echo $$; exec sleep 1000", token=running.token)
    _, stray = start(spawned, "echo $$; exec sleep 1000", token="ended-long-ago")
    keeper.scan()
    assert process_gone(stray)
    assert not process_gone(ours, within=0)
    keeper.end(running)
    assert process_gone(ours)


def test_a_child_starting_with_an_expected_marker_is_spared_until_owned(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    """An MCP server is owned only once its pid is known; meanwhile it carries a fresh
    marker the keeper was told to expect. A stray copying the marker later is killed."""
    keeper = adopting_keeper()
    keeper.expect("server-1")
    env = {"PATH": os.environ["PATH"], EXPECTED_MARKER: "server-1"}
    process = subprocess.Popen(
        ["sh", "-c", "echo $$; exec sleep 1000"],
        stdout=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    spawned.append(process)
    keeper.scan()
    assert not process_gone(process.pid, within=0)
    keeper.own(process.pid)
    keeper.unexpect("server-1")
    _, copycat = start(spawned, f"export {EXPECTED_MARKER}=server-1; echo $$; exec sleep 1000")
    keeper.scan()
    assert process_gone(copycat)
    assert not process_gone(process.pid, within=0)


def test_an_owned_child_survives_a_scan_of_a_table_taken_before_it_started(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    """The keeper's scan reads /proc in a thread: a notify command owned while that ran
    is missing from the table, and must stay owned for the next scan (issue 25, 18)."""
    keeper = adopting_keeper()
    stale = process_tree.snapshot()
    with keeper.starting_own() as child:
        name, marker = child.environment_entry()
        process = subprocess.Popen(
            ["sh", "-c", "echo $$; exec sleep 1000"],
            stdout=subprocess.PIPE,
            env={"PATH": os.environ["PATH"], name: marker},
            start_new_session=True,
        )
        spawned.append(process)
        keeper.own(process.pid)
    keeper.scan(stale)
    keeper.scan()
    assert not process_gone(process.pid, within=0.5)  # time for a SIGKILL to land


def test_a_child_with_the_daemons_environment_is_spared_while_one_of_ours_starts(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    """Between fork and exec a child has no marker yet; while one of the daemon's own
    children starts, such a child is not killed. Once none starts, it is."""
    keeper = adopting_keeper()
    _, unmarked = start(spawned, "echo $$; exec sleep 1000")
    with keeper.starting_own():
        keeper.scan()
        assert not process_gone(unmarked, within=0.5)  # time for a SIGKILL to land
    keeper.scan()
    assert process_gone(unmarked)


def reaped(keeper: CommandKeeper, pid: int) -> bool:
    """One scan of the keeper, then whether `pid` is gone from the process table."""
    keeper.scan()
    return process_tree.read_proc(pid) is None


def test_zombies_are_reaped_late_and_never_a_child_someone_waits_for(
    spawned: list[subprocess.Popen[bytes]],
) -> None:
    keeper = adopting_keeper()
    waited = subprocess.Popen(["sh", "-c", "exit 7"], start_new_session=True)
    stray = subprocess.Popen(["sh", "-c", "exit 9"], start_new_session=True)
    spawned += [waited, stray]
    keeper.own(waited.pid)
    assert process_gone(waited.pid) and process_gone(stray.pid)  # both are zombies now
    keeper.scan()
    assert process_tree.read_proc(stray.pid) is not None  # too fresh to reap
    wait_for(lambda: reaped(keeper, stray.pid), "the stray zombie to be reaped once old enough")
    assert waited.wait(timeout=5) == 7  # the owner still gets its exit status


# -- the subreaper, in a child process -------------------------------------------

# Many commands at once, half of them leaving an orphan that dies on its own
# while the command still runs: every exit status reaches its command, and no
# zombie is left once the keeper has had a few scans.
REAPING = """
import asyncio, json, logging, os, sys, time
from pathlib import Path
from coding_harness.daemon.tools.shell import process_tree
from coding_harness.daemon.tools.shell.containment import command_keeper
from coding_harness.daemon.tools.shell.process import run_process

unknown = []
class Watch(logging.Handler):
    def emit(self, record):
        unknown.append(record.getMessage())
logging.getLogger("asyncio").addHandler(Watch())

async def main():
    keeper = command_keeper()
    keeper.enable()
    keeper.scan_seconds = 0.05
    watching = asyncio.create_task(keeper.watch())
    cwd = Path(sys.argv[1])
    leaky = ["sh", "-c", "(sleep 0.05 &); sleep 0.3; exit 5"]
    quick = ["sh", "-c", "exit 3"]
    results = await asyncio.gather(
        *(run_process(leaky if i % 2 else quick, cwd, 20) for i in range(30))
    )
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        kids = [p for p in process_tree.snapshot().values() if p.ppid == os.getpid()]
        if not kids:
            break
        await asyncio.sleep(0.05)
    watching.cancel()
    print(json.dumps({
        "subreaper": keeper.subreaper,
        "codes": [r.exit_code for r in results],
        "children": [(p.pid, p.zombie) for p in kids],
        "asyncio": unknown,
    }))

asyncio.run(main())
"""


@linux_only
def test_the_subreaper_reaps_orphans_without_taking_exit_statuses(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", REAPING, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["subreaper"]
    assert report["codes"] == [5 if i % 2 else 3 for i in range(30)]
    assert report["children"] == []
    assert report["asyncio"] == []


NON_DUMPABLE = """
from coding_harness.daemon.tools.shell import prctl
before = prctl.is_dumpable()
print(before, prctl.make_non_dumpable(), prctl.is_dumpable())
"""


@linux_only
def test_a_process_can_make_itself_non_dumpable() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NON_DUMPABLE], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True", "False"]
