"""Every process a tool command starts stays known, and ends with the command.

`run_process` (process.py) asks the keeper for a `Command` before it spawns:
the command's processes carry its token in their environment (`MARKER`),
its direct child gets its own session and process group and, in the daemon,
dies with it (parent-death signal). The daemon makes itself a child
subreaper (`enable`), so a process that leaves the group (`setsid`, a double
fork) is re-parented to the daemon rather than to pid 1: it stays the
daemon's descendant, which the socket refuses, and the keeper sees it.

What the keeper does with the daemon's children that it did not start itself
(its "adoptees"; never one in the daemon's own session, never one asyncio
waits for):

- when a command ends, its group and session are killed, and so is every
  adoptee (with all its descendants) that does not carry the token of a
  command still running; one whose environment cannot be read or was cleared
  is spared only while some command runs or one of the daemon's own children
  starts (between its fork and its exec it has the daemon's environment);
- every `scan_seconds` while anything is running or left, the same, and
  dead adoptees are reaped with `waitpid` of their own pid, never -1: only
  a zombie already seen half a second earlier. asyncio's child watcher
  (ThreadedChildWatcher in Python 3.11, a pidfd one from 3.12) also waits
  by pid and collects its children at once, so no exit status it is owed
  is ever taken;
- the running commands and adoptees are kept in `leftovers.LeftoverRecord`,
  so a daemon killed with SIGKILL has them swept at its next start.

Where the daemon cannot be a subreaper (not Linux), an ending command's
processes are found by their token among all processes instead.
The daemon's own children (notify commands, MCP servers) are known
positively: they are started with a fresh `EXPECTED_MARKER` the keeper was
told to `expect`, then `own`ed by pid, and never swept; `starting_own` does
the three steps. Code that starts a process in its own session other than
through `run_process` must do so, or it counts as an adoptee.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from coding_harness.daemon.tools.shell import prctl, process_tree
from coding_harness.daemon.tools.shell.leftovers import Entry, LeftoverRecord
from coding_harness.daemon.tools.shell.process_tree import EXPECTED_MARKER, MARKER, ProcInfo

log = logging.getLogger(__name__)

SCAN_SECONDS = 1.0
# Scans after a command ends, for processes re-parented a moment after its end.
LINGER_SCANS = 3
# A zombie child is reaped only once it was seen this long ago: asyncio's child
# watcher collects its own children's exit statuses at once, never this late.
REAP_AFTER_SECONDS = 0.5
Key = tuple[int, float]


@dataclass(kw_only=True, slots=True)
class Command:
    token: str
    since: float  # `process_tree.clock()` before the spawn: its processes start later
    pid: int | None = None
    start: float | None = None  # of the direct child

    def environment_entry(self) -> tuple[str, str]:
        return MARKER, self.token


@dataclass(kw_only=True, slots=True, frozen=True)
class OwnChild:
    """One of the daemon's own children while it starts (`CommandKeeper.starting_own`)."""

    marker: str

    def environment_entry(self) -> tuple[str, str]:
        return EXPECTED_MARKER, self.marker


