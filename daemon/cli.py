"""`harnessd`: run the daemon in the foreground, alone or under a service manager.

Logs go to `daemon.log` in the state folder, rotated by size (5 MiB, three
old files kept). Under systemd socket activation the listening socket is the
one systemd passed as fd 3, and its path wins over `--socket`; NOTIFY_SOCKET
gets READY=1 and STOPPING=1 (see `service.py`).

Exit codes: 0 stopped; 1 another daemon serves the socket; 78 (EX_CONFIG) a
problem a restart cannot fix (an unsafe socket folder, an unusable inherited
socket), which the unit's RestartPreventExitStatus=78 keeps systemd from
retrying.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path

from coding_harness.protocol import discovery, paths
from coding_harness.protocol.version import __version__

from .app import DRAIN_SECONDS, SELF_CHECK_SECONDS, Daemon
from .config import home_dir
from .server import AlreadyRunning
from .service import ServiceContext, ServiceError

log = logging.getLogger(__name__)

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LOG_NAME = "daemon.log"
LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3
EX_CONFIG = 78


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harnessd", description="The coding-harness daemon.")
    parser.add_argument("--socket", type=Path, help="socket path (default: as in the docs)")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", type=Path, help="default: daemon.log in the state folder")
    parser.add_argument(
        "--drain-seconds",
        type=float,
        default=DRAIN_SECONDS,
        metavar="S",
        help="how long a stop lets running turns finish before cancelling them "
        f"(default {DRAIN_SECONDS:.0f})",
    )
    parser.add_argument(
        "--self-check-seconds",
        type=float,
        default=SELF_CHECK_SECONDS,
        metavar="S",
        help="how often to check that the socket file is still this daemon's "
        f"(default {SELF_CHECK_SECONDS:.0f})",
    )
    parser.add_argument("--version", action="version", version=f"harnessd {__version__}")
    return parser.parse_args(argv)


def _setup_logging(level: str, log_file: Path | None) -> Path:
    if log_file is None:
        state = paths.state_dir()
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        log_file = state / LOG_NAME
    handler = RotatingFileHandler(
        log_file, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    # httpx logs every request URL at INFO; keep it for --log-level DEBUG.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return log_file.absolute()


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    log_file = _setup_logging(args.log_level, args.log_file)
    try:
        service = ServiceContext.from_environment(
            os.environ, record_path=discovery.record_path(), log_file=log_file
        )
        socket_path = _socket_path(args.socket, service)
        asyncio.run(_serve(socket_path, service, args))
    except AlreadyRunning as exc:
        print(f"harnessd: {exc}", file=sys.stderr)
        return 1
    except (paths.UnsafePathError, ServiceError) as exc:
        log.error("%s", exc)
        print(f"harnessd: {exc}", file=sys.stderr)
        return EX_CONFIG
    return 0


def _socket_path(requested: Path | None, service: ServiceContext) -> Path:
    """The path to serve on: the inherited socket's own path when socket-activated."""
    inherited = service.inherited_path()
    if inherited is None:
        return requested or paths.socket_path()
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
