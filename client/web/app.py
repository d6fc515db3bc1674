"""The bridge's web application: its routes, the gate in front of them, its two files.

Routes: `/` the sessions, `/s/ID` one session, `/s/ID/events` its event stream
(WebSocket), `/api/...` the page's requests (api.py), `/static/app.js` and
`/static/app.css`, served by name from this package (no path from the URL
reaches the file system). Everything passes the guard first (guard.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from aiohttp import web

from coding_harness.client.web import api, pages, stream
from coding_harness.client.web.access import Access
from coding_harness.client.web.guard import MAX_BODY, make_guard
from coding_harness.client.web.hosts import HostPolicy
from coding_harness.client.web.requests_link import RequestsLink
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import DaemonUnreachable

STATIC = Path(__file__).resolve().parent / "static"
FILES = {
    "app.js": "text/javascript",
    "app.css": "text/css",
}


async def index(request: web.Request) -> web.Response:
    try:
        listed = await request.app[api.LINK_KEY].call(methods.SESSION_LIST)
    except DaemonUnreachable:
        return web.Response(text=pages.sessions_page([], api.UNREACHABLE), content_type="text/html")
    items = [api.summary(s) for s in listed.get("sessions", [])]
    return web.Response(text=pages.sessions_page(items), content_type="text/html")


async def session_view(request: web.Request) -> web.Response:
    session = api.session_id(request)
    try:
        listed = await request.app[api.LINK_KEY].call(methods.SESSION_LIST)
    except (DaemonUnreachable, errors.RpcError):
        raise web.HTTPServiceUnavailable(text=api.UNREACHABLE) from None
    for item in listed.get("sessions", []):
        if session in (item.get("session"), str(item.get("session", "")).rsplit("-", 1)[-1]):
            return web.Response(text=pages.session_page(item), content_type="text/html")
    return web.Response(status=404, text=pages.missing_page(session), content_type="text/html")


async def static_file(request: web.Request) -> web.Response:
    name = request.match_info.get("name", "")
    if name not in FILES:
        raise web.HTTPNotFound()
    return web.Response(
        body=(STATIC / name).read_bytes(), content_type=FILES[name], charset="utf-8"
    )


def build_app(policy: HostPolicy, access: Access) -> web.Application:
    app = web.Application(middlewares=[make_guard(policy, access)], client_max_size=MAX_BODY)
    app[api.LINK_KEY] = RequestsLink()
    app.cleanup_ctx.append(_close_link)
    app.router.add_get("/", index)
    app.router.add_get("/s/{session}", session_view)
    app.router.add_get("/s/{session}/events", stream.events)
    app.router.add_get("/static/{name}", static_file)
    app.router.add_get("/api/sessions", api.sessions)
    app.router.add_post("/api/s/{session}/submit", api.submit)
    app.router.add_post("/api/s/{session}/cancel", api.cancel)
    app.router.add_post("/api/s/{session}/undo", api.undo)
    app.router.add_post("/api/s/{session}/mode", api.mode)
    app.router.add_post("/api/s/{session}/approve", api.approve)
    return app


async def _close_link(app: web.Application) -> AsyncIterator[None]:
    yield
    await app[api.LINK_KEY].close()
