"""`harness daemon start|stop|restart|status|logs`."""

from __future__ import annotations

import sys
import time

from coding_harness.protocol import methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

from . import exit_codes
from .launcher import connect_or_start

STOP_TIMEOUT = 10.0
USAGE = "usage: harness daemon start|stop|restart|status|logs"


def main(argv: list[str]) -> int:
    action = argv[0] if argv else ""
    handlers = {"start": start, "stop": stop, "restart": restart, "status": status, "logs": logs}
    if action not in handlers or len(argv) > 1:
        print(USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    return handlers[action]()


def start() -> int:
    try:
        with connect_or_start(paths.socket_path()) as conn:
            info = conn.initialize("harness-daemon", __version__, approvals=False)
    except DaemonUnreachable as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    print(f"harnessd running (pid {info['daemon']['pid']}) on {paths.socket_path()}")
    return exit_codes.OK


def stop() -> int:
    path = paths.socket_path()
    try:
        with connect(path) as conn:
            conn.initialize("harness-daemon", __version__, approvals=False)
            pid = conn.request(methods.DAEMON_STATUS)["pid"]
            conn.request(methods.DAEMON_SHUTDOWN)
    except DaemonUnreachable:
        print("harnessd is not running")
        return exit_codes.OK
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            connect(path, timeout=0.5).close()
        except DaemonUnreachable:
            print(f"harnessd stopped (pid {pid})")
            return exit_codes.OK
        time.sleep(0.05)
    print(f"harnessd (pid {pid}) did not stop within {STOP_TIMEOUT:.0f} s", file=sys.stderr)
    return exit_codes.MODEL_ERROR


def restart() -> int:
    code = stop()
    return code if code != exit_codes.OK else start()


def status() -> int:
    try:
        with connect(paths.socket_path()) as conn:
            conn.initialize("harness-daemon", __version__, approvals=False)
            info = conn.request(methods.DAEMON_STATUS)
    except DaemonUnreachable as exc:
        print(f"harnessd is not running ({exc})")
        return exit_codes.DAEMON_UNREACHABLE
    print(f"pid       {info['pid']}")
    print(f"version   {info['version']}")
    print(f"uptime    {_duration(info['uptime'])}")
    print(f"memory    {info['memory_rss'] / 1_048_576:.1f} MiB")
    print(f"socket    {info['socket']}")
    print(f"sessions  {info['sessions']}")
    print(f"clients   {info['clients']}")
    print(f"turns     {info['running_turns']} running")
    return exit_codes.OK


def logs() -> int:
    log_path = paths.state_dir() / "daemon.log"
    try:
        lines = log_path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        print(f"no daemon log yet at {log_path}", file=sys.stderr)
        return exit_codes.OK
    print("\n".join(lines[-200:]))
    return exit_codes.OK


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"
