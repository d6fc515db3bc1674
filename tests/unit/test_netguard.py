"""The test guard: off-machine connections and name lookups fail, loopback and Unix sockets work."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest

from tests.support import netguard

# TEST-NET-1 (RFC 5737): never routed, so a connection that got through would hang.
OFF_MACHINE = ("192.0.2.1", 9)


def test_an_off_machine_address_is_refused_at_once() -> None:
    refused = pytest.raises(netguard.OffMachineConnection, match=r"192\.0\.2\.1")
    with socket.socket() as sock, refused:
        sock.connect(OFF_MACHINE)
    with socket.socket() as sock, pytest.raises(netguard.OffMachineConnection):
        sock.connect_ex(OFF_MACHINE)


def test_a_host_name_that_is_not_loopback_is_refused() -> None:
    with socket.socket() as sock, pytest.raises(netguard.OffMachineConnection):
        sock.connect(("example.com", 80))


def test_looking_up_a_host_name_that_is_not_loopback_is_refused() -> None:
    with pytest.raises(netguard.OffMachineLookup, match=r"example\.com") as refused:
        socket.getaddrinfo("example.com", 80)
    assert isinstance(refused.value, socket.gaierror)  # to the code under test: not found


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "::1", "192.0.2.1", None])
def test_loopback_names_and_written_out_addresses_are_looked_up(host: str | None) -> None:
    assert socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)


def test_loopback_connections_go_through() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        with socket.create_connection(("localhost", port), timeout=5):
            pass


@pytest.mark.parametrize(
    ("address", "local"),
    [(("127.0.0.1", 1), True), (("::1", 1, 0, 0), True), (("10.0.0.1", 1), False), ("/x", True)],
)
def test_what_counts_as_local(address: object, local: bool) -> None:
    assert netguard.is_local(address) is local


def test_a_python_process_started_with_the_guarded_env_is_guarded_too() -> None:
    program = (
        "import socket\n"
        "try:\n"
        "    socket.socket().connect(('192.0.2.1', 9))\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__, exc)\n"
        "try:\n"
        "    socket.getaddrinfo('example.com', 80)\n"
        "except OSError as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        env=netguard.guarded_env({"PATH": "/usr/bin:/bin"}),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.startswith("OffMachineConnection tests may not connect beyond")
    assert done.stdout.endswith("OffMachineLookup\n")
