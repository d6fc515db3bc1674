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

An editor is asked only about the turns it started itself: an ACP client answers
by its own policy (acpx's --approve-all, an "always allow", a bot), assuming the
question belongs to its prompt, so another client's turn (a terminal's) is never
put to it, and the bridge's own "always" answers never decide one either. The
editor is told, in a thought, that the change waits for another client. Setting
`CODING_HARNESS_ACP_APPROVALS=all` in the agent's environment asks it about every
turn of its sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from acp import helpers, schema

from coding_harness.client.acp.peer import Peer, PeerClosed, RpcFailure
from coding_harness.client.acp.translate import SessionView
from coding_harness.protocol import methods

log = logging.getLogger(__name__)

REQUEST_PERMISSION = "session/request_permission"
OTHERS_SETTING = "CODING_HARNESS_ACP_APPROVALS"  # "all": asked about others' turns too
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
    others: bool = False  # also ask about turns other clients started (an explicit setting)

    async def requested(self, view: SessionView, data: dict[str, Any]) -> None:
        """Ask the editor; pass its answer on unless someone else answered first."""
        request = str(data.get("request"))
        if request in self.resolved or request in self.asking:
            return
        summary = str(data.get("summary", ""))
        own = view.runs_own_turn()
        if not own and not self.others:
            await self._not_asked(view.id, summary)
            return
        entry = _allow_entry(data)
        if own and entry and summary in self.always.get(view.id, set()):
            await self._respond(view.id, request, "yes")
            return
        call = view.last_call or request
        params = _permission_params(view, call, data)
        editor_id, answer = self.editor.start_request(REQUEST_PERMISSION, params)
        self.asking[request] = _Asking(editor_id=editor_id, session=view.id, call=call)
        try:
            outcome = await answer
        except RpcFailure as failure:  # the editor failed the request: as if it cancelled
            log.info("the editor failed permission request %s: %s", request, failure.message)
            outcome = None
        except (PeerClosed, asyncio.CancelledError) as exc:
            log.debug("permission request %s ended without an answer: %r", request, exc)
            return
        finally:
            self.asking.pop(request, None)
        decision = _decision(outcome) if outcome is not None else None
        if decision is None:  # no answer: others decide, or it is a rejection
            await self._unanswered(view.id, request, summary)
            return
        if decision == ALWAYS and entry:
            await self._allow_always(view.id, summary, entry)
        await self._respond(view.id, request, "no" if decision == REJECT else "yes")

    async def _unanswered(self, session: str, request: str, summary: str) -> None:
        """The editor cancelled the question (or failed it) without cancelling its prompt:
        the other clients decide; with none able to, it is a rejection, said so."""
        if request in self.resolved or await self._others_can_answer(session):
            return
        said = (
            f"\n[{summary or 'the change'}: the permission request was cancelled and no "
            "other client can answer, so it is taken as a rejection]\n"
        )
        reason = "the editor cancelled the permission request; taken as a rejection"
        await self._respond(session, request, "no", reason)
        with contextlib.suppress(PeerClosed):
            update = helpers.update_agent_thought_text(said)
            await self.editor.notify(SESSION_UPDATE, _notification(session, update))

    async def _others_can_answer(self, session: str) -> bool:
        """Whether a client that answers every turn (a terminal) is on the session."""
        try:
            listing = await self.ask(methods.SESSION_LIST, {})
        except RpcFailure:
            return False
        rows = listing.get("sessions", []) if isinstance(listing, dict) else []
        row = next((r for r in rows if isinstance(r, dict) and r.get("session") == session), {})
        answerers = row.get("approvers")
        return isinstance(answerers, int) and answerers - (1 if self.others else 0) > 0

    async def _not_asked(self, session: str, summary: str) -> None:
        """Another client's turn waits for an answer: the editor is told, not asked (its
        client may answer by a policy of its own, meant for its own prompts)."""
        said = (
            f"\n[{summary or 'a change'} waits for an answer from the client that started "
            f"this turn (or `harness approve {session}`); this editor is asked only for "
            "its own prompts]\n"
        )
        with contextlib.suppress(PeerClosed):
            update = helpers.update_agent_thought_text(said)
            await self.editor.notify(SESSION_UPDATE, _notification(session, update))

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

    async def _respond(self, session: str, request: str, decision: str, reason: str = "") -> None:
        params = {"request": request, "decision": decision, "session": session}
        if reason:
            params["reason"] = reason
        try:
            await self.ask(methods.APPROVAL_RESPOND, params)
        except RpcFailure as failure:  # answered elsewhere first (-32011): that answer stands
            log.info("approval %s: %s", request, failure.message)

    async def _allow_always(self, session: str, summary: str, entry: str) -> None:
        self.always.setdefault(session, set()).add(summary)
        with contextlib.suppress(RpcFailure):
            params = {"session": session, "allow_command": entry}
            await self.ask(methods.SESSION_CONFIGURE, params)


def asks_for_others(environ: Mapping[str, str]) -> bool:
    """Whether the user chose to be asked, in the editor, about other clients' turns."""
    return environ.get(OTHERS_SETTING, "").strip().lower() == "all"


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
