"""`harness web`: serve the page until Ctrl-C, printing the URL (and its QR code).

It reaches the daemon first (starting it, as every `harness` command does), so a
daemon that cannot be had is said at once (exit 4); a port in use is exit 5. The
URL carries the token; at a terminal the same URL follows as a QR code for a
phone. Listening anywhere but loopback is warned of: the token is then all that
stands between the network and the sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import signal
import sys

from aiohttp import web

from coding_harness.client.web import access as tokens
from coding_harness.client.web.api import LINK_KEY
from coding_harness.client.web.app import build_app
from coding_harness.client.web.hosts import HostPolicy, is_loopback, is_wildcard
from coding_harness.client.web.options import WebOptions, WebUsageError, parse
from coding_harness.protocol import exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable


def main(argv: list[str]) -> int:
    try:
        options = parse(argv)
    except WebUsageError as exc:
        print(f"harness web: {exc}\nTry 'harness web --help'.", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if options is None:
        return exit_codes.OK
    if options.service or options.remove_service:
        from coding_harness.client.service import web_install

        if options.remove_service:
            return web_install.uninstall()
        return web_install.install(
            options.host, options.port, options.allow_hosts, url_host(options)
        )
    return asyncio.run(_serve(options))


def _token(options: WebOptions) -> str:
    if options.keep_token:
        return tokens.kept_token(paths.state_dir() / "web-token")
    return tokens.new_token()


async def _serve(options: WebOptions) -> int:
    policy = HostPolicy(options.host, options.port, frozenset(options.allow_hosts))
    access = tokens.Access(_token(options))
    app = build_app(policy, access)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await app[LINK_KEY].call(methods.DAEMON_STATUS)
    except DaemonUnreachable as exc:
        await runner.cleanup()
        print(f"harness web: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    site = web.TCPSite(runner, options.host, options.port, backlog=64)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        print(
            f"harness web: cannot listen on {options.host} port {options.port}: "
            f"{exc.strerror or exc}; choose another with --port N (0 picks a free one)",
            file=sys.stderr,
        )
        return exit_codes.BAD_ARGUMENTS
    policy.port = _bound_port(runner, options.port)
    _announce(options, policy.port, access.token)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
    return exit_codes.OK


def _bound_port(runner: web.AppRunner, asked: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return asked


def url_host(options: WebOptions) -> str:
    if options.allow_hosts and not is_loopback(options.host):
        return options.allow_hosts[0]
    if is_wildcard(options.host):
        return "127.0.0.1"
    return f"[{options.host}]" if ":" in options.host else options.host


def _announce(options: WebOptions, port: int, token: str) -> None:
    base = f"http://{url_host(options)}:{port}/"
    url = f"{base}?token={token}"
    if not is_loopback(options.host):
        print(
            f"harness web: warning: listening on {options.host}, not only this machine: "
            "anyone who reaches this port and has the URL drives your sessions, over plain "
            "HTTP; a tunnel (ssh -L, Tailscale) is safer (docs/web.md)",
            file=sys.stderr,
        )
    print(f"harness web: serving the daemon's sessions on {base} (Ctrl-C stops it)")
    print(f"open: {url}", flush=True)
    if options.qr and sys.stdout.isatty():
        print(_qr(url), flush=True)
    print(
        "the URL's token is good until harness web stops"
        + (" (kept across restarts: --keep-token)" if options.keep_token else ""),
        flush=True,
    )


def _qr(url: str) -> str:
    import segno

    out = io.StringIO()
    with contextlib.suppress(Exception):
        segno.make(url, error="l").terminal(out=out, compact=True)
    return out.getvalue()
