"""Which URLs and addresses fetch_url may reach.

`check_url` accepts http and https URLs with a plain host name or address
(no NUL, no control characters, no percent-escapes in the host).
`check_addresses` refuses a host when any of its addresses is not on the
public internet: loopback, private, link-local, shared (CGNAT), multicast,
unspecified, documentation and other reserved ranges, including IPv4
addresses wrapped in IPv6 (mapped, 6to4, NAT64, Teredo).
"""

from __future__ import annotations

import ipaddress
import re

import httpx

from coding_harness.daemon.tools.errors import ToolRefusal

_HOST = re.compile(r"[A-Za-z0-9.\-:_\[\]]+")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def check_url(url: str) -> httpx.URL:
    """`url` parsed, when it is an http(s) URL with a sane host; else `ToolRefusal`."""
    if any(ord(char) < 0x20 or char == "\x7f" for char in url):
        raise ToolRefusal("fetch_url: refused: the URL contains control characters or a NUL")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ToolRefusal(f"fetch_url: refused: {url!r} is not a valid URL ({exc})") from None
    if parsed.scheme not in ("http", "https"):
        shown = parsed.scheme or "no scheme"
        raise ToolRefusal(
            f"fetch_url: refused: only http:// and https:// URLs can be fetched, not {shown}"
        )
    host = parsed.raw_host.decode("ascii", "replace")
    if not host or not _HOST.fullmatch(host):
        raise ToolRefusal(f"fetch_url: refused: {url!r} has no valid host name")
    return parsed


def check_addresses(host: str, addresses: list[str], *, allow_private: bool) -> None:
    """Refuse when any address of `host` is off the public internet (unless allowed)."""
    if allow_private:
        return
    for text in addresses:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            raise ToolRefusal(f"fetch_url: refused: '{host}' resolved to {text!r}") from None
        if not is_public(address):
            raise ToolRefusal(
                f"fetch_url: refused: '{host}' is {address}, a loopback, private, link-local "
                "or reserved address. fetch_url reaches public web sites only."
            )


def is_public(address: IPAddress) -> bool:
    """True for a global unicast address, looking inside IPv6 forms that wrap IPv4."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = _embedded_ipv4(address)
        if inner is not None:
            return is_public(inner)
    return address.is_global and not address.is_multicast


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.teredo is not None:
        return address.teredo[1]
    return None
