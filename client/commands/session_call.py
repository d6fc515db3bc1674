"""Running a command's work against the daemon for the sessions it names: connect
(starting the daemon if none answers), introduce itself, and turn the failures such
commands share into one line on standard error and its exit code: an unknown
session (5), no daemon (4), a daemon's error (1), Ctrl-C (130). `harness logs` and
`harness wait` use it."""

from __future__ import annotations

from collections.abc import Callable

from coding_harness.client.commands.background import NoSuchSession
from coding_harness.client.render.style import Style
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.protocol import errors, exit_codes, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__


def with_daemon(name: str, style: Style, work: Callable[[Connection], int]) -> int:
    """`work`'s exit code on a connection introduced as `name` (no approvals asked)."""
    try:
        with connect_or_start(paths.socket_path()) as conn:
            conn.initialize(name, __version__, approvals=False)
            return work(conn)
    except NoSuchSession as exc:
        style.line(f"harness: {exc}", "red")
        return exit_codes.BAD_ARGUMENTS
    except DaemonUnreachable as exc:
        style.line(f"harness: cannot reach the daemon: {exc}", "red")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        style.line(f"harness: {exc.message}", "red")
        return exit_codes.MODEL_ERROR
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
