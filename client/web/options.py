"""`harness web`'s command line, parsed here (not in client/args.py)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

USAGE = """\
harness web [--host ADDR] [--port N] [--allow-host NAME]... [--keep-token] [--no-qr]
harness web --service [--host ADDR] [--port N] [--allow-host NAME]... | --remove-service

A web page on the daemon's live sessions: follow them, approve, submit, cancel,
undo, from any browser (a phone through your own tunnel: docs/web.md). It
listens on 127.0.0.1 unless --host names another address, and prints a URL
carrying a token (and, at a terminal, the same URL as a QR code).
"""


class WebUsageError(Exception):
    """Bad `harness web` arguments: one line, exit 5."""


@dataclass
class WebOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_hosts: list[str] = field(default_factory=list)
    keep_token: bool = False
    qr: bool = True
    service: bool = False  # install as a systemd user unit / launchd agent instead
    remove_service: bool = False


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise WebUsageError(message)


def parse(argv: list[str]) -> WebOptions | None:
    """The options; None when --help was asked (the help is printed)."""
    parser = _Parser(prog="harness web", usage=USAGE, add_help=False)
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--host", default=DEFAULT_HOST, help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="0: any free port")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME")
    parser.add_argument("--keep-token", action="store_true")
    parser.add_argument("--no-qr", action="store_true")
    parser.add_argument("--service", action="store_true")
    parser.add_argument("--remove-service", action="store_true")
    found = parser.parse_args(argv)
    if found.help:
        print(USAGE.rstrip())
        print(
            "\n  --host ADDR        listen there (default 127.0.0.1; anything else is warned of)"
            "\n  --port N           the port (default 8765; 0 picks a free one)"
            "\n  --allow-host NAME  a name the browser may use besides the address served"
            "\n                     (a Tailscale name, a DNS name of this machine); repeatable"
            "\n  --keep-token       keep the token across restarts (saved 0600 in the state"
            "\n                     folder) instead of a fresh one each time"
            "\n  --no-qr            print no QR code"
            "\n  --service          install it as a systemd user unit / launchd agent (with"
            "\n                     these --host, --port, --allow-host; its token is kept)"
            "\n                     and print its URL; again to print the URL again"
            "\n  --remove-service   stop and remove that unit / agent"
        )
        return None
    if not 0 <= found.port <= 65535:
        raise WebUsageError(f"--port {found.port} is not a port (0 to 65535)")
    if found.service and found.remove_service:
        raise WebUsageError("--service and --remove-service: choose one")
    names = [name.strip().lower().rstrip(".") for name in found.allow_host]
    if any(not name or "/" in name or ":" in name for name in names):
        raise WebUsageError("--allow-host takes a host name alone, without scheme or port")
    return WebOptions(
        host=found.host.strip("[]"),
        port=found.port,
        allow_hosts=names,
        keep_token=found.keep_token,
        qr=not found.no_qr,
        service=found.service,
        remove_service=found.remove_service,
    )
