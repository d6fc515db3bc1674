"""What each ACP request does, in terms of the daemon's methods.

`initialize` connects to the daemon (starting it) and says what this agent
offers; `session/new` is `session.create` plus `session.attach`, so the ACP
session id is the daemon's and `harness attach ID` joins the same session;
`session/load` and `session/resume` are `opening.py`'s; `session/list` lists the
daemon's sessions; `session/close` frees the session in this agent (it detaches)
and leaves it in the daemon, listed and loadable (`harness sessions rm` removes
one). Each opened session answers with its permission modes, and
`session/set_mode` switches them (`modes.py`). Prompts are in `prompting.py`.

`usage_update` goes only to an editor that can take it (`sends_usage`): ACP has
no capability for it and SDKs from before its schema refuse it as invalid
params, so it is sent to a client announcing protocol 2 or later, or when the
agent's environment sets `CODING_HARNESS_ACP_USAGE=1` (`0` turns it off).
"""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import UTC, datetime
from typing import Any

from acp import schema

from coding_harness.client.acp import prompting
from coding_harness.client.acp.approvals import Approvals, asks_for_others
from coding_harness.client.acp.bridge import Bridge, Handler
from coding_harness.client.acp.config_options import config_options, set_config_option
from coding_harness.client.acp.daemon_link import open_daemon, session_keys
from coding_harness.client.acp.mcp_servers import hand_over
from coding_harness.client.acp.modes import mode_state
from coding_harness.client.acp.opening import attach_view, introduce, open_session
from coding_harness.client.acp.peer import Peer, RpcFailure, ThenAnswer
from coding_harness.client.acp.relink import keep_linked
from coding_harness.protocol import methods
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import __version__

log = logging.getLogger(__name__)

ACP_VERSION = 1
USAGE_SETTING = "CODING_HARNESS_ACP_USAGE"


def sends_usage(protocol_version: int, env: dict[str, str] | os._Environ[str]) -> bool:
    """Whether to send `usage_update` to a client announcing `protocol_version`."""
    setting = env.get(USAGE_SETTING, "").strip().lower()
    if setting in ("1", "on", "yes", "true"):
        return True
    if setting in ("0", "off", "no", "false"):
        return False
    return protocol_version >= 2


