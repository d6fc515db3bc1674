"""`session/prompt` and `session/cancel`, and the commands an editor may offer.

A prompt becomes `session.submit` (with the API keys the session's profiles read,
from the bridge's environment) and is answered when that turn's `turn.finished`
arrives, with the stop reason it implies (a prompt the editor withdraws with
`$/cancel_request` cancels its turn, as `session/cancel` does); a turn that
failed (a model or network error) is answered with an error carrying the
daemon's words. While it runs, its
events reach the editor as updates like any other client's turn. A prompt that
starts with `/compact`, `/summary` or `/SKILL` is that command, as in the REPL.
"""

from __future__ import annotations

import asyncio
from typing import Any

from acp import helpers, schema

from coding_harness.client.acp.bridge import Bridge
from coding_harness.client.acp.daemon_link import submit_keys
from coding_harness.client.acp.peer import INVALID_PARAMS, RpcFailure
from coding_harness.client.acp.prompt_text import UnsupportedContent, prompt_text
from coding_harness.client.acp.translate import SessionView, stop_reason
from coding_harness.protocol import exit_codes, methods

COMMANDS = {
    "compact": "summarise the conversation so far to free the context window",
    "summary": "summarise what this session did (read-only)",
}


async def prompt(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.PromptRequest.model_validate(params)
    view = bridge.view(request.session_id)
    try:
        text = prompt_text(request.prompt, str(view.cwd))
    except UnsupportedContent as exc:
        raise RpcFailure(INVALID_PARAMS, str(exc)) from None
    if not text.strip():
        raise RpcFailure(INVALID_PARAMS, "the prompt is empty")
    _check_encodable(text)
    submit: dict[str, Any] = {"session": view.id, "text": text}
    command, _, rest = text.strip().partition(" ")
    if command == "/compact":
        return await _compact(bridge, view)
    if command == "/summary":
        submit.update(text=rest or "summary", options={"mode": "summary"})
    elif command.startswith("/") and command[1:] in await _skills(bridge, view):
        submit.update(text=rest or command, options={"skill": command[1:]})
    submit["env"] = submit_keys(bridge.key_env.get(view.id))
    view.own_texts.add(submit["text"])
    try:
        answer = await bridge.ask_daemon(methods.SESSION_SUBMIT, submit)
    finally:
        view.own_texts.discard(submit["text"])
    turn = str(answer["turn"])
    view.own_turns.add(turn)
    try:
        finished = await bridge.turns.wait_for(turn, view.id)
    except asyncio.CancelledError:  # `$/cancel_request` on the prompt: as session/cancel
        await asyncio.shield(_cancel_turn(bridge, view.id))
        raise
    if finished.get("exit_code") == exit_codes.MODEL_ERROR and not finished.get("stopped"):
        raise RpcFailure(-32000, str(finished.get("reply") or "the turn failed"))
    return {"stopReason": stop_reason(finished)}


def _check_encodable(text: str) -> None:
    """Refuse text JSON allows but UTF-8 cannot carry: a lone surrogate escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        half = ord(text[exc.start])
        raise RpcFailure(
            INVALID_PARAMS,
            f"the prompt holds an unpaired surrogate (\\u{half:04x}, half of a character such "
            f"as an emoji) at character {exc.start}; send the whole character",
        ) from None


async def cancel(bridge: Bridge, params: dict[str, Any]) -> None:
    request = schema.CancelNotification.model_validate(params)
    if request.session_id in bridge.views:
        await _cancel_turn(bridge, request.session_id)


async def _cancel_turn(bridge: Bridge, session: str) -> None:
    """The session's open questions withdrawn and its turn cancelled."""
    if bridge.approvals is not None:
        await bridge.approvals.withdraw_session(session)
    await bridge.ask_daemon(methods.SESSION_CANCEL, {"session": session})


async def _compact(bridge: Bridge, view: SessionView) -> Any:
    result = await bridge.ask_daemon(methods.SESSION_COMPACT, {"session": view.id}, timeout=600)
    if result.get("compacted"):
        said = (
            f"compacted: {result.get('messages_before')} messages "
            f"({result.get('tokens_before')} tokens) became {result.get('messages_after')} "
            f"({result.get('tokens_after')} tokens)"
        )
    else:
        said = "nothing to compact yet"
    await bridge.send_updates(view.id, [helpers.update_agent_message_text(said)])
    return {"stopReason": "end_turn"}


async def _skills(bridge: Bridge, view: SessionView) -> dict[str, str]:
    listing = await bridge.ask_daemon(methods.SKILLS_LIST, {"session": view.id})
    return {
        str(skill["name"]): str(skill.get("description") or "")
        for skill in listing.get("skills", [])
        if isinstance(skill, dict) and skill.get("name")
    }


async def available_commands(bridge: Bridge, view: SessionView) -> schema.AvailableCommandsUpdate:
    """The commands a prompt may start with: the REPL's that make sense here, and skills."""
    found = {**COMMANDS, **await _skills(bridge, view)}
    commands = [
        schema.AvailableCommand(
            name=name,
            description=description or f"the {name} skill",
            input=schema.AvailableCommandInput(
                root=schema.UnstructuredCommandInput(hint="what to do")
            )
            if name not in COMMANDS
            else None,
        )
        for name, description in found.items()
    ]
    return schema.AvailableCommandsUpdate(
        session_update="available_commands_update", available_commands=commands
    )
