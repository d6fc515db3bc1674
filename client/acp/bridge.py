"""The bridge's state and its two dispatchers: what the editor asks, what the daemon sends.

`Bridge.from_editor` routes each ACP method to its handler (the tables in
`handlers.py`, handed over by `main.py`);
`Bridge.from_daemon` turns each daemon event into `session/update`
notifications for the sessions this editor has open (`mode.changed` as a
`current_mode_update`, `modes.py`; a model change as a `config_option_update`,
`config_options.py`), hands approvals to `Approvals`, and answers
the daemon's `client.read_text_file` by asking the editor for its buffer (and
`client.write_text_file`, an edit of a file it holds unsaved, with
`fs/write_text_file`). ACP's
error codes: -32602 for a bad request, -32002 for an unknown session, -32603
with a message a person can act on for the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acp import schema
from pydantic import ValidationError

from coding_harness.client.acp.approvals import Approvals
from coding_harness.client.acp.config_options import model_changed
from coding_harness.client.acp.modes import mode_update
from coding_harness.client.acp.peer import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    Peer,
    PeerClosed,
    RpcFailure,
)
from coding_harness.client.acp.translate import SessionView, Update
from coding_harness.protocol import exit_codes, methods
from coding_harness.protocol.events import Event, parse_event
from coding_harness.protocol.methods import EventKind

log = logging.getLogger(__name__)

SESSION_UPDATE = "session/update"
READ_TEXT_FILE = "fs/read_text_file"
WRITE_TEXT_FILE = "fs/write_text_file"
RESOURCE_NOT_FOUND = -32002
LOST_TURN = exit_codes.INTERRUPTED
RELINK_WAIT = 20.0  # seconds a request waits for the daemon to answer again
DAEMON_GONE = (
    "the connection to the coding-harness daemon was lost (it stopped or restarted); "
    "restart the agent in the editor, and see `harness daemon logs` if it happens again"
)


def invalid(exc: ValidationError) -> RpcFailure:
    problems = exc.errors()
    if not problems:
        return RpcFailure(INVALID_PARAMS, f"invalid params: {exc}")
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"]) or "params"
    return RpcFailure(INVALID_PARAMS, f"invalid params: {where}: {first['msg']}")


@dataclass(kw_only=True, slots=True)
class Turns:
    """The prompts waiting for their turn to finish, per session."""

    waiting: dict[str, asyncio.Future[dict[str, Any]]] = field(default_factory=dict)
    sessions: dict[str, str] = field(default_factory=dict)  # waiting turn -> its session
    finished: dict[str, dict[str, Any]] = field(default_factory=dict)  # came before the wait

    def wait_for(self, turn: str, session: str) -> asyncio.Future[dict[str, Any]]:
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        early = self.finished.pop(turn, None)
        if early is not None:
            future.set_result(early)
        else:
            self.waiting[turn] = future
            self.sessions[turn] = session
        return future

    def end_lost(self, session: str) -> None:
        """The daemon restarted before it recorded the session's waiting turns: they
        will never finish, so they end as interrupted."""
        for turn, owner in list(self.sessions.items()):
            if owner == session:
                self.finish(turn, {"turn": turn, "exit_code": LOST_TURN, "reply": ""})

    def fail_all(self, failure: RpcFailure) -> None:
        """The daemon went away: no waiting prompt will hear its turn end."""
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(failure)
        self.waiting.clear()
        self.sessions.clear()

    def finish(self, turn: str, data: dict[str, Any]) -> None:
        self.sessions.pop(turn, None)
        future = self.waiting.pop(turn, None)
        if future is None:
            self.finished[turn] = data
            if len(self.finished) > 64:
                self.finished.pop(next(iter(self.finished)))
        elif not future.done():
            future.set_result(data)


Handler = Callable[["Bridge", dict[str, Any]], Awaitable[Any]]


class Bridge:
    def __init__(self, requests: dict[str, Handler], notifications: dict[str, Handler]) -> None:
        self.requests = requests
        self.notifications = notifications
        self.editor: Peer | None = None
        self.daemon: Peer | None = None
        self.approvals: Approvals | None = None
        self.client_capabilities = schema.ClientCapabilities()
        self.views: dict[str, SessionView] = {}
        self.key_env: dict[str, list[str]] = {}  # session -> variables its profiles read
        self.turns = Turns()
        self.held: dict[str, list[Event]] = {}  # events that arrive while a load replays
        self._asking: set[asyncio.Future[None]] = set()
        self.watcher: asyncio.Future[None] | None = None
        self.linked = asyncio.Event()  # clear while a lost daemon connection is being redone
        self.linked.set()
        self.initialize_seen = False
        self.sends_usage = False  # whether the editor takes `usage_update` (handlers.py)
        self.ready = asyncio.Event()  # set once initialize has answered

    # -- the editor's side -----------------------------------------------
    async def from_editor(self, method: str, params: Any, is_notification: bool) -> Any:
        handler = self.requests.get(method)
        if handler is None:
            if is_notification and method in self.notifications:
                try:
                    await self.notifications[method](
                        self, params if isinstance(params, dict) else {}
                    )
                except ValidationError as exc:  # one line: the editor's mistake, not ours
                    log.warning("%s ignored: %s", method, invalid(exc).message)
                return None
            raise RpcFailure(METHOD_NOT_FOUND, f"{method} is not supported by this agent")
        if method == "initialize":
            self.initialize_seen = True
        elif not self.initialize_seen:
            raise RpcFailure(-32000, "send initialize first")
        elif not self.ready.is_set():  # initialize is still connecting: wait for it
            await self.ready.wait()
        if method != "initialize" and self.daemon is None:
            raise RpcFailure(-32000, "initialize failed: the daemon is not connected")
        try:
            return await handler(self, params if isinstance(params, dict) else {})
        except ValidationError as exc:
            raise invalid(exc) from None

    def view(self, session: str) -> SessionView:
        view = self.views.get(session)
        if view is None:
            raise RpcFailure(
                RESOURCE_NOT_FOUND,
                f"session {session} is not open here; use session/load or session/new",
            )
        return view

    async def ask_daemon(self, method: str, params: dict[str, Any], timeout: float = 60) -> Any:  # noqa: ASYNC109
        if not self.linked.is_set():  # the daemon restarted: wait for the new link
            await asyncio.wait_for(self.linked.wait(), RELINK_WAIT)
        assert self.daemon is not None
        try:
            return await self.daemon.request(method, params, timeout=timeout)
        except PeerClosed:
            raise RpcFailure(INTERNAL_ERROR, DAEMON_GONE) from None
        except RpcFailure as failure:
            code = RESOURCE_NOT_FOUND if failure.code == -32010 else failure.code
            raise RpcFailure(code, failure.message, failure.data) from None

    async def send_updates(self, session: str, updates: list[Update]) -> None:
        assert self.editor is not None
        for update in updates:
            if isinstance(update, schema.UsageUpdate) and not self.sends_usage:
                continue
            note = schema.SessionNotification(session_id=session, update=update)
            await self.editor.notify(
                SESSION_UPDATE, note.model_dump(mode="json", by_alias=True, exclude_none=True)
            )

    # -- the daemon's side -----------------------------------------------
    async def from_daemon(self, method: str, params: Any, is_notification: bool) -> Any:
        if method == methods.CLIENT_READ_TEXT_FILE and not is_notification:
            return await self._read_buffer(params)
        if method == methods.CLIENT_WRITE_TEXT_FILE and not is_notification:
            return await self._write_buffer(params)
        if method != methods.EVENT:
            raise RpcFailure(METHOD_NOT_FOUND, f"the bridge does not take {method}")
        event = parse_event({"method": method, "params": params})
        if event is None:
            return None
        held = self.held.get(event.session)
        if held is not None:
            held.append(event)
            return None
        await self.deliver(event)
        return None

    async def deliver(self, event: Event) -> None:
        view = self.views.get(event.session)
        if view is None:
            return
        view.last_seq = max(view.last_seq, event.seq)
        if event.kind == EventKind.APPROVAL_REQUESTED and self.approvals is not None:
            task = asyncio.ensure_future(self.approvals.requested(view, event.data))
            self._asking.add(task)
            task.add_done_callback(self._asking.discard)
            return
        if event.kind == EventKind.APPROVAL_RESOLVED and self.approvals is not None:
            if event.data.get("decision") not in ("yes", "revert") and view.last_call:
                view.failed_calls.add(view.last_call)  # rejected or skipped: it stays failed
            await self.approvals.resolved_elsewhere(event.data)
            return
        if event.kind == EventKind.MODE_CHANGED:
            await self.send_updates(view.id, [mode_update(event.data)])
            return
        if event.kind == EventKind.NOTICE and isinstance(event.data.get("provider"), str):
            await self.send_updates(view.id, await model_changed(self, view, event.data))
            return
        await self.send_updates(view.id, view.updates(event))
        if event.kind == EventKind.TURN_FINISHED:
            self.turns.finish(event.text("turn"), event.data)

    async def _read_buffer(self, params: Any) -> dict[str, Any]:
        """The editor's text of a file (unsaved changes included), for read_file."""
        if not isinstance(params, dict) or self.editor is None:
            return {"content": None}
        fs = self.client_capabilities.fs
        if fs is None or not fs.read_text_file:
            return {"content": None}
        request = schema.ReadTextFileRequest(
            session_id=str(params.get("session")), path=str(params.get("path"))
        )
        answer = await self.editor.request(
            READ_TEXT_FILE, request.model_dump(mode="json", by_alias=True, exclude_none=True), 5
        )
        content = answer.get("content") if isinstance(answer, dict) else None
        return {"content": content if isinstance(content, str) else None}

    async def _write_buffer(self, params: Any) -> dict[str, Any]:
        """An approved edit of a file the editor holds unsaved, handed to the editor."""
        fs = self.client_capabilities.fs
        if not isinstance(params, dict) or self.editor is None or fs is None:
            raise RpcFailure(INVALID_PARAMS, "no editor to write to")
        if not fs.write_text_file:
            raise RpcFailure(METHOD_NOT_FOUND, "the editor does not offer fs/write_text_file")
        request = schema.WriteTextFileRequest(
            session_id=str(params.get("session")),
            path=str(params.get("path")),
            content=str(params.get("content")),
        )
        wire = request.model_dump(mode="json", by_alias=True, exclude_none=True)
        await self.editor.request(WRITE_TEXT_FILE, wire, 10)
        return {}
