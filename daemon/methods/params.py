"""Checks for request parameters that signature binding cannot make.

Each raises `InvalidParams` (or `PeerRefused`, `ShuttingDown`) with a message
naming the parameter, so a client sees what to fix. Every string a request
carries into a session (its text, options, environment) must be valid
Unicode: JSON can spell a lone surrogate (`"\\ud800"`), which no file, store or
model request can hold, so it is refused here with "invalid text" (-32602)
before anything starts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from coding_harness.daemon.server.connection import Connection
from coding_harness.protocol import errors


def text(name: str, value: Any, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise errors.InvalidParams(f"{name} must be a non-empty string")
    return valid_text(name, value)


def flag(name: str, value: Any) -> bool:
    """A true/false param; absent is false."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise errors.InvalidParams(f"{name} must be true or false")
    return value


def valid_text(name: str, value: str) -> str:
    """`value`, or InvalidParams when it holds a lone surrogate (not valid Unicode)."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise errors.InvalidParams(
            f"invalid text in {name}: a lone surrogate (U+{ord(value[exc.start]):04X}) at "
            f"character {exc.start} is not valid Unicode; send UTF-8 text"
        ) from None
    return value


def _check_strings(name: str, value: Any) -> None:
    """Every string inside `value` (keys included) is valid text; no recursion, so
    any depth the JSON decoder accepted is fine."""
    stack: list[tuple[str, Any]] = [(name, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            valid_text(where, item)
        elif isinstance(item, dict):
            for key, inner in item.items():
                valid_text(where, str(key))
                stack.append((f"{where}.{key}", inner))
        elif isinstance(item, list):
            stack.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))


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
    _check_strings("env", value)
    return dict(value)


def options_map(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise errors.InvalidParams("options must be an object")
    _check_strings("options", value)
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


def refuse_when_stopping(stopping: Callable[[], bool]) -> None:
    if stopping():
        raise errors.ShuttingDown("the daemon is shutting down; run the command again")
