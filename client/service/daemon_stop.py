"""`harness daemon stop`, and telling whether only socket activation waits.

`stop` asks for `daemon.shutdown` and then waits for the daemon's process to
end, not for its socket to vanish: under socket activation the socket stays
(systemd owns it) and connecting to it would only start a new daemon. The
daemon lets running turns finish for its drain time (status `drain_seconds`),
so `stop` waits that long plus a margin.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from coding_harness.protocol import discovery, errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

STOP_MARGIN = 15.0
DEFAULT_DRAIN = 10.0
POLL = 0.05


def stop() -> int:
    path = paths.socket_path()
    if activation_waits(path):
        print("harnessd is not running (harnessd.socket starts it on first use)")
        return exit_codes.OK
    try:
        conn = connect(path)
    except DaemonUnreachable:
        print("harnessd is not running")
        return exit_codes.OK
    try:
        with conn:
            conn.initialize("harness-daemon", __version__, approvals=False)
            info: dict[str, Any] = conn.request(methods.DAEMON_STATUS)
            _say_draining(info)
            conn.request(methods.DAEMON_SHUTDOWN)
    except DaemonUnreachable as exc:  # it answered the connection, then failed: say how
        print(f"harness: could not stop the daemon on {path}: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        print(f"harness: the daemon refused to stop: {exc.message}", file=sys.stderr)
        return exit_codes.MODEL_ERROR
    pid = int(info["pid"])
    limit = float(info.get("drain_seconds", DEFAULT_DRAIN)) + STOP_MARGIN
    if wait_for_exit(pid, limit):
        print(f"harnessd stopped (pid {pid})")
        return exit_codes.OK
    print(f"harnessd (pid {pid}) did not stop within {limit:.0f} s; end it with: kill {pid}")
    return exit_codes.MODEL_ERROR


def _say_draining(info: dict[str, Any]) -> None:
    running = int(info.get("running_turns", 0))
    if running:
        drain = float(info.get("drain_seconds", DEFAULT_DRAIN))
        print(
            f"harnessd (pid {info['pid']}): letting {running} running turn(s) finish "
            f"for up to {drain:.0f} s; turns waiting for an approval are cancelled"
        )


def wait_for_exit(pid: int, timeout: float) -> bool:
    """True once process `pid` has ended (a zombie counts as ended)."""
    import psutil  # only here: it costs ~10 ms and the one-shot path never stops daemons

    try:
        process = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not process.is_running() or process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(POLL)
    return False


def activation_waits(socket_path: Path) -> bool:
    """True when no daemon runs and connecting would only make systemd start one.

    That is: no live discovery record, and the systemd socket unit is installed.
    """
    try:
        record = discovery.read_record(discovery.record_path())
    except discovery.RecordError:
        record = None
    if record is not None and discovery.pid_alive(int(record["pid"])):
        return False
    if not sys.platform.startswith("linux"):
        return False
    from coding_harness.client.service.service_units import (
        SOCKET_NAME,
        systemd_socket_path,
        unit_dir,
    )

    return (
        socket_path == systemd_socket_path(os.environ)
        and (unit_dir(os.environ) / SOCKET_NAME).exists()
        and socket_path.exists()
    )
