"""fetch_url: one web page as text, fetched under a policy that keeps it on the public web.

Only http and https. Before every connection (the first one and each redirect
hop, followed here, at most five) the host name is resolved and every address
it has must be public: loopback, private, link-local, shared, multicast and
reserved ranges are refused unless the policy allows them. The request then
goes to the address that was checked (the name is sent as Host and TLS server
name), so a second DNS answer cannot swap in another address. Proxy settings
from the environment are ignored for the same reason. The body is capped in
size, the whole fetch in time, binary content is refused, HTML is reduced to
text, and the result is framed as untrusted data.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx

from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.web.htmltext import html_to_text
from coding_harness.daemon.tools.web.netcheck import check_addresses, check_url
from coding_harness.daemon.tools.web.pagetext import Page, page_text

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""`async (host, port) -> addresses` as strings."""

MAX_REDIRECTS = 5
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HEADERS = {
    "User-Agent": "coding-harness/0.1 (fetch_url)",
    "Accept": "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.1",
    "Accept-Encoding": "identity",
}


@dataclass(kw_only=True, slots=True, frozen=True)
class FetchPolicy:
    """Limits for fetch_url; the defaults are the safe ones."""

    allow_private: bool = False  # loopback, private and reserved addresses
    max_bytes: int = 2_000_000
    max_chars: int = 20_000
    total_seconds: float = 20.0
    transport: httpx.AsyncBaseTransport | None = None  # tests inject one
    resolver: Resolver | None = None  # default: the system resolver


async def fetch_url(policy: FetchPolicy, url: str) -> str:
    """The page at `url` as framed text, or `ToolRefusal` saying why not."""
    try:
        async with asyncio.timeout(policy.total_seconds):
            page = await _fetch(policy, url.strip())
    except TimeoutError:
        raise ToolRefusal(
            f"fetch_url: gave up on {url} after {policy.total_seconds:g} s (the server was "
            "too slow or the page too large)"
        ) from None
    return page_text(page, policy.max_chars, html_to_text)


async def _fetch(policy: FetchPolicy, url: str) -> Page:
    target = check_url(url)
    async with httpx.AsyncClient(
        transport=policy.transport,
        follow_redirects=False,
        trust_env=False,
        timeout=httpx.Timeout(policy.total_seconds),
    ) as client:
        for _ in range(MAX_REDIRECTS + 1):
            address = await _checked_address(policy, target)
            page = await _get(client, policy, target, address)
            if page.redirect is None:
                return page
            target = check_url(str(target.join(page.redirect)))
    raise ToolRefusal(f"fetch_url: {url} redirected more than {MAX_REDIRECTS} times; gave up")


async def _checked_address(policy: FetchPolicy, url: httpx.URL) -> str:
    """The address to connect to for `url`, once all of the host's addresses passed."""
    host = url.raw_host.decode("ascii")
    port = url.port or (443 if url.scheme == "https" else 80)
    resolve = policy.resolver or system_resolver
    try:
        addresses = await resolve(host, port)
    except OSError as exc:
        raise ToolRefusal(f"fetch_url: cannot resolve the host '{host}' ({exc})") from None
    if not addresses:
        raise ToolRefusal(f"fetch_url: the host '{host}' has no address")
    check_addresses(host, addresses, allow_private=policy.allow_private)
    return addresses[0]


async def system_resolver(host: str, port: int) -> list[str]:
    """Every address `host` resolves to, in the resolver's order, without duplicates."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0]).split("%", 1)[0]  # drop an IPv6 zone
        if address not in found:
            found.append(address)
    return found


async def _get(
    client: httpx.AsyncClient, policy: FetchPolicy, url: httpx.URL, address: str
) -> Page:
    """One GET to `address`, speaking to it as `url`'s host."""
    headers = {**_HEADERS, "Host": _host_header(url)}
    host = url.raw_host.decode("ascii")
    extensions = {} if _is_literal(host) else {"sni_hostname": host}
    request = client.build_request(
        "GET", url.copy_with(host=address), headers=headers, extensions=extensions
    )
    try:
        response = await client.send(request, stream=True)
    except httpx.HTTPError as exc:
        raise ToolRefusal(f"fetch_url: could not fetch {url}: {_reason(exc)}") from None
    try:
        location = response.headers.get("location")
        if response.status_code in _REDIRECTS and location:
            return Page(url=str(url), status=response.status_code, redirect=location)
        body, cut = await _read_capped(response, policy.max_bytes)
    except httpx.HTTPError as exc:
        raise ToolRefusal(f"fetch_url: the download from {url} failed: {_reason(exc)}") from None
    finally:
        await response.aclose()
    return Page(
        url=str(url),
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=response.headers.get("content-type", ""),
        body=body,
        truncated=cut,
    )


async def _read_capped(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """Up to `limit` bytes of the body; True when there was more."""
    kept = bytearray()
    async for chunk in response.aiter_bytes():
        kept += chunk
        if len(kept) > limit:
            return bytes(kept[:limit]), True
    return bytes(kept), False


def _host_header(url: httpx.URL) -> str:
    host = url.raw_host.decode("ascii")
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{url.port}" if url.port is not None else host


def _is_literal(host: str) -> bool:
    try:
        socket.inet_pton(socket.AF_INET6 if ":" in host else socket.AF_INET, host)
    except OSError:
        return False
    return True


def _reason(exc: httpx.HTTPError) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text and text[0] else type(exc).__name__
