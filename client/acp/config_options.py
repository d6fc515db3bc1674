"""The session's model as an ACP config option: a select over the configured profiles.

An editor shows it as a model picker. Choosing a value is `provider.use` (the
profile, with its own model), exactly what `/provider NAME` does in the REPL,
so every client of the session sees the change as a notice. Permission modes
will join as a second option once the daemon has them.
"""

from __future__ import annotations

from typing import Any

from acp import schema

from coding_harness.client.acp.bridge import Bridge
from coding_harness.client.acp.peer import INVALID_PARAMS, RpcFailure
from coding_harness.protocol import methods

MODEL = "model"
Option = schema.SessionConfigOptionSelect | schema.SessionConfigOptionBoolean


async def config_options(bridge: Bridge, session: str) -> list[Option]:
    """The options as they stand for `session` (none when no profile is configured)."""
    listing = await bridge.ask_daemon(methods.PROVIDER_LIST, {"session": session})
    profiles = [p for p in listing.get("providers", []) if isinstance(p, dict) and p.get("name")]
    active = listing.get("active")
    if not profiles or not isinstance(active, str):
        return []
    choices = [
        schema.SessionConfigSelectOption(
            value=str(p["name"]),
            name=f"{p['name']} ({p.get('model') or 'its default model'})",
        )
        for p in profiles
    ]
    select = schema.SessionConfigOptionSelect(
        type="select",
        id=MODEL,
        name="Model",
        category="model",
        description="the provider profile the next turn uses",
        current_value=active,
        options=choices,
    )
    return [select]


async def set_config_option(bridge: Bridge, params: dict[str, Any]) -> Any:
    request = schema.SetSessionConfigOptionSelectRequest.model_validate(params)
    bridge.view(request.session_id)
    if request.config_id != MODEL:
        raise RpcFailure(INVALID_PARAMS, f"no config option {request.config_id!r}; try {MODEL!r}")
    await bridge.ask_daemon(
        methods.PROVIDER_USE, {"session": request.session_id, "name": request.value}
    )
    options = await config_options(bridge, request.session_id)
    response = schema.SetSessionConfigOptionResponse(config_options=options)
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)
