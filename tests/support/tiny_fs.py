"""A real daemon whose state folder or workspace sits on a tiny, fillable file system.

`start_daemon_on_tiny_fs` runs `harnessd` inside its own user and mount
namespace (`unshare --user --map-root-user --mount`, which needs no privilege
where user namespaces are allowed, and works as root), with a small tmpfs
mounted over one folder first. Only the daemon sees that tmpfs; the test
reaches it through `/proc/PID/root`, so it can fill the file system (writes
then fail with ENOSPC, SQLite's SQLITE_FULL, as on a full disk) and free it
again. The mount disappears with the daemon. Where namespaces are not
allowed, `skip_without_namespaces` skips the test and says why.
"""

from __future__ import annotations

import contextlib
import errno
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import start_serving

_MOUNT_AND_RUN = 'mount -t tmpfs -o "size=$0,mode=0700" tmpfs "$1" && shift && exec "$@"'
_probe: str | None = None


def _namespaces_problem() -> str:
    """Empty when a tmpfs can be mounted in a new namespace here, else why not."""
    global _probe
    if _probe is None:
        if shutil.which("unshare") is None:
            _probe = "the unshare command (util-linux) is not installed"
        else:
            probe = subprocess.run(
                ["unshare", "--user", "--map-root-user", "--mount",
                 "mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", "/tmp"],
                capture_output=True,
                text=True,
                timeout=10,
            )  # fmt: skip
            _probe = "" if probe.returncode == 0 else f"no mount namespace: {probe.stderr.strip()}"
    return _probe


def skip_without_namespaces() -> None:
    problem = _namespaces_problem()
    if problem:
        pytest.skip(f"needs a private tmpfs ({problem})")


def start_daemon_on_tiny_fs(
    socket_path: Path, env: dict[str, str], mount_at: Path, size: str, log_file: Path
) -> subprocess.Popen[bytes]:
    """A daemon that sees a `size` tmpfs (e.g. "256k") at `mount_at`; logs to `log_file`."""
    skip_without_namespaces()
    mount_at.mkdir(parents=True, exist_ok=True)
    err_path = log_file.with_suffix(".stderr")
    command = [
        "unshare", "--user", "--map-root-user", "--mount", "sh", "-c", _MOUNT_AND_RUN,
        size, str(mount_at),
        sys.executable, "-m", "coding_harness.daemon", "--socket", str(socket_path),
        "--log-file", str(log_file),
    ]  # fmt: skip
    return start_serving(command, env, socket_path, err_path)


def seen_by(process: subprocess.Popen[bytes], path: Path) -> Path:
    """`path` as the daemon sees it (inside its mount namespace)."""
    return Path(f"/proc/{process.pid}/root") / path.relative_to("/")


def fill(folder: Path, name: str = "filler") -> Path:
    """Write zeros into `folder` until its file system is full; returns the filler file."""
    filler = folder / name
    chunk = b"\0" * 4096
    with filler.open("wb", buffering=0) as out:
        try:
            while True:
                out.write(chunk)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
    # Whatever the last partial page left: fill it byte by byte.
    with contextlib.suppress(OSError), filler.open("ab", buffering=0) as out:
        while out.write(b"\0"):
            pass
    return filler
