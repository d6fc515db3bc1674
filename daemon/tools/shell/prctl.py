"""The Linux process controls (prctl(2)) that keep tool processes contained.

- `become_subreaper`: orphans among the daemon's descendants (a `setsid`,
  a double fork) are re-parented to the daemon instead of pid 1, so they stay
  its descendants and it can find and end them.
- `make_non_dumpable`: `/proc/<daemon>/environ`, `mem`, `maps` and ptrace are
  closed to other processes of the same user (as ssh-agent does); a process
  with CAP_SYS_PTRACE (root) can still read them.
- `die_with_parent`: a function for a child between fork and exec that makes
  the kernel send it SIGKILL when the daemon's thread that forked it dies.
  It is not inherited by the child's own children.

Each is a no-op returning False (or None) off Linux or when libc lacks prctl.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37

Prctl = Callable[[int, int, int, int, int], int]


@functools.cache
def _prctl() -> Prctl | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only where prctl exists: it costs a few milliseconds to import

    try:
        function = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, *[ctypes.c_ulong] * 4]
    function.restype = ctypes.c_int
    call: Prctl = function
    return call


def _set(option: int, value: int) -> bool:
    prctl = _prctl()
    return prctl is not None and prctl(option, value, 0, 0, 0) == 0


def become_subreaper() -> bool:
    """Adopt this process's orphaned descendants; False where that is not possible."""
    return _set(PR_SET_CHILD_SUBREAPER, 1)


def make_non_dumpable() -> bool:
    """Close this process's environ, memory and ptrace to its own user's other processes."""
    return _set(PR_SET_DUMPABLE, 0)


def is_dumpable() -> bool | None:
    """Whether this process is dumpable; None where that cannot be asked."""
    prctl = _prctl()
    return None if prctl is None else prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1


def die_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that arms SIGKILL on the parent's death; None where unsupported.

    It runs in the child between fork and exec, so it only calls prctl and reads
    the parent's pid (resolved here, beforehand). Should the parent have died
    before the signal was armed, the child ends itself at once.
    """
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arm
