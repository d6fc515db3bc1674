"""What several handler modules look up from a request: its session and a profile.

Each raises the error a client can act on: `SessionNotFound` for an unknown
session id, `InvalidParams` for a provider the workspace's config does not have.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.config.loader import Config, with_model
from coding_harness.daemon.config.profiles import ConfigError, ProviderProfile
from coding_harness.daemon.methods.params import text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors


def session_of(parts: MethodParts, session_id: Any) -> Session:
    session = parts.sessions.get(text("session", session_id))
    if session is None:
        raise errors.SessionNotFound(f"no session {session_id!r}; `harness sessions` lists them")
    return session


def profile_of(config: Config, name: str | None) -> ProviderProfile:
    """The named profile (or the default), or InvalidParams saying what is configured."""
    try:
        return config.profile(name)
    except ConfigError as exc:
        raise errors.InvalidParams(str(exc)) from None


def session_profile(parts: MethodParts, session: Session) -> ProviderProfile:
    """The profile the session's next turn would use, its model choice applied."""
    config = parts.configs.get(session.cwd)
    return with_model(profile_of(config, session.provider), session.model)
