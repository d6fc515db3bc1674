"""`harness daemon status`: what the daemon reports, checked against its record.

Prints pid, version, uptime, memory, CPU, socket, sessions, clients, running
turns, provider connections, loaded config files, the log path and a line per
code index (fields of `daemon.status`; an older daemon may lack some). With
`--json` it prints the daemon's answer as it came, as one JSON object on
standard output, and everything else on standard error. Before trusting the
answer it reads the discovery record and prints every mismatch (recorded pid
not running, another socket path, another pid answering) as a warning. It
never starts a daemon: when none answers it says so and how to start one
(`harness daemon start`). Exits 0 when a daemon answers, 4 when none does.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from coding_harness.client.render.index_lines import status_line
from coding_harness.client.service.daemon_stop import activation_waits
from coding_harness.client.session.version_skew import notice
from coding_harness.protocol import discovery, errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__


def status(*, as_json: bool = False) -> int:
    path = paths.socket_path()
    say = _say_to(sys.stderr if as_json else sys.stdout)
    record, record_problem = _record()
    if activation_waits(path):
        say(f"harnessd is not running; harnessd.socket listens on {path} and starts it")
        return exit_codes.DAEMON_UNREACHABLE
    try:
        conn = connect(path)
    except DaemonUnreachable as exc:
        say(f"harnessd is not running ({exc}); start it with `harness daemon start`")
        for problem in discovery.problems(record, socket_path=path, answering_pid=None):
            say(f"note: {problem}")
        _note_socket_path(path, say)
        return exit_codes.DAEMON_UNREACHABLE
    try:
        with conn:
            hello = conn.initialize("harness-daemon", __version__, approvals=False)
            info: dict[str, Any] = conn.request(methods.DAEMON_STATUS)
    except DaemonUnreachable as exc:  # something listens, but gave no status: say what
        say(f"harnessd on {path} did not report its status: {exc}")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        say(f"harnessd on {path} refused to report its status: {exc.message}")
        return exit_codes.DAEMON_UNREACHABLE
    if as_json:
        print(json.dumps(info, ensure_ascii=False), flush=True)
    else:
        for line in status_lines(info):
            print(line)
    problems = discovery.problems(record, socket_path=path, answering_pid=int(info["pid"]))
    for problem in [*problems, *([record_problem] if record_problem else [])]:
        say(f"warning: {problem}")
    skew = notice(hello)
    if skew:
        say(f"warning: {skew}")
    return exit_codes.OK


Say = Callable[[str], None]


def _say_to(stream: TextIO) -> Say:
    """A `print` to `stream`: standard error under --json, so standard output is JSON alone."""
    return lambda text: print(text, file=stream, flush=True)


def _note_socket_path(path: Path, say: Say) -> None:
    """Say so when something other than a socket sits where the daemon would bind."""
    try:
        paths.check_socket_file(path)
    except paths.UnsafePathError as exc:
        say(f"note: {exc}")


def _record() -> tuple[dict[str, Any] | None, str | None]:
    try:
        return discovery.read_record(discovery.record_path()), None
    except discovery.RecordError as exc:
        return None, str(exc)


def status_lines(info: dict[str, Any]) -> list[str]:
    """One `name  value` line per status field."""
    rows = [
        ("pid", str(info["pid"])),
        ("version", str(info["version"])),
        ("uptime", _uptime(info)),
        ("memory", f"{float(info.get('memory_rss', 0)) / 1_048_576:.1f} MiB"),
        ("cpu", _cpu(info)),
        ("socket", _socket(info)),
        ("sessions", str(info.get("sessions", 0))),
        ("clients", _clients(info)),
        ("turns", f"{info.get('running_turns', 0)} running"),
        ("providers", f"{info.get('provider_connections', 0)} connection(s)"),
        ("configs", ", ".join(info.get("config_files") or []) or "none loaded yet"),
        ("log", str(info.get("log_file") or paths.state_dir() / "daemon.log")),
    ]
    if info.get("stopping"):
        rows.append(("state", "stopping"))
    rows.extend(("index", line) for line in _index_lines(info))
    return [f"{name:<10}{value}" for name, value in rows]


def _index_lines(info: dict[str, Any]) -> list[str]:
    """A line per code index; none from an older daemon, which sends no `indexes`."""
    if "indexes" not in info:
        return []
    indexes = [entry for entry in info.get("indexes") or [] if isinstance(entry, dict)]
    return [status_line(entry) for entry in indexes] or ["none yet (built for a session's folder)"]


def _uptime(info: dict[str, Any]) -> str:
    text = duration(float(info.get("uptime", 0)))
    started = info.get("started_at")
    if isinstance(started, int | float):
        text += time.strftime(" (since %Y-%m-%d %H:%M:%S)", time.localtime(started))
    return text


def _cpu(info: dict[str, Any]) -> str:
    if "cpu_seconds" not in info:
        return "unknown (older daemon)"
    return f"{info['cpu_seconds']:.1f} s ({info.get('cpu_percent', 0.0):.1f}% on average)"


def _socket(info: dict[str, Any]) -> str:
    socket = str(info.get("socket", ""))
    return f"{socket} (socket-activated)" if info.get("socket_activated") else socket


def _clients(info: dict[str, Any]) -> str:
    connected = info.get("clients", 0)
    if "attached_clients" not in info:
        return str(connected)
    return f"{connected} connected, {info['attached_clients']} attached to a session"


def duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    days, hours = divmod(hours, 24)
    if days:
        return f"{days}d{hours:02d}h{minutes:02d}m"
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"
