"""`/allow-cmd PROGRAM [SUBCOMMAND] [--save]`: what runs without a question.

`/allow-cmd cargo` lets run_shell start cargo in this session; `/allow-cmd git
log` only `git log ...` (so `git log`, `git diff` and `git status` can be
allowed and `git push` not); `/allow-cmd uv run` or `/allow-cmd make clean`
stop a command that asks from asking, and so does `[a]lways` at the approval
prompt. The daemon checks the entry (`daemon/tools/shell/allow_list.py`) and
adds it to the session; `--save` also writes it into the global config file
(`agent.allow_commands` of `~/.coding_harness.json`), so every later session
starts with it. Only the global file: a project's file may never widen what
runs (USER_ONLY_KEYS). Bare `/allow-cmd` lists what this session allows.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from coding_harness.client.render.sanitize import field
from coding_harness.client.repl.session_command import SessionCommand
from coding_harness.protocol import methods, paths
from coding_harness.protocol.config_files import global_config, parse_json

USAGE = "/allow-cmd NAME [SUBCOMMAND] [--save]: let it run unasked (--save: every session)"
SAVE_FLAG = "--save"


class NotSaved(Exception):
    """The global config file could not be read or written; the message says why."""


class AllowCommand(SessionCommand):
    def __call__(self, argument: str) -> None:
        words = argument.split()
        save = SAVE_FLAG in words
        entry = " ".join(word for word in words if word != SAVE_FLAG)
        if not entry:
            self._show()
            return
        self.conn.request(  # the daemon checks it, adds it, and tells every client
            methods.SESSION_CONFIGURE, {"session": self.session, "allow_command": entry}
        )
        if not save:
            return
        path = global_config(paths.home_dir())
        try:
            added = save_allowance(path, " ".join(entry.split()))
        except NotSaved as exc:
            self.style.line(f"not saved: {exc}", "red")
            return
        where = f"{path} (agent.allow_commands)"
        said = "saved for every session in" if added else "already saved in"
        self.style.line(f"{field(entry)}: {said} {field(where)}", "dim")

    def _show(self) -> None:
        current = self.conn.request(methods.SESSION_CONFIGURE, {"session": self.session})
        allowed = current["options"].get("allowed_commands") or []
        listed = ", ".join(field(str(entry)) for entry in allowed) or "nothing yet"
        self.style.line(f"allowed in this session: {listed}", "dim")
        self.style.line(f"usage: {USAGE}", "dim")


def save_allowance(path: Path, entry: str) -> bool:
    """Add `entry` to `agent.allow_commands` of the config file at `path` (made, 0600,
    when missing); False when it was there already. The file is replaced whole, all or
    nothing, keeping every other key (a link is followed: the file it names is written)."""
    path = Path(os.path.realpath(path))
    data = _read(path)
    agent = data.setdefault("agent", {})
    if not isinstance(agent, dict):
        raise NotSaved(f'"agent" in {path} is not an object; fix it by hand')
    entries = agent.setdefault("allow_commands", [])
    if not isinstance(entries, list):
        raise NotSaved(f'"agent.allow_commands" in {path} is not a list; fix it by hand')
    if entry in entries:
        return False
    entries.append(entry)
    _write(path, data)
    return True


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise NotSaved(f"could not read {path}: {exc}") from None
    try:
        data = parse_json(text)
    except ValueError as exc:
        raise NotSaved(f"{path} is not valid JSON ({exc}); fix it, then save again") from None
    if not isinstance(data, dict):
        raise NotSaved(f"{path} does not hold a JSON object; fix it, then save again")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(data, indent=2) + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        temporary.replace(path)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise NotSaved(f"could not write {path}: {exc.strerror or exc}") from None
