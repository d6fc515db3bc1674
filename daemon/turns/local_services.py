"""Local services already running, so the model never serves on their ports.

Three sources, merged: the services the config names (`agent.services`), the
model servers the provider profiles point at on this machine, and the TCP
ports something is listening on right now (`psutil`; where the system will
not say, as on macOS without privileges, that part is simply left out).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import psutil

from coding_harness.daemon.config.loader import Config

log = logging.getLogger(__name__)

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]"})
MAX_LISTED_PORTS = 40


@dataclass(kw_only=True, slots=True, frozen=True)
class LocalService:
    name: str
    address: str  # "localhost:5432" or a URL
    port: int | None


def configured_services(config: Config) -> list[LocalService]:
    """What the config declares, then each local provider endpoint."""
    found = [
        LocalService(name=name, address=address, port=port_of(address))
        for name, address in config.agent.services
    ]
    for profile in config.providers.values():
        host = urlsplit(profile.endpoint).hostname or ""
        if host in LOCAL_HOSTS:
            found.append(
                LocalService(
                    name=f"model server ({profile.name})",
                    address=shown_address(profile.endpoint),
                    port=port_of(profile.endpoint),
                )
            )
    return found


def shown_address(endpoint: str) -> str:
    """An endpoint as the model may see it: no `user:password@`, no query, no fragment
    (a key passed as `?key=...` must not reach the system prompt)."""
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        port = ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def port_of(address: str) -> int | None:
    """The port in "host:port" or a URL (80/443 when a URL names none)."""
    text = address if "://" in address else f"tcp://{address}"
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if port is None and parts.scheme in ("http", "https"):
        return 443 if parts.scheme == "https" else 80
    return port


# Linux lists sockets here; reading them takes well under a millisecond, where
# psutil.net_connections spends ~10 ms matching every socket to its process.
_PROC_TABLES = (Path("/proc/net/tcp"), Path("/proc/net/tcp6"))
_LISTEN = "0A"


# Turns in quick succession reuse the last answer for this long.
PORTS_TTL_SECONDS = 5.0
_last_ports: tuple[float, list[int]] = (float("-inf"), [])


def listening_ports() -> list[int]:
    """TCP ports in the LISTEN state on this machine; empty when the system will not tell."""
    global _last_ports
    taken_at, ports = _last_ports
    now = time.monotonic()
    if now - taken_at < PORTS_TTL_SECONDS:
        return list(ports)
    ports = _read_listening_ports()
    _last_ports = (now, ports)
    return list(ports)


def _read_listening_ports() -> list[int]:
    from_proc = _proc_listening_ports()
    if from_proc is not None:
        return from_proc
    try:
        connections = psutil.net_connections(kind="inet")
    except (psutil.AccessDenied, PermissionError, OSError) as exc:
        log.debug("cannot list listening ports: %s", exc)
        return []
    return sorted({c.laddr.port for c in connections if c.status == psutil.CONN_LISTEN and c.laddr})


def _proc_listening_ports() -> list[int] | None:
    """From /proc/net/tcp{,6} (local_address is HEXIP:HEXPORT, st 0A is LISTEN); None off Linux."""
    ports: set[int] = set()
    found = False
    for table in _PROC_TABLES:
        try:
            lines = table.read_text().splitlines()[1:]
        except OSError:
            continue
        found = True
        for line in lines:
            fields = line.split()
            if len(fields) > 3 and fields[3] == _LISTEN:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports) if found else None


def describe(services: Iterable[LocalService], ports: Iterable[int]) -> str:
    """The system prompt's paragraph on ports that are taken; empty when nothing is known."""
    named = list(dict.fromkeys(services))
    named_ports = {s.port for s in named if s.port is not None}
    others = [p for p in dict.fromkeys(ports) if p not in named_ports][:MAX_LISTED_PORTS]
    if not named and not others:
        return ""
    lines = ["Already running on this machine (never start a server on these ports):"]
    lines += [f"- {s.name}: {s.address}" for s in named]
    if others:
        lines.append(f"- other listening ports: {', '.join(str(p) for p in others)}")
    lines.append(
        "To serve something you build, choose a port that is not listed "
        "(8000, 3000 or 8888 are usual) and check that it is free first."
    )
    return "\n".join(lines)


def services_paragraph(config: Config) -> str:
    """`describe` for this config, probing listening ports when the config allows it."""
    ports = listening_ports() if config.agent.list_ports else []
    return describe(configured_services(config), ports)
