"""The REPL's first-run offer: keep the profile the daemon discovered.

When a new session runs on a discovered profile (no config file anywhere; the
create result's `discovered`), the REPL says so and asks once whether to save it
as `~/.coding_harness.json`. Only a yes writes, only when that file does not exist
(never overwritten, even if it appears while the question waits), atomically and
with mode 0600; anything else, or no terminal to ask on, writes nothing.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from coding_harness.client.render.sanitize import one_line
from coding_harness.client.render.style import Style
from coding_harness.protocol import paths
from coding_harness.protocol.config_files import global_config

QUESTION = "save this as ~/.coding_harness.json? [y/N] "
YES = frozenset({"y", "yes"})
PROFILE_KEYS = ("type", "endpoint", "api_key_env", "model")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def terminal_asker(pt_input: Input | None, pt_output: Output | None) -> Callable[[str], str] | None:
    """A one-line question at the terminal, before the prompt opens; None without one."""
    if pt_input is None and not sys.stdin.isatty():
        return None

    def ask(question: str) -> str:
        return PromptSession[str](input=pt_input, output=pt_output).prompt(question)

    return ask


def saved_config(discovered: Mapping[str, Any]) -> dict[str, Any] | None:
    """The file to write for the create result's `discovered`; None when it is unusable."""
    name, profile = discovered.get("profile"), discovered.get("config")
    if not isinstance(name, str) or not _NAME.fullmatch(name) or not isinstance(profile, dict):
        return None
    kept = {k: profile[k] for k in PROFILE_KEYS if isinstance(profile.get(k), str)}
    if not {"endpoint", "model"} <= kept.keys():
        return None
    return {"default_provider": name, "providers": {name: kept}}


def write_new(path: Path, data: Mapping[str, Any]) -> bool:
    """Write `data` as JSON to `path` (0600) unless `path` exists; False when it did.
    A temporary file in the same folder is linked into place: all or nothing."""
    text = json.dumps(data, indent=2) + "\n"
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.link(temporary, path)  # refuses to replace an existing file
    except FileExistsError:
        return False
    finally:
        temporary.unlink(missing_ok=True)
    return True


def offer_to_save(
    session: Mapping[str, Any],
    style: Style,
    ask: Callable[[str], str] | None,
    home: Path | None = None,
) -> Path | None:
    """Tell about a discovered profile and, on a yes, save it; the path written or None.
    `ask` is None when there is no terminal to ask on."""
    discovered = session.get("discovered")
    if not isinstance(discovered, Mapping):
        return None
    if session.get("notice"):
        style.line(one_line(str(session["notice"])), "yellow")
    data = saved_config(discovered)
    path = global_config(home or paths.home_dir())
    if data is None or ask is None or path.exists():
        return None
    try:
        answer = ask(QUESTION)
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer.strip().lower() not in YES:
        style.line("not saved; the next session looks again", "dim")
        return None
    try:
        written = write_new(path, data)
    except OSError as exc:
        style.line(f"could not write {path}: {exc.strerror or exc}", "red")
        return None
    if not written:
        style.line(f"{path} exists now; it was left as it is", "yellow")
        return None
    style.line(f"saved: {path} (profile {data['default_provider']})", "green")
    return path
