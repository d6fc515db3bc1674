"""Checks for request parameters that signature binding cannot make.

Each raises `InvalidParams` (or `PeerRefused`, `ShuttingDown`) with a message
naming the parameter, so a client sees what to fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from coding_harness.protocol import errors

from ..connection import Connection

if TYPE_CHECKING:
    from ..app import Daemon


def text(name: str, value: Any, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise errors.InvalidParams(f"{name} must be a non-empty string")
    return value


def optional_text(name: str, value: Any) -> str | None:
    if value is None:
        return None
    return text(name, value)


def env_map(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise errors.InvalidParams("env must map variable names to strings")
    return dict(value)


def options_map(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise errors.InvalidParams("options must be an object")
    return value


def workspace_folder(cwd: str) -> Path:
    folder = Path(cwd)
    if not folder.is_absolute() or not folder.is_dir():
        raise errors.InvalidParams(f"cwd {cwd!r} must be an absolute path to an existing folder")
    return folder.resolve()


def refuse_tool_children(conn: Connection) -> None:
    if conn.is_tool_descendant:
        raise errors.PeerRefused(
            "refused: this process was started by one of the agent's own tools"
        )


def refuse_when_stopping(daemon: Daemon) -> None:
    if daemon.stopping:
        raise errors.ShuttingDown("the daemon is shutting down; run the command again")
