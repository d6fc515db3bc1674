"""`daemon.reload`, `provider.list`, `provider.use` and `model.use`.

A reload is the daemon's own (`Daemon.reload_configuration`, which SIGHUP runs
too): it reads the configs again and retires only the pooled connections nobody
is configured for. A turn in flight keeps the profile it resolved when it
started; `provider.use` and `model.use` take effect at the next turn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from coding_harness.daemon.config.loader import Config, with_model
from coding_harness.daemon.config.profiles import ConfigError, ProviderProfile
from coding_harness.daemon.methods.lookup import profile_of, session_of
from coding_harness.daemon.methods.params import (
    optional_text,
    refuse_tool_children,
    text,
    workspace_folder,
)
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import Handler
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind


async def daemon_reload(parts: MethodParts, conn: Connection) -> dict[str, Any]:
    return await parts.reload()


async def provider_list(
    parts: MethodParts, conn: Connection, session: Any = None, cwd: Any = None
) -> dict[str, Any]:
    target = session_of(parts, session) if session is not None else None
    config = parts.configs.get(_folder(parts, target, cwd))
    active = _active(config, target)
    return {
        "providers": [
            _describe(profile, config, target, active)
            for _, profile in sorted(config.providers.items())
        ],
        "default": config.default_provider,
        "active": active.name if active else None,
        "model": active.model if active else None,
        "problems": list(config.problems),
    }


async def provider_use(
    parts: MethodParts, conn: Connection, session: Any, name: Any
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    profile = profile_of(parts.configs.get(target.cwd), text("name", name))
    target.provider, target.model = profile.name, None
    return _switched(target, profile)


async def model_use(
    parts: MethodParts, conn: Connection, session: Any, model: Any
) -> dict[str, Any]:
    refuse_tool_children(conn)
    target = session_of(parts, session)
    profile = profile_of(parts.configs.get(target.cwd), target.provider)
    target.model = optional_text("model", model)
    return _switched(target, with_model(profile, target.model))


def _folder(parts: MethodParts, session: Session | None, cwd: Any) -> Path:
    """The workspace whose config to read: the session's, `cwd`, or the home folder."""
    if session is not None:
        return session.cwd
    if cwd is not None:
        return workspace_folder(text("cwd", cwd))
    return parts.home


def _active(config: Config, session: Session | None) -> ProviderProfile | None:
    """The profile a session's next turn would use, or the default without one."""
    try:
        profile = config.profile(session.provider if session else None)
    except ConfigError:
        return None
    return with_model(profile, session.model if session else None)


def _describe(
    profile: ProviderProfile,
    config: Config,
    session: Session | None,
    active: ProviderProfile | None,
) -> dict[str, Any]:
    key_env = profile.api_key_env
    key_present = None
    if key_env:
        sent = session.key_env.get(key_env) if session else None
        key_present = bool(sent or os.environ.get(key_env))
    return {
        "name": profile.name,
        "type": profile.type,
        "model": profile.model,
        "endpoint": profile.endpoint,
        "api_key_env": key_env,
        "key_present": key_present,
        "pricing": dict(profile.pricing) if profile.pricing is not None else None,
        "default": profile.name == config.default_provider,
        "active": active is not None and active.name == profile.name,
    }


def _switched(session: Session, profile: ProviderProfile) -> dict[str, Any]:
    """Tell every attached client, remember the choice, and answer."""
    if session.store is not None:
        session.store.update_session(session.id, provider=session.provider, model=session.model)
    said = f"next turns use {profile.name} · {profile.model} ({profile.endpoint})"
    # The profile and model too, so an editor's model picker can follow the change.
    session.emit(
        EventKind.NOTICE, {"message": said, "provider": profile.name, "model": profile.model}
    )
    return {
        "session": session.id,
        "provider": profile.name,
        "model": profile.model,
        "endpoint": profile.endpoint,
    }


HANDLERS: dict[str, Handler] = {
    m.DAEMON_RELOAD: daemon_reload,
    m.PROVIDER_LIST: provider_list,
    m.PROVIDER_USE: provider_use,
    m.MODEL_USE: model_use,
}