def _wire(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def initialize(bridge: Bridge, params: dict[str, Any]) -> Any:
    try:
        return await _initialize(bridge, params)
    finally:
        bridge.ready.set()


async def _initialize(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.InitializeRequest.model_validate(params)
    if request.client_capabilities is not None:
        bridge.client_capabilities = request.client_capabilities
    fs = bridge.client_capabilities.fs
    bridge.sends_usage = sends_usage(request.protocol_version, os.environ)
    editor = request.client_info.name if request.client_info else "editor"
    if bridge.daemon is None:
        read_files = bool(fs and fs.read_text_file)
        write_files = bool(fs and fs.write_text_file)

        async def connect() -> Peer:
            return await open_daemon(
                bridge.from_daemon, editor=editor, read_files=read_files, write_files=write_files
            )

        try:
            bridge.daemon = await connect()
        except DaemonUnreachable as exc:
            raise RpcFailure(-32603, str(exc)) from None
        assert bridge.editor is not None
        bridge.approvals = Approvals(
            editor=bridge.editor, ask=bridge.ask_daemon, others=asks_for_others(os.environ)
        )
        bridge.watcher = asyncio.ensure_future(keep_linked(bridge, connect))
    capabilities = schema.AgentCapabilities(
        load_session=True,
        prompt_capabilities=schema.PromptCapabilities(
            embedded_context=True, image=False, audio=False
        ),
        mcp_capabilities=schema.McpCapabilities(http=True, sse=False),
        session_capabilities=schema.SessionCapabilities(
            list=schema.SessionListCapabilities(),
            resume=schema.SessionResumeCapabilities(),
            close=schema.SessionCloseCapabilities(),
        ),
    )
    response = schema.InitializeResponse(
        protocol_version=ACP_VERSION,
        agent_capabilities=capabilities,
        auth_methods=await _auth_methods(bridge),
        agent_info=schema.Implementation(
            name="coding-harness", title="coding-harness", version=__version__
        ),
    )
    return _wire(response)


async def _missing_key(bridge: Bridge) -> str | None:
    """The key variable the default profile reads, when neither we nor the daemon have it."""
    listing = await bridge.ask_daemon(methods.PROVIDER_LIST, {})
    for profile in listing.get("providers", []) if isinstance(listing, dict) else []:
        if not isinstance(profile, dict) or not profile.get("active"):
            continue
        variable = profile.get("api_key_env")
        if isinstance(variable, str) and profile.get("key_present") is False:
            return None if os.environ.get(variable) else variable
    return None


async def _auth_methods(bridge: Bridge) -> list[Any]:
    variable = await _missing_key(bridge)
    if variable is None:
        return []
    method = schema.EnvVarAuthMethod(
        type="env_var",
        id=f"env:{variable}",
        name=f"Set {variable}",
        description=f"The model profile reads its API key from {variable}; set it in the "
        "environment the editor starts `harness acp` with, then restart the agent.",
        vars=[schema.AuthEnvVar(name=variable)],
    )
    return [method]


async def authenticate(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.AuthenticateRequest.model_validate(params)
    variable = request.method_id.removeprefix("env:")
    if request.method_id.startswith("env:") and not os.environ.get(variable):
        raise RpcFailure(
            -32000,
            f"{variable} is not set in the environment of `harness acp`; add it to the "
            "agent's env in the editor's settings (or export it before starting the editor)",
        )
    return {}


async def new_session(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.NewSessionRequest.model_validate(params)
    create = {"cwd": request.cwd, "env": session_keys(request.cwd)}
    created = await bridge.ask_daemon(methods.SESSION_CREATE, create)
    session = str(created["session"])
    bridge.key_env[session] = list(created.get("key_env") or [])
    view, _ = await attach_view(bridge, session, str(created.get("cwd") or request.cwd))
    notes = [str(problem) for problem in created.get("config_problems") or []]
    if created.get("notice"):
        notes.append(str(created["notice"]))
    notes.extend(await hand_over(bridge, session, request.mcp_servers))
    options = await config_options(bridge, session)
    response = schema.NewSessionResponse(
        session_id=session, config_options=options or None, modes=mode_state(created.get("mode"))
    )
    return ThenAnswer(_wire(response), lambda: introduce(bridge, view, notes))


async def load_session(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.LoadSessionRequest.model_validate(params)
    session = request.session_id
    view, modes, notes = await open_session(bridge, session, request.cwd, with_history=True)
    notes.extend(await hand_over(bridge, session, request.mcp_servers))
    options = await config_options(bridge, session) or None
    response = schema.LoadSessionResponse(config_options=options, modes=modes)
    return ThenAnswer(_wire(response), lambda: introduce(bridge, view, notes))


async def resume_session(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.ResumeSessionRequest.model_validate(params)
    session = request.session_id
    view, modes, notes = await open_session(bridge, session, request.cwd, with_history=False)
    notes.extend(await hand_over(bridge, session, request.mcp_servers))
    options = await config_options(bridge, session) or None
    response = schema.ResumeSessionResponse(config_options=options, modes=modes)
    return ThenAnswer(_wire(response), lambda: introduce(bridge, view, notes))


async def set_mode(bridge: Bridge, params: dict[str, Any]) -> Any:
    """`session.configure {mode}`; the editor hears the change as `current_mode_update`."""
    request = schema.SetSessionModeRequest.model_validate(params)
    bridge.view(request.session_id)
    change = {"session": request.session_id, "mode": request.mode_id}
    await bridge.ask_daemon(methods.SESSION_CONFIGURE, change)
    return _wire(schema.SetSessionModeResponse())


async def list_sessions(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.ListSessionsRequest.model_validate(params)
    listing = await bridge.ask_daemon(methods.SESSION_LIST, {})
    sessions = [
        schema.SessionInfo(
            session_id=str(row["session"]),
            cwd=str(row.get("cwd", "")),
            updated_at=_iso(row.get("last_activity")),
        )
        for row in listing.get("sessions", [])
        if isinstance(row, dict) and (request.cwd is None or row.get("cwd") == request.cwd)
    ]
    return _wire(schema.ListSessionsResponse(sessions=sessions))


def _iso(when: Any) -> str | None:
    if not isinstance(when, (int, float)):
        return None
    return datetime.fromtimestamp(when, tz=UTC).isoformat()


async def close_session(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.CloseSessionRequest.model_validate(params)
    session = request.session_id
    bridge.view(session)
    if bridge.approvals is not None:
        await bridge.approvals.withdraw_session(session)
    await bridge.ask_daemon(methods.SESSION_DETACH, {"session": session})
    bridge.views.pop(session, None)
    return {}


REQUESTS: dict[str, Handler] = {
    "initialize": initialize,
    "authenticate": authenticate,
    "session/new": new_session,
    "session/load": load_session,
    "session/resume": resume_session,
    "session/list": list_sessions,
    "session/close": close_session,
    "session/prompt": prompting.prompt,
    "session/set_config_option": set_config_option,
    "session/set_mode": set_mode,
}
NOTIFICATIONS: dict[str, Handler] = {"session/cancel": prompting.cancel}
