"""Whose process listens on a loopback TCP port: is a local model server ours?

First-run discovery sends the user's prompts, and the files the model reads, to
whatever answers on a usual port; on a shared machine that may be another user's
program. `listener_owner(port)` finds the listening sockets on the port (bound to
127.0.0.1, ::1 or any address) and the processes holding them:

- Linux: `/proc/net/tcp` and `tcp6` give each listening socket's inode and the
  uid that created it; `/proc/<pid>/fd` links `socket:[inode]` name the processes
  that hold it, and `/proc/<pid>/status` the process's real uid.
- Elsewhere: `lsof -nP -iTCP:PORT -sTCP:LISTEN -Fpu` when it is installed.

`ListenerOwner.ours` holds only when every listener found is in a process of this
uid. A listener whose process cannot be seen (another user's fds are closed to
us) is not ours either: then `uid` is the socket's creator from the table, when
known, and `why` says which.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

_PROC = Path("/proc")
_LISTEN = "0A"
# Addresses a probe of 127.0.0.1 can reach, as /proc/net/tcp{,6} spell them.
_REACHABLE = {
    "0100007F",  # 127.0.0.1
    "00000000",  # 0.0.0.0
    "00000000000000000000000000000000",  # ::
    "00000000000000000000000001000000",  # ::1
    "0000000000000000FFFF00000100007F",  # ::ffff:127.0.0.1
}
LSOF_SECONDS = 2.0


@dataclass(frozen=True, kw_only=True, slots=True)
class ListenerOwner:
    ours: bool
    uid: int | None = None  # the other user's uid, when known
    why: str = ""  # for a person, when not ours


def listener_owner(port: int, me: int | None = None) -> ListenerOwner:
    """Who listens on loopback `port`; `me`: the uid counted as ours (default: ours)."""
    mine = os.getuid() if me is None else me
    if sys.platform.startswith("linux") and (_PROC / "net" / "tcp").exists():
        return _from_proc(port, mine)
    return _from_lsof(port, mine)


def _from_proc(port: int, me: int) -> ListenerOwner:
    sockets = _listening(port)  # inode -> the uid that created the socket
    if not sockets:
        return ListenerOwner(ours=False, why="no listening socket was found for it")
    holders = _holders(set(sockets))  # inode -> uids of the processes holding it
    for inode, creator in sockets.items():
        uids = holders.get(inode, set())
        foreign = sorted(uids - {me})
        if foreign:
            return _foreign(foreign[0])
        if not uids:
            uid = None if creator == me else creator
            return ListenerOwner(
                ours=False,
                uid=uid,
                why=(
                    "its listening socket is in no process of yours"
                    + (f" (uid {uid} created it)" if uid is not None else "")
                ),
            )
    return ListenerOwner(ours=True)


def _listening(port: int) -> dict[int, int]:
    found: dict[int, int] = {}
    for name in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != _LISTEN:
                continue
            address, _, hex_port = fields[1].partition(":")
            if int(hex_port, 16) == port and address in _REACHABLE and fields[9] != "0":
                found[int(fields[9])] = int(fields[7])
    return found


def _holders(inodes: set[int]) -> dict[int, set[int]]:
    wanted = {f"socket:[{inode}]": inode for inode in inodes}
    found: dict[int, set[int]] = {}
    with os.scandir(_PROC) as entries:
        pids = [entry.name for entry in entries if entry.name.isdigit()]
    for pid in pids:
        folder = _PROC / pid / "fd"
        with contextlib.suppress(OSError):  # gone, or another user's: closed to us
            for fd in os.scandir(folder):
                with contextlib.suppress(OSError):
                    inode = wanted.get(str(Path(fd.path).readlink()))
                    if inode is not None:
                        found.setdefault(inode, set()).add(_uid_of(pid))
    return found


def _uid_of(pid: str) -> int:
    """The process's real uid (its /proc folder is root's when it is not dumpable)."""
    for line in (_PROC / pid / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return int(line.split()[1])
    raise OSError(f"no Uid line for process {pid}")


def _from_lsof(port: int, me: int) -> ListenerOwner:
    lsof = shutil.which("lsof")
    if lsof is None:
        return ListenerOwner(ours=False, why="lsof is not installed, so its owner is unknown")
    argv = [lsof, "-nP", f"-iTCP:{port}", "-sTCP:LISTEN", "-Fpu"]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=LSOF_SECONDS, check=False, env={}
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return ListenerOwner(ours=False, why=f"lsof could not say who owns it ({exc})")
    uids = {
        int(line[1:]) for line in done.stdout.splitlines() if line[1:].isdigit() and line[0] == "u"
    }
    if not uids:
        return ListenerOwner(ours=False, why="its listening socket is in no process of yours")
    foreign = sorted(uids - {me})
    return _foreign(foreign[0]) if foreign else ListenerOwner(ours=True)


def _foreign(uid: int) -> ListenerOwner:
    return ListenerOwner(ours=False, uid=uid, why=f"it is run by {user_name(uid)}, not by you")


def user_name(uid: int) -> str:
    """`name (uid N)`, or `uid N` when the name is unknown."""
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"
