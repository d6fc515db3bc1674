"""`harness daemon start|stop|restart|status|logs|install|uninstall`.

`start` and `restart` live here; `stop` (`daemon_stop.py`), `status`, `logs`
and the service install each have a module, imported only when used.
"""

from __future__ import annotations

import sys

from coding_harness.client.render.style import Style
from coding_harness.client.service.daemon_stop import stop
from coding_harness.client.session.launcher import connect_or_start
from coding_harness.client.session.version_skew import warn as warn_version_skew
from coding_harness.protocol import errors, exit_codes, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import __version__

USAGE = (
    "usage: harness daemon start|stop|restart|status|install|uninstall\n"
    "       harness daemon status --json\n"
    "       harness daemon logs [-n N] [-f]"
)


def main(argv: list[str]) -> int:
    action, rest = (argv[0], argv[1:]) if argv else ("", [])
    if action == "logs":
        from coding_harness.client.service.daemon_logs import main as logs_main

        return logs_main(rest)
    if action == "status" and rest == ["--json"]:
        return _status(as_json=True)
    handlers = {
        "start": start,
        "stop": stop,
        "restart": restart,
        "status": _status,
        "install": _install,
        "uninstall": _uninstall,
    }
    if action not in handlers or rest:
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
    except errors.RpcError as exc:
        print(f"harness: the daemon refused: {exc.message}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    print(f"harnessd running (pid {info['daemon']['pid']}) on {paths.socket_path()}")
    warn_version_skew(info, Style(sys.stderr))
    return exit_codes.OK


def restart() -> int:
    """Stop (running turns get their drain time), then start a fresh daemon."""
    code = stop()
    return code if code != exit_codes.OK else start()


def _status(*, as_json: bool = False) -> int:
    from coding_harness.client.service.daemon_status import status

    return status(as_json=as_json)


def _install() -> int:
    from coding_harness.client.service.service_install import install

    return install()


def _uninstall() -> int:
    from coding_harness.client.service.service_install import uninstall

    return uninstall()
