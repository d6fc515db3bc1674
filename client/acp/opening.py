"""Opening a daemon session in the editor: `session/new`'s attach, `session/load`, `session/resume`.

A session is shown under its own folder, whatever `cwd` the editor names (an
editor opening it from another folder is told so in a thought). `session/load`
replays the stored conversation first; both it and `session/resume` attach with
`since_seq`, from the running turn's `turn.started` when a turn runs, so the
editor sees that turn's task and what it streamed so far, once, and the events
that arrive meanwhile wait until the replay is out. The stored history holds only
finished turns: when one finishes while the history is read, it is read again.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from acp import helpers, schema

from coding_harness.client.acp import prompting
from coding_harness.client.acp.bridge import Bridge
from coding_harness.client.acp.modes import mode_state, summary_mode
from coding_harness.client.acp.peer import RpcFailure
from coding_harness.client.acp.translate import SessionView
from coding_harness.protocol import methods
from coding_harness.protocol.history_pages import join_page, next_page_params

log = logging.getLogger(__name__)

SETTLE_TRIES = 3


async def attach_view(
    bridge: Bridge, session: str, cwd: str, since: int | None = None
) -> tuple[SessionView, schema.SessionModeState]:
    """The session attached (replaying from `since`) and its view kept; its modes."""
    params: dict[str, Any] = {"session": session}
    if since is not None:
        params["since_seq"] = since
    view = SessionView(session, cwd)
    bridge.views[session] = view  # replayed events find it
    try:
        summary = await bridge.ask_daemon(methods.SESSION_ATTACH, params)
    except RpcFailure:
        bridge.views.pop(session, None)
        raise
    view.last_seq = max(view.last_seq, since or int(summary.get("last_seq") or 0))
    try:
        context = await bridge.ask_daemon(methods.SESSION_CONTEXT, {"session": session})
        view.context_size = int(context.get("context_limit") or 0)
    except (RpcFailure, TypeError, ValueError) as exc:
        log.info("no context size for %s: %s", session, exc)
    return view, mode_state(summary_mode(summary))


async def open_session(
    bridge: Bridge, session: str, asked_cwd: str, *, with_history: bool
) -> tuple[SessionView, schema.SessionModeState, list[str]]:
    """`session/load` (with the history) or `session/resume`: the view, its modes, and
    what to tell the editor."""
    bridge.held[session] = []  # live events wait until the replay is out
    try:
        row, messages = await _settled(bridge, session, with_history)
        own_cwd = str(row.get("cwd") or asked_cwd)
        turn_seq = row.get("turn_seq")
        last_seq = row.get("last_seq")
        since = (
            turn_seq - 1
            if isinstance(turn_seq, int)
            else (last_seq if isinstance(last_seq, int) else None)
        )
        view, modes = await attach_view(bridge, session, own_cwd, since)
        await bridge.send_updates(session, list(view.replay(messages)))
    finally:
        held = bridge.held.pop(session, [])
    for event in held:
        await bridge.deliver(event)
    notes = []
    if _differ(own_cwd, asked_cwd):
        notes.append(
            f"this session works in {own_cwd}, not in {asked_cwd}: its files and paths "
            f"are under {own_cwd}"
        )
    return view, modes, notes


async def _settled(
    bridge: Bridge, session: str, with_history: bool
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The session's row and its stored conversation, read while no turn ended."""
    row = await _row(bridge, session)
    messages: list[dict[str, Any]] = []
    for _ in range(SETTLE_TRIES if with_history else 0):
        messages = await history(bridge, session)
        again = await _row(bridge, session)
        if (again.get("turn_seq"), again.get("messages")) == (
            row.get("turn_seq"),
            row.get("messages"),
        ):
            break
        row = again
    return row, messages


async def _row(bridge: Bridge, session: str) -> dict[str, Any]:
    listing = await bridge.ask_daemon(methods.SESSION_LIST, {})
    rows = listing.get("sessions", []) if isinstance(listing, dict) else []
    return next((r for r in rows if isinstance(r, dict) and r.get("session") == session), {})


def _differ(own: str, asked: str) -> bool:
    if not asked:
        return False
    try:
        return Path(own).resolve() != Path(asked).resolve()
    except OSError:
        return own != asked


async def history(bridge: Bridge, session: str) -> list[dict[str, Any]]:
    """The whole stored conversation, page by page."""
    messages: list[dict[str, Any]] = []
    params: dict[str, Any] | None = {"session": session}
    while params is not None:
        page = await bridge.ask_daemon(methods.SESSION_HISTORY, params)
        join_page(messages, page)
        params = next_page_params(session, page, len(messages))
    return messages


async def introduce(bridge: Bridge, view: SessionView, notes: list[str]) -> None:
    """After the answer that opened a session: its commands, and anything to say."""
    await bridge.send_updates(view.id, [await prompting.available_commands(bridge, view)])
    if notes:
        text = "".join(f"[{note}]\n" for note in notes)
        await bridge.send_updates(view.id, [helpers.update_agent_thought_text(text)])
