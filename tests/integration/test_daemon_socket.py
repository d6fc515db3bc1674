"""The daemon process survives bad input and guards its socket."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import time

from coding_harness.protocol import errors
from tests.integration.conftest import Sandbox
from tests.support import waiting
from tests.support.processes import accepts, client, daemon_pid, start_daemon


def raw_connection(path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10)
    sock.connect(str(path))
    return sock


def read_message(sock: socket.socket) -> dict:
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(65536)
        assert chunk, "daemon closed the connection"
        data += chunk
    return json.loads(data)


def send(sock: socket.socket, payload: bytes) -> dict:
    sock.sendall(payload)
    return read_message(sock)


INIT = b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol":1,"capabilities":{}}}\n'
STATUS = b'{"jsonrpc":"2.0","id":9,"method":"daemon.status"}\n'


def test_socket_and_folder_are_private_even_with_open_umask(sandbox: Sandbox) -> None:
    old = os.umask(0)
    try:
        process = start_daemon(sandbox.socket, sandbox.env)
    finally:
        os.umask(old)
    try:
        assert stat.S_IMODE(sandbox.socket.stat().st_mode) == 0o600
        assert stat.S_IMODE(sandbox.socket.parent.stat().st_mode) == 0o700
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_invalid_json_unknown_method_and_before_initialize(sandbox: Sandbox, daemon) -> None:
    with raw_connection(sandbox.socket) as sock:
        early = send(sock, STATUS)
        assert early["error"]["code"] == errors.NotInitialized.code and early["id"] == 9
        assert (
            send(sock, b'{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]\n')["error"]["code"]
            == -32700
        )
        assert "result" in send(sock, INIT)
        unknown = send(sock, b'{"jsonrpc":"2.0","id":"x","method":"no.such"}\n')
        assert unknown["error"]["code"] == -32601 and unknown["id"] == "x"
        batch = send(sock, b"[1,2,3]\n")
        assert [item["error"]["code"] for item in batch] == [-32600] * 3
        assert send(sock, STATUS)["result"]["pid"] == daemon.pid


def test_oversized_message_gets_error_and_connection_stays_usable(sandbox: Sandbox, daemon) -> None:
    with raw_connection(sandbox.socket) as sock:
        send(sock, INIT)
        big = (
            b'{"jsonrpc":"2.0","id":1,"method":"daemon.status","params":{"pad":"'
            + b"x" * (17 * 1024 * 1024)
            + b'"}}\n'
        )
        sock.sendall(big)
        reply = read_message(sock)
        assert reply["error"]["code"] == errors.MessageTooLarge.code
        assert send(sock, STATUS)["result"]["pid"] == daemon.pid


def test_client_vanishing_mid_message_leaves_daemon_serving(sandbox: Sandbox, daemon) -> None:
    for _ in range(5):
        sock = raw_connection(sandbox.socket)
        sock.sendall(INIT + b'{"jsonrpc":"2.0","id":1,"method":"daem')
        sock.close()
    with client(sandbox.socket) as conn:
        assert conn.request("daemon.status")["pid"] == daemon.pid


def test_second_daemon_refuses_and_leaves_socket(sandbox: Sandbox, daemon) -> None:
    inode = sandbox.socket.stat().st_ino
    second = subprocess.run(
        [sys.executable, "-m", "coding_harness.daemon", "--socket", str(sandbox.socket)],
        env=sandbox.env,
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert second.returncode != 0
    assert f"already running on {sandbox.socket} (pid {daemon.pid})" in second.stderr
    assert sandbox.socket.stat().st_ino == inode
    with client(sandbox.socket) as conn:
        assert conn.request("daemon.status")["pid"] == daemon.pid


def test_stale_socket_is_replaced_and_sigterm_removes_socket(sandbox: Sandbox) -> None:
    first = start_daemon(sandbox.socket, sandbox.env)
    first.kill()  # leaves the socket file behind
    first.wait(timeout=10)
    assert sandbox.socket.exists()
    second = start_daemon(sandbox.socket, sandbox.env)
    with client(sandbox.socket) as conn:
        assert conn.request("daemon.status")["pid"] == second.pid
    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=10) == 0
    assert not sandbox.socket.exists()


def test_daemon_shutdown_request_stops_it(sandbox: Sandbox) -> None:
    process = start_daemon(sandbox.socket, sandbox.env)
    with client(sandbox.socket) as conn:
        assert conn.request("daemon.shutdown") == {"stopping": True}
    assert process.wait(timeout=10) == 0
    deadline = time.monotonic() + 5
    while sandbox.socket.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not sandbox.socket.exists()
    assert daemon_pid(sandbox.socket) in (None, process.pid)


def test_connections_over_the_cap_are_refused_and_others_keep_working(
    sandbox: Sandbox, daemon
) -> None:
    """600 raw connections against the cap of 512 (RELIABILITY item 10)."""
    sockets = []
    try:
        with client(sandbox.socket) as first:
            for _ in range(600):
                sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                sock.connect(str(sandbox.socket))
                sockets.append(sock)
            refused = read_message(sockets[-1])
            assert refused["error"]["code"] == errors.ServerBusy.code
            assert "close some clients" in refused["error"]["message"]
            assert first.request("daemon.status")["pid"] == daemon.pid
        for sock in sockets:
            sock.close()
        sockets.clear()
        waiting.wait_for(lambda: accepts(sandbox.socket), "the daemon to accept again")
        with client(sandbox.socket) as again:  # accepting resumes once fds are freed
            assert again.request("daemon.status")["pid"] == daemon.pid
    finally:
        for sock in sockets:
            sock.close()


def test_daemon_stops_when_its_socket_is_deleted_or_replaced(sandbox: Sandbox) -> None:
    fast = ("--self-check-seconds", "0.1")
    deleted = start_daemon(sandbox.socket, sandbox.env, *fast)
    sandbox.socket.unlink()
    assert deleted.wait(timeout=10) == 0
    replaced = start_daemon(sandbox.socket, sandbox.env, *fast)
    sandbox.socket.unlink()
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(str(sandbox.socket))  # another listener takes the path
    other.listen(1)
    try:
        assert replaced.wait(timeout=10) == 0
        assert sandbox.socket.exists()  # the other listener's socket is left alone
    finally:
        other.close()
