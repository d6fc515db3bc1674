"""`harnessd`: run the daemon in the foreground."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from coding_harness.protocol import paths
from coding_harness.protocol.version import __version__

from .app import Daemon
from .config import home_dir
from .server import AlreadyRunning

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="harnessd", description="The coding-harness daemon.")
    parser.add_argument("--socket", type=Path, help="socket path (default: as in the docs)")
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", type=Path, help="default: daemon.log in the state folder")
    parser.add_argument("--version", action="version", version=f"harnessd {__version__}")
    return parser.parse_args(argv)


def _setup_logging(level: str, log_file: Path | None) -> None:
    if log_file is None:
        state = paths.state_dir()
        state.mkdir(parents=True, exist_ok=True, mode=0o700)
        log_file = state / "daemon.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    root = logging.getLogger()
    root.setLevel(level)
    root.addHandler(handler)
    # httpx logs every request URL at INFO; keep it for --log-level DEBUG.
    logging.getLogger("httpx").setLevel(logging.WARNING)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    _setup_logging(args.log_level, args.log_file)
    socket_path = args.socket or paths.socket_path()
    try:
        asyncio.run(_serve(socket_path))
    except AlreadyRunning as exc:
        print(f"harnessd: {exc}", file=sys.stderr)
        return 1
    except paths.UnsafePathError as exc:
        print(f"harnessd: {exc}", file=sys.stderr)
        return 1
    return 0


async def _serve(socket_path: Path) -> None:
    await Daemon(socket_path=socket_path, home=home_dir()).run()
