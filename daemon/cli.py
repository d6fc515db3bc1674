"""`harnessd`: run the daemon in the foreground, alone or under a service manager.

Logs go to `daemon.log` in the state folder, rotated by size (5 MiB, three
old files kept). Under systemd socket activation the listening socket is the
one systemd passed as fd 3, and its path wins over `--socket`; NOTIFY_SOCKET
gets READY=1 and STOPPING=1 (see `service.py`).

Every failure is one line on standard error naming the fix, never a
traceback (a traceback of an unexpected OS error goes to the log, when
there is one). Exit codes: 0 stopped; 1 another daemon serves the socket;
5 bad arguments (as for `harness`); 78 (EX_CONFIG) a problem a restart
cannot fix (an unsafe or unwritable socket or state folder, something that
is not a socket at the socket path, an unusable inherited socket), which
the unit's RestartPreventExitStatus=78 keeps systemd from retrying; 130
interrupted before it served.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import sqlite3
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import NoReturn

from coding_harness.daemon.app import DRAIN_SECONDS, SELF_CHECK_SECONDS, Daemon
from coding_harness.daemon.config.loader import home_dir
from coding_harness.daemon.security.secret_log import KNOWN_SECRETS, install_log_redaction
from coding_harness.daemon.security.secrets import collect_secrets
from coding_harness.daemon.server.service import ServiceContext, ServiceError
from coding_harness.daemon.server.socket_server import AlreadyRunning
from coding_harness.daemon.tools.shell import prctl
from coding_harness.protocol import discovery, exit_codes, paths
from coding_harness.protocol.version import __version__

log = logging.getLogger(__name__)

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_NAME = "daemon.log"
LOG_MAX_BYTES = 5 * 1024 * 1024
LOOP_SWITCH_SECONDS = 0.001  # the interpreter lock's switch interval (see `_run`)
LOG_BACKUPS = 3


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds (0 or more)")
    return value


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be more than 0 seconds")
    return value


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = _Parser(prog="harnessd", description="The coding-harness daemon.")
    parser.add_argument("--socket", type=Path, help="socket path (default: as in the docs)")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", type=Path, help="default: daemon.log in the state folder")
    parser.add_argument(
        "--drain-seconds",
        type=_seconds,
        default=DRAIN_SECONDS,
        metavar="S",
        help="how long a stop lets running turns finish before cancelling them "
        f"(default {DRAIN_SECONDS:.0f})",
    )
    parser.add_argument(
        "--self-check-seconds",
        type=_positive_seconds,
        default=SELF_CHECK_SECONDS,
        metavar="S",
        help="how often to check that the socket file is still this daemon's "
        f"(default {SELF_CHECK_SECONDS:.0f})",
    )
    parser.add_argument("--version", action="version", version=f"harnessd {__version__}")
    return parser.parse_args(argv)


def _setup_logging(level: str, log_file: Path | None) -> Path:
    """Log to `log_file` (default: daemon.log in the state folder); UnsafePathError if not."""
    if log_file is None:
        state = paths.state_dir()
        paths.ensure_state_dir(state)
        log_file = state / LOG_NAME
    try:
        handler = RotatingFileHandler(
            log_file, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    except OSError as exc:
        if log_file.parent == paths.state_dir():
            raise paths.state_error(log_file.parent, exc) from None
        raise paths.UnsafePathError(
            f"cannot write the log file {log_file} ({exc.strerror or exc}); "
            "pass a --log-file you can write"
        ) from None
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    # The daemon's own secrets are known before anything is logged; turns add theirs.
    KNOWN_SECRETS.learn(collect_secrets((), os.environ))
    install_log_redaction(root)
    # httpx logs every request URL at INFO; keep it for --log-level DEBUG.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return log_file.absolute()


def main(argv: list[str] | None = None) -> int:
    # First of all: other processes of this user may not read our environ or memory.
    prctl.make_non_dumpable()
    try:
        args = _parse(argv)
    except UsageError as exc:
        print(f"harnessd: {exc}; see harnessd --help", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    try:
        _run(args)
    except AlreadyRunning as exc:
        print(f"harnessd: {exc}", file=sys.stderr)
        return 1
    except (paths.UnsafePathError, ServiceError) as exc:
        return _refuse(str(exc))
    except sqlite3.Error as exc:
        store = f"the session store in {paths.state_dir()}"
        return _refuse(f"{store} cannot be used ({exc}); {paths.STATE_FIX}", trace=True)
    except OSError as exc:
        return _refuse(_os_problem(exc), trace=True)
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    return 0


def _run(args: argparse.Namespace) -> None:
    log_file = _setup_logging(args.log_level, args.log_file)
    service = ServiceContext.from_environment(
        os.environ, record_path=discovery.record_path(), log_file=log_file
    )
    socket_path = _socket_path(args.socket, service)
    # The event loop answers every client; worker threads (the index's readers and
    # ranking, MCP conversions) run Python for long stretches. Each time the loop's
    # thread wants the interpreter lock back it waits up to this interval, and one
    # request wants it back at every read and write: at the default 5 ms a request
    # waited 50-100 ms behind an index build (bench/daemon_stall.py).
    sys.setswitchinterval(LOOP_SWITCH_SECONDS)
    asyncio.run(_serve(socket_path, service, args))


def _refuse(problem: str, *, trace: bool = False) -> int:
    """A problem a restart cannot fix: one line on standard error, and in the log if any.

    `trace`: the log also gets the traceback (an unexpected OS error). Without a
    log handler nothing is logged: logging's last resort would print it again.
    """
    if logging.getLogger().handlers:
        log.error("%s", problem, exc_info=trace)
    print(f"harnessd: {problem}", file=sys.stderr)
    return exit_codes.DAEMON_CONFIG_PROBLEM


def _os_problem(exc: OSError) -> str:
    """One line for an OS error the daemon cannot serve past."""
    if exc.filename is None:
        return str(exc)  # a message of our own, naming the fix
    return (
        f"cannot use {exc.filename} ({exc.strerror or exc}); check that it is yours and "
        "writable, or point CODING_HARNESS_SOCKET / XDG_STATE_HOME elsewhere"
    )


def _socket_path(requested: Path | None, service: ServiceContext) -> Path:
    """The path to serve on: the inherited socket's own path when socket-activated."""
    inherited = service.inherited_path()
    if inherited is None:
        path = requested or paths.socket_path()
        paths.check_socket_file(path)
        return path
    if requested is not None and requested != inherited:
        log.warning("--socket %s ignored: socket-activated on %s", requested, inherited)
    # systemd creates the folder 0700 (DirectoryMode=); one made earlier by
    # someone else is refused here as it is for a daemon that binds itself.
    paths.ensure_private_dir(inherited.parent)
    return inherited


async def _serve(socket_path: Path, service: ServiceContext, args: argparse.Namespace) -> None:
    daemon = Daemon(socket_path=socket_path, home=home_dir(), state_dir=paths.state_dir())
    daemon.drain_seconds = args.drain_seconds
    daemon.self_check_seconds = args.self_check_seconds
    await daemon.run(service)
