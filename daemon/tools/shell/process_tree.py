"""The process table as containment needs it: parent, group, session, start, marker.

On Linux it reads `/proc/<pid>/stat` (one small file per process, readable for
every process, zombies included); elsewhere it asks psutil. A process's
`start` is its start time in clock ticks since boot on Linux (psutil's
creation time elsewhere): with the pid it names one process for good, so a pid
the system has reused since is never mistaken for the one recorded.

Every tool command's processes carry `CODING_HARNESS_COMMAND=<token>` in their
environment (`MARKER`), which names the command a stray process came from as
long as it keeps its environment and its environ stays readable.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

MARKER = "CODING_HARNESS_COMMAND"
# What a child the daemon starts outside `run_process` (an MCP server) carries, with
# a value the keeper was told to expect (`CommandKeeper.expect`).
EXPECTED_MARKER = "CODING_HARNESS_EXPECTED"
_LINUX = sys.platform.startswith("linux")
_PROC = Path("/proc")
# Deeper than any real process tree; a walk that gets here gives up.
_MAX_DEPTH = 4096
_WALK_ATTEMPTS = 3
_TICKS = os.sysconf("SC_CLK_TCK") if _LINUX else 100


@dataclass(kw_only=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    start: float
    zombie: bool

    @property
    def key(self) -> tuple[int, float]:
        return (self.pid, self.start)


def read_proc(pid: int) -> ProcInfo | None:
    """One process, or None when there is no such process (any more)."""
    return _read_stat(pid) if _LINUX else _read_psutil(pid)


def _read_stat(pid: int) -> ProcInfo | None:
    # os.open and os.read: a scan reads one of these per process, twice as fast as Path's.
    try:
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
    except OSError:
        return None
    try:
        raw = os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)
    # The command name may hold spaces and parentheses: fields follow the last ')'.
    fields = raw[raw.rfind(b")") + 2 :].split()
    return ProcInfo(
        pid=pid,
        ppid=int(fields[1]),
        pgid=int(fields[2]),
        sid=int(fields[3]),
        start=float(fields[19]),
        zombie=fields[0] in (b"Z", b"X"),
    )


def _read_psutil(pid: int) -> ProcInfo | None:
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            ppid, start, status = process.ppid(), process.create_time(), process.status()
    except psutil.Error:
        return None
    return ProcInfo(
        pid=pid,
        ppid=ppid,
        pgid=_or_unknown(os.getpgid, pid),
        sid=_or_unknown(os.getsid, pid),
        start=start,
        zombie=status == psutil.STATUS_ZOMBIE,
    )


def _or_unknown(query: Callable[[int], int], pid: int) -> int:
    try:
        return query(pid)
    except OSError:
        return -1


def snapshot() -> dict[int, ProcInfo]:
    """Every process this one can see, by pid."""
    if _LINUX:
        with os.scandir(_PROC) as entries:
            pids = [int(entry.name) for entry in entries if entry.name.isdigit()]
    else:
        pids = psutil.pids()
    table = {}
    for pid in pids:
        info = read_proc(pid)
        if info is not None:
            table[pid] = info
    return table


def subtree(table: dict[int, ProcInfo], roots: Iterable[int]) -> set[int]:
    """`roots` (those in `table`) and all their descendants in `table`."""
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found: set[int] = set()
    pending = [pid for pid in roots if pid in table]
    while pending:
        pid = pending.pop()
        if pid not in found:
            found.add(pid)
            pending.extend(children.get(pid, ()))
    return found


def descends_from(pid: int, ancestor: int) -> bool:
    """Whether process `pid` descends from `ancestor`, walking the parent chain.

    Fails closed: True when it cannot be told (the process is gone, or the
    chain kept changing under the walk), so an unknown peer is never trusted.
    """
    for _ in range(_WALK_ATTEMPTS):
        verdict = _walk(pid, ancestor)
        if verdict is not None:
            return verdict
    return True


def _walk(pid: int, ancestor: int) -> bool | None:
    """True or False, or None when a parent vanished or was replaced meanwhile."""
    current = read_proc(pid)
    if current is None:
        return None
    for _ in range(_MAX_DEPTH):
        if current.ppid == ancestor:
            return True
        if current.ppid <= 1:
            return False
        parent = read_proc(current.ppid)
        if parent is None or parent.start > current.start:
            return None  # the parent died (the child is being re-parented), or its pid was reused
        current = parent
    return None


def command_token(pid: int, name: str = MARKER) -> str | None:
    """The process's `MARKER` (or `name`) value; None when it has none or its environ
    is closed."""
    if not _LINUX:
        try:
            return psutil.Process(pid).environ().get(name)
        except psutil.Error:
            return None
    try:
        raw = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return None
    prefix = name.encode() + b"="
    for item in raw.split(b"\0"):
        if item.startswith(prefix):
            return item[len(prefix) :].decode(errors="replace")
    return None


def kill_exactly(pid: int, start: float) -> bool:
    """SIGKILL the process `pid` only if it is still the one that started at `start`.

    Where pidfds exist the check and the signal address the same process, so a
    pid reused in between is never hit. True when a signal was sent.
    """
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        info = read_proc(pid)
        if info is None or info.start != start:
            return False
        return _signal(pid)
    try:
        info = read_proc(pid)
        if info is None or info.start != start:
            return False
        with contextlib.suppress(ProcessLookupError, PermissionError):
            signal.pidfd_send_signal(handle, signal.SIGKILL)
            return True
        return False
    finally:
        os.close(handle)


def _signal(pid: int) -> bool:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_all(table: dict[int, ProcInfo], pids: Iterable[int]) -> int:
    """SIGKILL each of `pids` as recorded in `table`; how many were signalled."""
    return sum(kill_exactly(pid, table[pid].start) for pid in pids if pid in table)


def clock() -> float:
    """Now, in the unit of `ProcInfo.start`: a process started later has a start >= this."""
    if _LINUX:
        try:
            uptime = float((_PROC / "uptime").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        # /proc/uptime and the start times are rounded differently: allow a tick.
        return max(0.0, uptime * _TICKS - 1)
    return time.time() - 0.01


def boot_id() -> str:
    """What names this boot: a process recorded under another one is long gone."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return str(int(psutil.boot_time()))
