"""What `harness web` prints when it starts, read from a real process.

The URL carrying the token (and that URL lets a browser in); at a terminal (a
pty) the same URL as a QR code, none when piped or with `--no-qr`; a warning on
standard error when `--host` names an address that is not loopback, none on the
default 127.0.0.1; the unit `harness web --service` writes serves, start after
start, the URL the install printed. One daemon and fake model serve the module (tests/support/
web_bridge.py); each test starts and stops its own `harness web`.
"""

from __future__ import annotations

import contextlib
import io
import os
import pty
import select
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import segno

from coding_harness.client.service.service_units import unit_dir
from tests.support import waiting
from tests.support.service import fake_tool
from tests.support.web_bridge import URL_LINE, WebStack, start_web, stop_web, web_stack
from tests.unit.client.service.test_service_units import parse_unit

pytestmark = pytest.mark.integration

LAST_LINE = "the URL's token is good until harness web stops"
QR_BLOCKS = ("█", "▀", "▄")


@pytest.fixture(scope="module")
def stack() -> Iterator[WebStack]:
    with web_stack() as built:
        yield built


def _read_until_last_line(fd: int, process: subprocess.Popen[bytes]) -> str:
    """What `fd` gives until the announcement's last line (or the process ends)."""
    seen = b""
    deadline = time.monotonic() + waiting.TIMEOUT
    while LAST_LINE.encode() not in seen:
        left = deadline - time.monotonic()
        if left <= 0 or process.poll() is not None:
            break
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the pty's other side closed
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode(errors="replace").replace("\r\n", "\n")


def _started(stack: WebStack, *args: str, tty: bool = False) -> str:
    """Everything `harness web --port 0 ARGS` printed (stdout and stderr) before serving;
    at a pty when `tty`, else through a pipe. The process is stopped before returning."""
    command = [sys.executable, "-m", "coding_harness.client", "web", "--port", "0", *args]
    return _printed(stack, command, tty=tty)


def _printed(stack: WebStack, command: list[str], *, tty: bool = False) -> str:
    reader, writer = pty.openpty() if tty else os.pipe()
    process = subprocess.Popen(
        command,
        env=stack.sandbox.env,
        cwd=stack.sandbox.workspace,
        stdin=subprocess.DEVNULL,
        stdout=writer,
        stderr=writer,
    )
    os.close(writer)
    try:
        printed = _read_until_last_line(reader, process)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        os.close(reader)
    assert LAST_LINE in printed, printed
    return printed


def _url(printed: str) -> tuple[str, str]:
    found = [m for line in printed.splitlines() if (m := URL_LINE.match(line))]
    assert len(found) == 1, printed
    return found[0].group(1), found[0].group(2)


def _qr(url: str) -> str:
    out = io.StringIO()
    segno.make(url, error="l").terminal(out=out, compact=True)
    return out.getvalue()


def test_the_url_carries_a_token_that_lets_a_browser_in(stack: WebStack) -> None:
    process, base, token, lines = start_web(stack.sandbox)
    try:
        assert base.startswith("http://127.0.0.1:") and len(token) >= 32
        assert f"open: {base}?token={token}" in lines  # the reader may have read on
        with httpx.Client(base_url=base, timeout=30) as browser:
            assert browser.get("/").status_code == 401
            assert browser.get("/", params={"token": token}).status_code == 200
    finally:
        stop_web(process)
    again = _started(stack, "--no-qr")
    assert _url(again)[1] != token  # a restart makes a new token...
    kept = _url(_started(stack, "--keep-token", "--no-qr"))[1]
    printed = _started(stack, "--keep-token", "--no-qr")
    assert _url(printed)[1] == kept  # ...unless it is kept on purpose
    assert "kept across restarts: --keep-token" in printed


def test_at_a_terminal_the_url_follows_as_a_qr_code(stack: WebStack) -> None:
    printed = _started(stack, tty=True)
    base, token = _url(printed)
    assert _qr(f"{base}?token={token}") in printed
    assert printed.index("open: ") < printed.index(QR_BLOCKS[0])


@pytest.mark.parametrize(
    ("args", "tty"), [((), False), (("--no-qr",), True)], ids=["piped", "no-qr-at-a-terminal"]
)
def test_no_qr_code_when_piped_or_asked_not_to(
    stack: WebStack, args: tuple[str, ...], tty: bool
) -> None:
    printed = _started(stack, *args, tty=tty)
    _url(printed)
    assert not any(block in printed for block in QR_BLOCKS), printed


def test_a_host_that_is_not_loopback_is_warned_of(stack: WebStack) -> None:
    printed = _started(stack, "--host", "0.0.0.0", "--no-qr")
    warning = [line for line in printed.splitlines() if "warning" in line]
    assert len(warning) == 1, printed
    assert warning[0].startswith("harness web: warning: listening on 0.0.0.0, not only")
    assert "ssh -L, Tailscale" in warning[0]
    base, _ = _url(printed)
    assert base.startswith("http://127.0.0.1:")


def test_loopback_is_not_warned_of(stack: WebStack) -> None:
    for host in ("127.0.0.1", "::1", "localhost"):
        printed = _started(stack, "--host", host, "--no-qr")
        assert "warning" not in printed, printed


def test_the_service_unit_serves_the_url_its_install_printed_across_restarts(
    stack: WebStack, tmp_path: Path
) -> None:
    env = {**stack.sandbox.env, "PATH": f"{tmp_path}:{stack.sandbox.env['PATH']}"}
    fake_tool(tmp_path, "systemctl", tmp_path / "systemctl.log")  # none runs here
    with socket.socket() as probe:  # a free port, as a user would choose one
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    installed = subprocess.run(
        [sys.executable, "-m", "coding_harness.client", "web", "--service", "--port", str(port)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    url = _url(installed.stdout)
    assert url[0] == f"http://127.0.0.1:{port}/"
    unit = unit_dir(env) / "harness-web.service"
    exec_start = parse_unit(unit.read_text())["Service"]["ExecStart"]
    for _restart in range(2):  # what systemd runs, each time it starts the unit
        assert _url(_printed(stack, shlex.split(exec_start))) == url
