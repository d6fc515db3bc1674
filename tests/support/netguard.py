"""No test reaches beyond this machine: connections off loopback fail at once.

`install()` wraps `socket.socket.connect` and `connect_ex` so that an AF_INET or
AF_INET6 address that is not loopback raises `OSError` naming the address; Unix
sockets and loopback addresses go through. It also wraps `socket.getaddrinfo`:
looking up a host name that is not loopback would ask a name server (and tell
it the name), so it fails as a name that does not resolve (`socket.gaierror`);
loopback names and written-out addresses are looked up as usual. The top-level
conftest installs it in the test process; daemons and clients that tests start
load it too, through `netguard_site/sitecustomize.py` on their PYTHONPATH (see
`guarded_env`).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SITE = Path(__file__).parent / "netguard_site"
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


class OffMachineConnection(OSError):
    """A test tried to connect beyond this machine."""


class OffMachineLookup(socket.gaierror):
    """A test tried to look up a host name, which asks a name server beyond this machine."""


def is_local(address: Any) -> bool:
    """True for a loopback (host, port, ...) address or a name that means loopback."""
    if not isinstance(address, tuple) or not address:
        return True  # a Unix socket path
    host = str(address[0]).split("%", 1)[0]
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a host name: resolving it would leave the machine


def is_local_lookup(host: Any) -> bool:
    """True for a lookup that asks no name server: none, a loopback name, an address."""
    if host is None:
        return True
    name = host.decode("ascii", "replace") if isinstance(host, bytes) else str(host)
    if is_local((name,)):
        return True
    try:
        ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        try:
            socket.inet_aton(name)  # the short forms inet_aton takes, such as "127.1"
        except OSError:
            return False
    return True


def install() -> None:
    """Refuse off-machine connections and lookups in this process (idempotent)."""
    if getattr(socket.socket.connect, "netguard", False):
        return
    _install_lookup_guard()
    connect, connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: Any) -> None:
        _refuse_remote(self, address)
        connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: Any) -> int:
        _refuse_remote(self, address)
        return connect_ex(self, address)

    guarded_connect.netguard = True  # type: ignore[attr-defined]
    socket.socket.connect = guarded_connect  # type: ignore[method-assign]
    socket.socket.connect_ex = guarded_connect_ex  # type: ignore[method-assign]


def _install_lookup_guard() -> None:
    getaddrinfo = socket.getaddrinfo

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_local_lookup(host):
            raise OffMachineLookup(
                socket.EAI_NONAME, f"tests may not look up names beyond this machine: {host!r}"
            )
        return getaddrinfo(host, *args, **kwargs)

    socket.getaddrinfo = guarded_getaddrinfo


def _refuse_remote(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_local(address):
        raise OffMachineConnection(f"tests may not connect beyond this machine: {address!r}")


def guarded_env(env: Mapping[str, str]) -> dict[str, str]:
    """`env` with the guard on the PYTHONPATH of any Python process started with it."""
    path = env.get("PYTHONPATH")
    return {**env, "PYTHONPATH": f"{SITE}:{path}" if path else str(SITE)}
