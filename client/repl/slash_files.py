"""The files of `/save` and `/load`: writing a conversation out and reading one back.

Every way a path can be bad (a missing folder, a folder, a file that cannot
be read or written, a device, text that is not JSON or holds no message list)
is a `BadFile` whose message is one line naming the path and the problem;
the REPL prints it and stays open.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from coding_harness.client.render.sanitize import one_line
from coding_harness.protocol.config_files import parse_json

# A saved conversation larger than this is not read (the daemon would refuse it anyway).
LOAD_LIMIT_BYTES = 64 * 1024 * 1024


class BadFile(Exception):
    """A path `/save` or `/load` cannot use; the message is one line for the user."""


def user_path(argument: str) -> Path:
    """`argument` with `~` expanded; a `~user` that does not exist is a BadFile."""
    try:
        return Path(argument).expanduser()
    except RuntimeError:
        raise BadFile(f"{shown(argument)}: no such user's home folder") from None


def save_messages(path: Path, messages: list[dict[str, Any]]) -> None:
    """Write `{"messages": [...]}` to `path` (a file there is replaced)."""
    text = json.dumps({"messages": messages}, indent=2, ensure_ascii=False) + "\n"
    try:
        if path.is_dir():
            raise BadFile(f"cannot save to {shown(path)}: it is a folder; name a file in it")
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadFile(f"cannot save to {shown(path)}: {_reason(exc, path)}") from None


def load_messages(path: Path) -> list[Any]:
    """The message list of a file `/save` wrote (or a bare JSON list of messages)."""
    try:
        if path.is_dir():
            raise BadFile(f"cannot load {shown(path)}: it is a folder; name a file in it")
        if path.exists() and not path.is_file():
            raise BadFile(f"cannot load {shown(path)}: not a regular file")
        with path.open("rb") as handle:
            raw = handle.read(LOAD_LIMIT_BYTES + 1)
    except OSError as exc:
        raise BadFile(f"cannot load {shown(path)}: {_reason(exc, path)}") from None
    if len(raw) > LOAD_LIMIT_BYTES:
        raise BadFile(f"cannot load {shown(path)}: larger than {LOAD_LIMIT_BYTES >> 20} MiB")
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise BadFile(f"cannot load {shown(path)}: not JSON ({one_line(str(exc), 120)})") from None
    messages = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(messages, list):
        raise BadFile(f'cannot load {shown(path)}: no "messages" list in it (write one with /save)')
    return messages


def shown(path: Path | str) -> str:
    return one_line(str(path), 200)


def _reason(exc: OSError, path: Path) -> str:
    if isinstance(exc, FileNotFoundError) and not path.parent.is_dir():
        return f"the folder {shown(path.parent)} does not exist"
    return one_line(exc.strerror or str(exc), 120)
