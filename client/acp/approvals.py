"""Approvals as ACP permission requests, raced against every other client.

An `approval.requested` event becomes `session/request_permission` to the
editor, naming the tool call it belongs to and the diff it would write. The
first answer wins, wherever it comes from: when the editor answers, the bridge
sends `approval.respond` (a -32011 means a terminal was quicker, which is fine);
when `approval.resolved` arrives first (a terminal answered), the editor's
request is withdrawn with `$/cancel_request` and the tool call shows the
outcome. `allow_always` is offered when the daemon names the allow-list entry
an "always" means (`allow`: the program and subcommand, `uv run`); it answers
yes and adds that entry to the session's allow-list (`/allow-cmd uv run`), so
the daemon asks no more, and this bridge answers the same command yes from then
on. An MCP call's entry is its tool (`mcp__SERVER__TOOL`); an approval without an
entry (build files changed under `make`) is asked every time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from acp import helpers, schema

from coding_harness.client.acp.peer import Peer, PeerClosed, RpcFailure
from coding_harness.client.acp.translate import SessionView
from coding_harness.protocol import methods

log = logging.getLogger(__name__)

REQUEST_PERMISSION = "session/request_permission"
SESSION_UPDATE = "session/update"
ALLOW, ALWAYS, REJECT = "allow", "allow_always", "reject"


@dataclass(kw_only=True, slots=True)
class _Asking:
    editor_id: int | str
    session: str
    call: str


@dataclass(kw_only=True, slots=True)
class Approvals:
    editor: Peer
    ask: Callable[[str, dict[str, Any]], Awaitable[Any]]  # a request to the daemon
    asking: dict[str, _Asking] = field(default_factory=dict)  # daemon request id -> question
    resolved: set[str] = field(default_factory=set)
    always: dict[str, set[str]] = field(default_factory=dict)  # session -> command summaries

    async def requested(self, view: SessionView, data: dict[str, Any]) -> None:
        """Ask the editor; pass its answer on unless someone else answered first."""
        request = str(data.get("request"))
        if request in self.resolved or request in self.asking:
            return
        summary = str(data.get("summary", ""))
        entry = _allow_entry(data)
        if entry and summary in self.always.get(view.id, set()):
            await self._respond(view.id, request, "yes")
            return
        call = view.last_call or request
        params = _permission_params(view, call, data)
        editor_id, answer = self.editor.start_request(REQUEST_PERMISSION, params)
        self.asking[request] = _Asking(editor_id=editor_id, session=view.id, call=call)
        try:
            outcome = await answer
        except (RpcFailure, PeerClosed, asyncio.CancelledError) as exc:
            log.debug("permission request %s ended without an answer: %r", request, exc)
            return
        finally:
            self.asking.pop(request, None)
        decision = _decision(outcome)
        if decision is None:  # the editor cancelled (its prompt was cancelled): others decide
            return
        if decision == ALWAYS and entry:
            await self._allow_always(view.id, summary, entry)
        await self._respond(view.id, request, "no" if decision == REJECT else "yes")

    async def resolved_elsewhere(self, data: dict[str, Any]) -> None:
        """`approval.resolved`: withdraw the editor's question if it is still open."""
        request = str(data.get("request"))
        self.resolved.add(request)
        asking = self.asking.pop(request, None)
        if asking is None:
            return
        with contextlib.suppress(PeerClosed):
            await self.editor.cancel_outgoing(asking.editor_id)
            status: schema.ToolCallStatus = (
                "in_progress" if data.get("decision") in ("yes", "revert", "always") else "failed"
            )
            update = helpers.update_tool_call(asking.call, status=status)
            await self.editor.notify(SESSION_UPDATE, _notification(asking.session, update))

    async def withdraw_session(self, session: str) -> None:
        """The session's prompt was cancelled: its open questions are withdrawn."""
        for request, asking in list(self.asking.items()):
            if asking.session == session:
                self.asking.pop(request, None)
                with contextlib.suppress(PeerClosed):
                    await self.editor.cancel_outgoing(asking.editor_id)

    async def _respond(self, session: str, request: str, decision: str) -> None:
        params = {"request": request, "decision": decision, "session": session}
        try:
            await self.ask(methods.APPROVAL_RESPOND, params)
        except RpcFailure as failure:  # answered elsewhere first (-32011): that answer stands
            log.info("approval %s: %s", request, failure.message)

    async def _allow_always(self, session: str, summary: str, entry: str) -> None:
        self.always.setdefault(session, set()).add(summary)
        with contextlib.suppress(RpcFailure):
            params = {"session": session, "allow_command": entry}
            await self.ask(methods.SESSION_CONFIGURE, params)


def _allow_entry(data: dict[str, Any]) -> str:
    """What "always" adds to the allow-list (`uv run`), as the daemon named it; "" when
    the approval offers no "always". Never a word of the summary, which is prose."""
    entry = data.get("allow")
    if data.get("kind") != "command" or not isinstance(entry, str):
        return ""
    return " ".join(entry.split())


def _permission_params(view: SessionView, call: str, data: dict[str, Any]) -> dict[str, Any]:
    is_command = data.get("kind") == "command"
    always = bool(_allow_entry(data))
    path = str(data.get("path", ""))
    content: (
        list[
            schema.ContentToolCallContent
            | schema.FileEditToolCallContent
            | schema.TerminalToolCallContent
        ]
        | None
    ) = None
    if data.get("diff"):
        content = [view.diff_content(path, str(data["diff"]))]
    options = [schema.PermissionOption(option_id=ALLOW, name="Allow", kind="allow_once")]
    if always:
        options.append(
            schema.PermissionOption(option_id=ALWAYS, name="Always allow", kind="allow_always")
        )
    options.append(schema.PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    tool_call = schema.ToolCallUpdate(
        tool_call_id=call,
        title=str(data.get("summary", "")) or None,
        kind="execute" if is_command else "edit",
        status="pending",
        content=content,
        locations=[schema.ToolCallLocation(path=view.absolute(path))] if path else None,
    )
    request = schema.RequestPermissionRequest(
        session_id=view.id, tool_call=tool_call, options=options
    )
    return request.model_dump(mode="json", by_alias=True, exclude_none=True)


def _decision(outcome: Any) -> str | None:
    """The option the editor chose, or None when it cancelled."""
    try:
        response = schema.RequestPermissionResponse.model_validate(outcome)
    except ValueError:
        log.warning("the editor answered a permission request with %r; taken as no", outcome)
        return REJECT
    if isinstance(response.outcome, schema.DeniedOutcome):
        return None
    chosen = response.outcome.option_id
    return chosen if chosen in (ALLOW, ALWAYS) else REJECT


def _notification(session: str, update: Any) -> dict[str, Any]:
    note = schema.SessionNotification(session_id=session, update=update)
    return note.model_dump(mode="json", by_alias=True, exclude_none=True)
