"""Which `Host` and `Origin` headers the bridge answers (DNS rebinding, CSRF, CSWSH).

A `Host` must name one of: a loopback name on any port (what `ssh -L` forwards:
the browser's tab says `localhost:9000` for a bridge on 8765), the address the
request actually arrived on (an IP literal cannot be rebound to another site),
the address `--host` named, or a name the user allowed (`--allow-host`, e.g. a
Tailscale name). A DNS-rebinding page sends its own domain name: refused.

An `Origin` must name the same host and port as the (already accepted) `Host`,
over http or https (a tunnel or a TLS proxy in front may change the scheme).
Requests that change something and the event stream's upgrade must carry one.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import urlsplit

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def split_host(value: str) -> tuple[str, int | None] | None:
    """(`name`, port or None) of a Host header, lower-cased; None when malformed."""
    value = value.strip()
    if not value or any(ch in value for ch in "/\\@?# \t"):
        return None
    try:
        parts = urlsplit(f"//{value}")
        name, port = parts.hostname, parts.port
    except ValueError:
        return None
    if not name:
        return None
    return name.lower().rstrip("."), port


def is_loopback(name: str) -> bool:
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_wildcard(address: str) -> bool:
    return address in ("0.0.0.0", "::", "")


@dataclass
class HostPolicy:
    served: str  # the --host address
    port: int  # the port served
    allowed: frozenset[str] = field(default_factory=frozenset)  # --allow-host names

    def host_ok(self, header: str | None, arrived_on: str | None) -> bool:
        """Whether a request with this Host header, reaching local address `arrived_on`,
        is for us."""
        parsed = split_host(header or "")
        if parsed is None:
            return False
        name, port = parsed
        if is_loopback(name) or name in self.allowed:
            return True
        if (port if port is not None else 80) != self.port:
            return False
        if not is_wildcard(self.served) and name == self.served.lower().strip("[]"):
            return True
        return arrived_on is not None and _same_ip(name, arrived_on)

    def origin_ok(self, origin: str | None, host_header: str | None) -> bool:
        """Whether `origin` is this very site (as the request's Host names it)."""
        if not origin or not host_header:
            return False
        try:
            parts = urlsplit(origin)
            origin_host, origin_port = parts.hostname, parts.port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not origin_host or parts.path:
            return False
        host = split_host(host_header)
        if host is None:
            return False
        default = 443 if parts.scheme == "https" else 80
        return host[0] == origin_host.lower().rstrip(".") and (host[1] or default) == (
            origin_port or default
        )


def _same_ip(name: str, arrived_on: str) -> bool:
    try:
        return ipaddress.ip_address(name) == ipaddress.ip_address(arrived_on.split("%")[0])
    except ValueError:
        return False
