"""The gate every request goes through, before any handler runs.

In order: the `Host` must be ours (hosts.py); `OPTIONS` is refused (no CORS,
ever); a visit carrying `?token=` trades a right token for a cookie and leaves
the address bar through a page that refreshes to the same path without it (a
plain 303 would lose a SameSite=Strict cookie when the link was opened from
another app: the redirect still counts as that app's navigation, where a refresh
by our own page is same-site); every other request needs that cookie; and a
request that changes something, or upgrades to the event stream, must carry
our own `Origin`. Wrong tokens and cookies are rate-limited (access.py). Every
answer carries a strict Content-Security-Policy (scripts from our own files
only, nothing inline, nothing from elsewhere) and is never cached.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from aiohttp import web

from coding_harness.client.web.access import COOKIE, Access
from coding_harness.client.web.hosts import HostPolicy

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
MAX_BODY = 1024 * 1024  # a task, an answer: never more than this

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}
SAFE_METHODS = frozenset({"GET", "HEAD"})


def make_guard(policy: HostPolicy, access: Access) -> Callable[..., Awaitable[web.StreamResponse]]:
    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await _checked(request, handler, policy, access)
        except web.HTTPException as exc:
            response = exc
        response.headers.update(HEADERS)
        return response

    return guard


async def _checked(
    request: web.Request, handler: Handler, policy: HostPolicy, access: Access
) -> web.StreamResponse:
    arrived_on = _local_address(request)
    if not policy.host_ok(request.headers.get("Host"), arrived_on):
        return _refuse(421, "this address is not served here (check --allow-host)")
    if request.method == "OPTIONS":
        return _refuse(405, "no cross-origin requests")
    address = request.remote or "?"
    token = request.query.get("token")
    if token is not None:
        return _trade(request, token, access, address)
    offered = request.cookies.get(COOKIE)
    if not access.cookie_ok(offered):
        if offered:
            wait = access.guesses.blocked(address)
            if wait:
                return _too_many(wait)
            access.guesses.wrong(address)
        return _refuse(401, "open the URL `harness web` printed (it carries the token)")
    changes = request.method not in SAFE_METHODS
    upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
    if (changes or upgrade) and not policy.origin_ok(
        request.headers.get("Origin"), request.headers.get("Host")
    ):
        return _refuse(403, "refused: this request did not come from this page")
    return await handler(request)


def _trade(request: web.Request, token: str, access: Access, address: str) -> web.Response:
    wait = access.guesses.blocked(address)
    if wait:
        return _too_many(wait)
    if not access.token_ok(token):
        access.guesses.wrong(address)
        return _refuse(403, "wrong token: open the URL `harness web` printed")
    rest = [(key, value) for key, value in request.query.items() if key != "token"]
    target = request.path + (f"?{urlencode(rest)}" if rest else "")
    if not target.startswith("/") or target.startswith("//"):
        target = "/"
    shown = html.escape(target, quote=True)
    page = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0; url={shown}">'
        "<title>harness</title></head>"
        f'<body><p><a href="{shown}">Continue</a></p></body></html>'
    )
    response = web.Response(text=page, content_type="text/html")
    response.set_cookie(
        COOKIE,
        access.new_cookie(),
        httponly=True,
        samesite="Strict",
        path="/",
        secure=request.secure,
    )
    return response


def _too_many(wait: float) -> web.Response:
    response = _refuse(429, "too many wrong tokens: wait a minute, then open the printed URL")
    response.headers["Retry-After"] = str(max(1, round(wait)))
    return response


def _refuse(status: int, text: str) -> web.Response:
    return web.Response(status=status, text=f"harness web: {text}\n")


def _local_address(request: web.Request) -> str | None:
    transport = request.transport
    sockname = transport.get_extra_info("sockname") if transport is not None else None
    if isinstance(sockname, tuple) and sockname:
        return str(sockname[0])
    return None
