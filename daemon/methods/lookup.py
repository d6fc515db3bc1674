"""What several handler modules look up from a request: its session and a profile.

Each raises the error a client can act on: `SessionNotFound` for an unknown
session id, `InvalidParams` for a provider the workspace's config does not have
or a session id prefix that fits several sessions. A session is named by its
full id, its short id (the part after the timestamp: `68e7d5` of
`20261205-233521-68e7d5`) or a prefix of either that fits one session only.
"""

from __future__ import annotations

from typing import Any

from coding_harness.daemon.config.loader import Config, with_model
from coding_harness.daemon.config.profiles import ConfigError, ProviderProfile
from coding_harness.daemon.methods.params import text
from coding_harness.daemon.methods.parts import MethodParts
from coding_harness.daemon.sessions.session import Session
from coding_harness.protocol import errors

# An ambiguous prefix's error names at most this many of the sessions it fits.
AMBIGUOUS_SHOWN = 5


def session_of(parts: MethodParts, session_id: Any) -> Session:
    wanted = text("session", session_id)
    session = parts.sessions.get(wanted)
    if session is not None:
        return session
    fits = [s for s in parts.sessions.all() if fits_id(s.id, wanted)]
    if len(fits) == 1:
        return fits[0]
    if fits:
        shown = ", ".join(s.id for s in fits[:AMBIGUOUS_SHOWN])
        raise errors.InvalidParams(
            f"{wanted!r} fits {len(fits)} sessions ({shown}); give more of the id"
        )
    raise errors.SessionNotFound(f"no session {wanted!r}; `harness sessions` lists them")


def fits_id(full: str, wanted: str) -> bool:
    """Whether `wanted` names the session `full`: a prefix of its id or of its short id."""
    return full.startswith(wanted) or short_id(full).startswith(wanted)


def short_id(full: str) -> str:
    """The part of a session id after its timestamp (the whole id when it has none)."""
    return full.rsplit("-", 1)[-1]


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