class CommandKeeper:
    scan_seconds = SCAN_SECONDS

    def __init__(self) -> None:
        self.subreaper = False
        self._record: LeftoverRecord | None = None
        self._commands: dict[str, Command] = {}
        self._own: set[Key] = set()  # direct children: asyncio reaps them
        self._adopted: dict[Key, str | None] = {}  # seen alive at the last scan, with token
        self._seen: dict[Key, float] = {}  # adoptees at the last scan: when first seen
        self._linger = 0
        self._expected: set[str] = set()  # markers of children starting (see `expect`)

    # -- set-up ------------------------------------------------------------
    def enable(self) -> None:
        """Daemon start-up: adopt orphaned descendants, arm the parent-death signal."""
        self.subreaper = prctl.become_subreaper()
        if not self.subreaper:
            log.info("not a child subreaper here: stray tool processes are found by marker")

    def keep_record(self, record: LeftoverRecord) -> int:
        """Sweep what a killed daemon left (`record`), then record from now on."""
        killed = record.sweep()
        self._record = record
        return killed

    def child_setup(self) -> Callable[[], None] | None:
        """The `preexec_fn` for a command's direct child (enabled daemons only)."""
        return prctl.die_with_parent() if self.subreaper else None

    # -- commands ----------------------------------------------------------
    def begin(self) -> Command:
        command = Command(token=secrets.token_hex(8), since=process_tree.clock())
        self._commands[command.token] = command
        return command

    def started(self, command: Command, pid: int) -> None:
        info = self.own(pid)
        command.pid = pid
        command.start = None if info is None else info.start
        self._save()

    def expect(self, marker: str) -> None:
        """A child is about to start outside `run_process` (an MCP server, spawned by
        the SDK) with `EXPECTED_MARKER=<marker>` in its environment: it is spared until
        `own` takes it by pid and `unexpect` ends the wait. `marker` is a fresh secret
        each time, expected only for that short while: a tool command that copied it
        into a stray of its own afterwards gains nothing."""
        self._expected.add(marker)

    def unexpect(self, marker: str) -> None:
        self._expected.discard(marker)

    def own(self, pid: int) -> ProcInfo | None:
        """A direct child someone else waits for: never reaped or killed by the keeper."""
        info = process_tree.read_proc(pid)
        if info is not None:
            self._own.add(info.key)
            self._adopted.pop(info.key, None)
        return info

    @contextlib.contextmanager
    def starting_own(self) -> Iterator[OwnChild]:
        """Around the start of one of the daemon's own children: give it
        `child.environment_entry()`, then `own` it by pid before the block ends."""
        child = OwnChild(marker=secrets.token_hex(12))
        self.expect(child.marker)
        try:
            yield child
        finally:
            self.unexpect(child.marker)

    def end(self, command: Command) -> None:
        """The command is over: end its group, its session and its strays."""
        self._commands.pop(command.token, None)
        table = process_tree.snapshot()
        doomed = set(self._group_members(table, command))
        if not self.subreaper:
            doomed |= self._marked(table, command)
        self._kill(table, doomed)
        self._linger = LINGER_SCANS
        self.scan(table)

    def close(self) -> None:
        """The daemon is stopping: nothing a command started may outlive it."""
        table = process_tree.snapshot()
        doomed: set[int] = set()
        for command in list(self._commands.values()):
            doomed |= set(self._group_members(table, command))
        self._commands.clear()
        self._kill(table, doomed)
        self.scan(table)
        if self._record is not None:
            self._record.write(())

    # -- scanning ----------------------------------------------------------
    async def watch(self) -> None:
        """Scan while anything runs or is left; idle otherwise."""
        while True:
            await asyncio.sleep(self.scan_seconds)
            if self._commands or self._own or self._seen or self._linger:
                self._linger = max(0, self._linger - 1)
                try:
                    # Reading all of /proc is blocking work: off the event loop.
                    table = await asyncio.to_thread(process_tree.snapshot)
                    self.scan(table)
                except Exception:  # a bug here must not end the reaping for good
                    log.exception("scanning for stray tool processes failed")

    def scan(self, table: dict[int, ProcInfo] | None = None) -> None:
        """Reap dead adoptees; kill those no running command accounts for; record."""
        if not self.subreaper:
            self._save()
            return
        table = process_tree.snapshot() if table is None else table
        me, my_session, now = os.getpid(), os.getsid(0), time.monotonic()
        # `table` may predate an `own` of a moment ago: keep what is still our child.
        children = {p.key for p in table.values() if p.ppid == me}
        self._own = {key for key in self._own if key in children or _is_child(key, me)}
        adoptees = [
            p
            for p in table.values()
            if p.ppid == me and p.sid != my_session and p.key not in self._own
        ]
        adopted: dict[Key, str | None] = {}
        doomed: set[int] = set()
        for child in adoptees:
            if child.zombie:
                if now - self._seen.get(child.key, now) >= REAP_AFTER_SECONDS:
                    _reap(child.pid)
                continue
            if self._is_expected(child.pid):
                continue
            token = self._adopted.get(child.key) or process_tree.command_token(child.pid)
            if self._spared(token):
                adopted[child.key] = token
            else:
                doomed.add(child.pid)
        self._seen = {child.key: self._seen.get(child.key, now) for child in adoptees}
        self._adopted = adopted
        self._kill(table, doomed)
        self._save()

    def _is_expected(self, pid: int) -> bool:
        if not self._expected:
            return False
        return process_tree.command_token(pid, EXPECTED_MARKER) in self._expected

    def _spared(self, token: str | None) -> bool:
        if token is None:  # cleared, closed, or a child of ours between fork and exec
            return bool(self._commands or self._expected)
        return token in self._commands

    def _group_members(self, table: dict[int, ProcInfo], command: Command) -> list[int]:
        """The live members of the command's group and session (never a reused pid's)."""
        if command.pid is None:
            return []
        holder = table.get(command.pid)
        if holder is not None and holder.start != command.start:
            return []
        return [
            p.pid
            for p in table.values()
            if command.pid in (p.pgid, p.sid) and p.start >= command.since and not p.zombie
        ]

    def _marked(self, table: dict[int, ProcInfo], command: Command) -> set[int]:
        return {
            p.pid
            for p in table.values()
            if p.start >= command.since
            and not p.zombie
            and process_tree.command_token(p.pid) == command.token
        }

    def _kill(self, table: dict[int, ProcInfo], roots: set[int]) -> None:
        if roots:
            victims = process_tree.subtree(table, roots) - {os.getpid()}
            if killed := process_tree.kill_all(table, victims):
                log.info("ended %d process(es) left behind by tool commands", killed)

    def _save(self) -> None:
        if self._record is None:
            return
        entries = [
            Entry(pid=c.pid, start=c.start, token=c.token)
            for c in self._commands.values()
            if c.pid is not None and c.start is not None
        ]
        entries += [
            Entry(pid=pid, start=start, token=token)
            for (pid, start), token in self._adopted.items()
        ]
        self._record.write(entries)


def _is_child(key: Key, parent: int) -> bool:
    info = process_tree.read_proc(key[0])
    return info is not None and info.key == key and info.ppid == parent


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


_keeper: CommandKeeper | None = None


def command_keeper() -> CommandKeeper:
    """The keeper of this process: the process tree, like the subreaper flag, is per process."""
    global _keeper
    if _keeper is None:
        _keeper = CommandKeeper()
    return _keeper
