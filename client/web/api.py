"""The page's requests, each one daemon method: the sessions, submit, cancel, undo,
the permission mode and the answer to an approval.

Bodies are small JSON objects (the guard caps their size and checks their
`Origin`); an answer is JSON too: the result, or `{error}` with one line and a
status (400 bad input, 404 no such session, 409 refused by the daemon, 503 the
daemon cannot be reached, the bridge dialling it again at the next request).
A message from the daemon that names a file of its own (its socket) is not passed on.
"""

from __future__ import annotations

import json
import re
from typing import Any

from aiohttp import web

from coding_harness.client.web.requests_link import RequestsLink
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.modes import mode_named

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,79}")
REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,119}")
DECISIONS = ("yes", "no", "skip", "always")
UNREACHABLE = "the daemon cannot be reached; harness web tries again at the next request"
SHOWN_FIELDS = ("session", "title", "cwd", "state", "cost_usd", "clients", "last_seq")
LINK_KEY: web.AppKey[RequestsLink] = web.AppKey("requests", RequestsLink)


def summary(item: dict[str, Any]) -> dict[str, Any]:
    shown = {key: item.get(key) for key in SHOWN_FIELDS}
    shown["mode"] = (item.get("options") or {}).get("mode") or "ask"
    return shown


def session_id(request: web.Request) -> str:
    session = request.match_info.get("session", "")
    if not SESSION_ID.fullmatch(session):
        raise _fail(400, "that is not a session id")
    return session


async def call(request: web.Request, method: str, params: dict[str, Any] | None = None) -> Any:
    try:
        return await request.app[LINK_KEY].call(method, params)
    except DaemonUnreachable:
        raise _fail(503, UNREACHABLE) from None
    except errors.SessionNotFound as exc:
        raise _fail(404, exc.message) from None
    except errors.InvalidParams as exc:
        raise _fail(400, exc.message) from None
    except errors.RpcError as exc:
        raise _fail(409, exc.message) from None


async def sessions(request: web.Request) -> web.Response:
    listed = await call(request, methods.SESSION_LIST)
    return web.json_response({"sessions": [summary(s) for s in listed.get("sessions", [])]})


async def submit(request: web.Request) -> web.Response:
    session = session_id(request)
    text = str((await _body(request)).get("text") or "").strip()
    if not text:
        raise _fail(400, "the task is empty")
    if text.startswith("/"):
        return await _slash(request, session, text)
    result = await call(request, methods.SESSION_SUBMIT, {"session": session, "text": text})
    return web.json_response({"turn": result.get("turn"), "queued": result.get("queued")})


async def _slash(request: web.Request, session: str, text: str) -> web.Response:
    word, _, rest = text.partition(" ")
    if word == "/cancel":
        return await _cancel(request, session)
    if word == "/undo":
        return await _undo(request, session)
    if word == "/mode":
        return await _mode(request, session, rest.strip())
    raise _fail(400, f"{word} is a terminal command; here: /cancel, /undo, /mode NAME")


async def cancel(request: web.Request) -> web.Response:
    return await _cancel(request, session_id(request))


async def _cancel(request: web.Request, session: str) -> web.Response:
    result = await call(request, methods.SESSION_CANCEL, {"session": session})
    return web.json_response({"cancelled": bool(result.get("cancelled"))})


async def undo(request: web.Request) -> web.Response:
    return await _undo(request, session_id(request))


async def _undo(request: web.Request, session: str) -> web.Response:
    result = await call(request, methods.SESSION_UNDO, {"session": session})
    return web.json_response(
        {
            "turn": result.get("turn"),
            "restored": result.get("restored", []),
            "skipped": result.get("skipped", []),
        }
    )


async def mode(request: web.Request) -> web.Response:
    session = session_id(request)
    return await _mode(request, session, str((await _body(request)).get("mode") or ""))


async def _mode(request: web.Request, session: str, word: str) -> web.Response:
    chosen = mode_named(word)
    if chosen is None:
        raise _fail(400, "the mode is one of ask, accept-edits, read-only")
    result = await call(request, methods.SESSION_CONFIGURE, {"session": session, "mode": chosen})
    return web.json_response({"mode": (result.get("options") or {}).get("mode", chosen)})


async def approve(request: web.Request) -> web.Response:
    """An approval's answer, idempotent by its id (requests_link.py): the page may send
    it again after a dropped network and learns whether it counted."""
    session = session_id(request)
    body = await _body(request)
    asked = str(body.get("request") or "")
    decision = str(body.get("decision") or "")
    reason = str(body.get("reason") or "")[:4000]
    if not REQUEST_ID.fullmatch(asked):
        raise _fail(400, "that is not an approval id")
    if decision not in DECISIONS:
        raise _fail(400, f"the decision is one of {', '.join(DECISIONS)}")
    try:
        outcome = await request.app[LINK_KEY].answer(session, asked, decision, reason)
    except DaemonUnreachable:
        raise _fail(503, UNREACHABLE) from None
    return web.json_response(outcome)


async def _body(request: web.Request) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise _fail(415, "send JSON")
    try:
        body = await request.json()
    except ValueError:
        raise _fail(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise _fail(400, "the body must be a JSON object")
    return body


_ERRORS: dict[int, type[web.HTTPException]] = {
    400: web.HTTPBadRequest,
    404: web.HTTPNotFound,
    409: web.HTTPConflict,
    415: web.HTTPUnsupportedMediaType,
    503: web.HTTPServiceUnavailable,
}


def _fail(status: int, message: str) -> web.HTTPException:
    return _ERRORS[status](text=json.dumps({"error": message}), content_type="application/json")
