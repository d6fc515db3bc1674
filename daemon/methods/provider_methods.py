"""`daemon.reload`, `provider.list`, `provider.use` and `model.use`.

A reload forgets the loaded configs, reads them again for the daemon's home
and every session's workspace, and retires only the pooled connections whose
profile (name and endpoint origin) is no longer configured; sessions and
the other connections stay. A turn in flight keeps the profile it resolved
when it started; `provider.use` and `model.use` take effect at the next turn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.daemon.config.loader import Config, ConfigError, ProviderProfile, with_model
from coding_harness.daemon.methods.params import (
    optional_text,
    refuse_tool_children,
    text,
    workspace_folder,
)
from coding_harness.daemon.methods.session_methods import session_of
from coding_harness.daemon.providers.pool import pool_key
from coding_harness.daemon.server.connection import Connection
from coding_harness.daemon.server.rpc import MethodTable
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors
from coding_harness.protocol import methods as m
from coding_harness.protocol.methods import EventKind

if TYPE_CHECKING:
    from coding_harness.daemon.app import Daemon


async def reload_configuration(daemon: Daemon) -> dict[str, Any]:
    """Reload every config in use and retire connections nobody is configured for."""
    daemon.reload()
    folders = {daemon.home, *(session.cwd for session in daemon.sessions.all())}
    configs = [daemon.configs.get(folder) for folder in sorted(folders)]
    keep = {pool_key(profile) for config in configs for profile in config.providers.values()}
    retired = await daemon.pool.prune(keep)
    problems: list[str] = []
    for config in configs:
        problems.extend(daemon.configs.unreported(config))
    return {
        "reloaded": True,
        "workspaces": len(configs),
        "closed_connections": len(retired),
        "problems": problems,
    }


def register(table: MethodTable, daemon: Daemon) -> None:
    @table.register(m.DAEMON_RELOAD)
    async def daemon_reload(conn: Connection) -> dict[str, Any]:
        return await reload_configuration(daemon)

    @table.register(m.PROVIDER_LIST)
    async def provider_list(
        conn: Connection, session: Any = None, cwd: Any = None
    ) -> dict[str, Any]:
        target = session_of(daemon, session) if session is not None else None
        config = daemon.configs.get(_folder(daemon, target, cwd))
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

    @table.register(m.PROVIDER_USE)
    async def provider_use(conn: Connection, session: Any, name: Any) -> dict[str, Any]:
        refuse_tool_children(conn)
        target = session_of(daemon, session)
        profile = _profile(daemon.configs.get(target.cwd), text("name", name))
        target.provider, target.model = profile.name, None
        return _switched(target, profile)

    @table.register(m.MODEL_USE)
    async def model_use(conn: Connection, session: Any, model: Any) -> dict[str, Any]:
        refuse_tool_children(conn)
        target = session_of(daemon, session)
        profile = _profile(daemon.configs.get(target.cwd), target.provider)
        target.model = optional_text("model", model)
        return _switched(target, with_model(profile, target.model))


def _folder(daemon: Daemon, session: Session | None, cwd: Any) -> Path:
    """The workspace whose config to read: the session's, `cwd`, or the home folder."""
    if session is not None:
        return session.cwd
    if cwd is not None:
        return workspace_folder(text("cwd", cwd))
    return daemon.home


def _profile(config: Config, name: str | None) -> ProviderProfile:
    try:
        return config.profile(name)
    except ConfigError as exc:
        raise errors.InvalidParams(str(exc)) from None


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
    session.emit(
        EventKind.NOTICE,
        {"message": f"next turns use {profile.name} · {profile.model} ({profile.endpoint})"},
    )
    return {
        "session": session.id,
        "provider": profile.name,
        "model": profile.model,
        "endpoint": profile.endpoint,
    }
