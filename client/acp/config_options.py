"""The session's model as an ACP config option: a select over the configured profiles.

An editor shows it as a model picker. Choosing a value is `provider.use` (the
profile, with its own model), exactly what `/provider NAME` does in the REPL,
so every client of the session sees the change as a notice. The notice names
the profile and model, and `model_changed` turns it into a
`config_option_update` for the other editors on the session, so their pickers
follow; a change to the value an editor already shows is not announced to it
(not even as a thought). Permission modes will join as a second option once the
daemon has them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from acp import helpers, schema

from coding_harness.client.acp.peer import INVALID_PARAMS, RpcFailure
from coding_harness.protocol import methods

if TYPE_CHECKING:
    from coding_harness.client.acp.translate import SessionView, Update


class Bridge(Protocol):
    """What the options need of the bridge (`bridge.Bridge`, which imports this module)."""

    views: dict[str, SessionView]

    def view(self, session: str) -> SessionView: ...

    async def ask_daemon(self, method: str, params: dict[str, Any], timeout: float = 60) -> Any: ...  # noqa: ASYNC109


MODEL = "model"
Option = schema.SessionConfigOptionSelect | schema.SessionConfigOptionBoolean


async def config_options(bridge: Bridge, session: str) -> list[Option]:
    """The options as they stand for `session` (none when no profile is configured)."""
    listing = await bridge.ask_daemon(methods.PROVIDER_LIST, {"session": session})
    profiles = [p for p in listing.get("providers", []) if isinstance(p, dict) and p.get("name")]
    active = listing.get("active")
    view = bridge.views.get(session)
    if view is not None and isinstance(active, str):
        view.model_choice = (active, str(listing.get("model") or ""))
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
    view = bridge.view(request.session_id)
    if request.config_id != MODEL:
        raise RpcFailure(INVALID_PARAMS, f"no config option {request.config_id!r}; try {MODEL!r}")
    view.chosen = request.value  # its notice is this editor's own change: not announced back
    try:
        await bridge.ask_daemon(
            methods.PROVIDER_USE, {"session": request.session_id, "name": request.value}
        )
    except BaseException:
        view.chosen = None
        raise
    options = await config_options(bridge, request.session_id)
    response = schema.SetSessionConfigOptionResponse(config_options=options)
    return response.model_dump(mode="json", by_alias=True, exclude_none=True)


async def model_changed(bridge: Bridge, view: SessionView, data: dict[str, Any]) -> list[Update]:
    """A `provider.use` or `model.use` notice as this editor should see it: nothing when
    it names what the editor already shows (or this editor's own choice, whose answer
    carries the options), else the thought and, when the profile changed, the options
    as they now stand."""
    provider, model = str(data.get("provider")), str(data.get("model") or "")
    before = view.model_choice
    if (provider, model) == before or provider == view.chosen:
        view.model_choice, view.chosen = (provider, model), None
        return []
    thought = helpers.update_agent_thought_text(f"\n[{data.get('message', '')}]\n")
    if before is not None and before[0] == provider:
        view.model_choice = (provider, model)
        return [thought]
    options = await config_options(bridge, view.id)
    if not options:
        return [thought]
    update = schema.ConfigOptionUpdate(
        session_update="config_option_update", config_options=options
    )
    return [thought, update]
