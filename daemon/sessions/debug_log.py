"""The debug log of a session: its raw model exchanges, as JSON lines (`--debug`).

`harness --debug` and the REPL's `/debug on` switch it on through
`session.configure {session, debug}`; `DEBUG_SWITCHES` remembers which
sessions have it, for as long as the daemon runs. While it is on, each model
call of the session writes a request line and a response line
(`providers/exchanges.py`) to `$XDG_STATE_HOME/coding-harness/debug/SESSION.jsonl`
(folder 0700, file 0600, appended to). A log is capped: when a line would take
it past `MAX_LOG_BYTES` (16 MiB), it is renamed `SESSION.jsonl.1` (replacing the
one before) and a new one begun, so a session's log never holds more than
twice the cap on disk. Every string in a line goes through the
session's `Secrets` (the API keys and secret variables it knows, plain or
encoded) and the request's own key, so the log holds `[redacted]` where they
were; the Authorization header is never written at all. A recorder may mark
each of its lines (`marks`): the turn-close notes call's lines carry
`"notes": true` and the turn's id, so a reader of "the turn's last request"
never takes the call that follows the turn for one of its own. A line that
cannot be written is logged once and dropped: debugging never fails a turn.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any

from coding_harness.daemon.agent.seams import JSONObject
from coding_harness.daemon.security.secrets import REDACTED, Secrets, secrets_from
from coding_harness.protocol.paths import state_dir

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600
MAX_LOG_BYTES = 16 * 1024 * 1024
ROTATED_SUFFIX = ".1"
# Recorders of one session (its model, its hooks) may write from worker threads: one
# rotation at a time, so no line lands in a file just renamed away.
_ROTATING = threading.Lock()
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def debug_folder(env: dict[str, str] | None = None) -> Path:
    return state_dir(env) / "debug"


def debug_path(session_id: str, env: dict[str, str] | None = None) -> Path:
    """Where a session's debug log goes (its id made safe for a file name)."""
    name = _SAFE_NAME.sub("_", session_id).lstrip(".") or "session"
    return debug_folder(env) / f"{name}.jsonl"


class DebugRecorder:
    """Appends redacted JSON lines to one file (an `ExchangeRecorder`)."""

    def __init__(
        self,
        path: Path,
        secrets: Secrets,
        api_key: str | None = None,
        *,
        max_bytes: int = MAX_LOG_BYTES,
        marks: JSONObject | None = None,
    ) -> None:
        self.path = path
        self.max_bytes = max_bytes
        self.marks: JSONObject = dict(marks or {})
        self._secrets = _with_key(secrets, api_key)
        self._api_key = api_key
        self._failed = False

    def write(self, entry: JSONObject) -> None:
        marked = {**entry, **self.marks} if self.marks else entry
        line = json.dumps(self._redact(marked), ensure_ascii=False) + "\n"
        try:
            _append(self.path, line.encode("utf-8"), self.max_bytes)
        except OSError as exc:
            if not self._failed:
                log.warning("debug log %s not written: %s", self.path, exc.strerror or exc)
            self._failed = True

    def _redact(self, entry: JSONObject) -> JSONObject:
        redacted: JSONObject = self._secrets.redact_data(entry)
        if self._api_key:  # a key too short for `Secrets` to track is still never written
            redacted = _replace_in(redacted, self._api_key)
        return redacted


def _replace_in(data: Any, value: str) -> Any:
    """`data` (JSON-like) with `value` replaced by `[redacted]` in every string."""
    if isinstance(data, str):
        return data.replace(value, REDACTED)
    if isinstance(data, dict):
        return {_replace_in(key, value): _replace_in(item, value) for key, item in data.items()}
    if isinstance(data, list):
        return [_replace_in(item, value) for item in data]
    return data


def _with_key(secrets: Secrets, api_key: str | None) -> Secrets:
    """`secrets` plus the request's key (when it is long enough to redact safely)."""
    if not api_key or api_key in secrets.values:
        return secrets
    origins = dict(secrets.origins)
    origins.update({value: "" for value in secrets.values if value not in origins})
    origins[api_key] = "the API key"
    return secrets_from(origins, secrets.names)


def _append(path: Path, data: bytes, max_bytes: int) -> None:
    """Append `data` to `path`; first, when it would pass `max_bytes`, the file is
    rotated to `path.1` (a line larger than the cap still goes whole to a new file)."""
    path.parent.mkdir(mode=FOLDER_MODE, parents=True, exist_ok=True)
    path.parent.chmod(FOLDER_MODE)  # an older folder made with wider rights
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    with _ROTATING:
        fd = os.open(path, flags, FILE_MODE)
        try:
            size = os.fstat(fd).st_size
            if size and size + len(data) > max_bytes:
                os.close(fd)
                fd = -1
                path.replace(path.with_name(path.name + ROTATED_SUFFIX))
                fd = os.open(path, flags, FILE_MODE)
            os.fchmod(fd, FILE_MODE)
            os.write(fd, data)
        finally:
            if fd >= 0:
                os.close(fd)


class DebugSwitches:
    """Which sessions have their debug log on (in memory: a restart turns all off)."""

    def __init__(self) -> None:
        self._on: set[str] = set()

    def set(self, session_id: str, on: bool) -> None:
        if on:
            self._on.add(session_id)
        else:
            self._on.discard(session_id)

    def is_on(self, session_id: str) -> bool:
        return session_id in self._on

    def path(self, session_id: str) -> Path | None:
        """The session's debug log while it is on, else None."""
        return debug_path(session_id) if self.is_on(session_id) else None

    def recorder(
        self,
        session_id: str,
        secrets: Secrets,
        api_key: str | None,
        *,
        marks: JSONObject | None = None,
    ) -> DebugRecorder | None:
        """A recorder for one model of the session (its lines carrying `marks`), or None
        when its log is off."""
        path = self.path(session_id)
        return None if path is None else DebugRecorder(path, secrets, api_key, marks=marks)


DEBUG_SWITCHES = DebugSwitches()
