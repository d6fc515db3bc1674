"""`harness doctor` checks of the MCP servers the config files name; nothing is started.

The servers are those of `mcp_servers` in ~/.coding_harness.json, and of the
project: `mcp_servers` in `.local_coding_harness.json` and `mcpServers` in
`.mcp.json`, each counted only once `harness trust` trusted that file (as in
the daemon); an untrusted file's servers are named, not checked. A stdio
server's `command` must be an executable file (a path: relative ones from the
server's `cwd`, else the file's folder) or a program on PATH (this shell's
PATH; a daemon started by systemd or launchd may have another); its `args` a
list of strings. An HTTP server's `url` must be http(s), and the variable its
`bearer_token_env` names set. `approve` and `start` take the documented values.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coding_harness.client.commands.doctor_config import Finding, info, ok, problem
from coding_harness.protocol import trust
from coding_harness.protocol.config_files import (
    MCP_CONFIG_NAME,
    global_config,
    parse_json,
    project_config,
)
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file

APPROVE_WORDS = ("always", "never")
START_WORDS = ("lazy", "eager")
URL_EXAMPLE = "http://127.0.0.1:8000/mcp"
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")  # as the daemon's config takes them


def check_mcp(home: Path, cwd: Path, env: Mapping[str, str]) -> list[Finding]:
    """Findings for every MCP server configured for this folder."""
    store = trust.store_path(dict(env))
    sources = (
        (global_config(home), "mcp_servers", False),
        (project_config(cwd), "mcp_servers", True),
        (cwd / MCP_CONFIG_NAME, "mcpServers", True),
    )
    found: list[Finding] = []
    for path, key, needs_trust in sources:
        loaded = _load(path, project=needs_trust)
        if isinstance(loaded, Finding):
            found.append(loaded)
            continue
        entries = loaded[0].get(key) if loaded else None
        if loaded is None or entries is None:
            continue
        if not isinstance(entries, dict):
            found.append(problem(f"{path}: {key} is not an object", "map each name to a server"))
        elif needs_trust and not trust.is_trusted(store, path, loaded[1]):
            names = ", ".join(sorted(str(name) for name in entries)) or "none"
            found.append(
                info(f"{path}: MCP servers {names} not checked: not trusted: run harness trust")
            )
        else:
            for name, entry in entries.items():
                at = f"{path}: {key}.{name}"
                found.extend(check_server(at, str(name), entry, env, path.parent))
    return found


def _load(path: Path, *, project: bool) -> tuple[dict[str, Any], bytes] | Finding | None:
    """The file's object and bytes; None when absent (or, for the files `doctor_config`
    checks already, unusable); a problem for an unusable `.mcp.json`. A project's file
    is read as the daemon reads it: a regular file, never through a link."""
    try:
        raw = read_project_file(path, limit=None) if project else path.read_bytes()
        if raw is None:
            return None
        data = parse_json(raw.decode("utf-8"))
    except FileNotFoundError:
        return None
    except ProjectFileRefused as refused:
        if path.name != MCP_CONFIG_NAME:
            return None  # doctor_config names it
        return problem(str(refused), "the daemon does not start its servers either")
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        if path.name != MCP_CONFIG_NAME:
            return None
        return problem(f"{path}: cannot be read as JSON ({exc})", "correct it, or remove it")
    if not isinstance(data, dict):
        if path.name != MCP_CONFIG_NAME:
            return None
        return problem(f"{path}: the top level is not an object", 'write {"mcpServers": {...}}')
    return data, raw


def check_server(
    at: str, name: str, entry: object, env: Mapping[str, str], base: Path
) -> list[Finding]:
    """Findings for one server entry; `at` names it (`FILE: mcp_servers.NAME`)."""
    if not SERVER_NAME.fullmatch(name):
        fix = "rename it: letters, digits, _ and -, at most 32 (the model sees mcp__NAME__TOOL)"
        return [problem(f"{at}: the name cannot be used", fix)]
    if not isinstance(entry, dict):
        return [problem(f"{at} is not an object", 'give it "command" (stdio) or "url" (HTTP)')]
    if entry.get("disabled") is True:
        return [info(f"{at} is disabled")]
    command, url = entry.get("command"), entry.get("url")
    if (command is None) == (url is None):
        what = "both command and url" if command is not None else "neither command nor url"
        return [problem(f"{at} has {what}", 'keep "command" for stdio or "url" for HTTP')]
    found = _choice_problems(at, entry)
    if url is not None:
        return [*found, *_http_findings(at, url, entry, env)]
    return [*found, *_stdio_findings(at, command, entry, env, base)]


def _stdio_findings(
    at: str, command: object, entry: dict[str, Any], env: Mapping[str, str], base: Path
) -> list[Finding]:
    if not isinstance(command, str) or not command.strip():
        return [problem(f"{at}.command is empty", "name the program that runs the server")]
    args = entry.get("args", [])
    found: list[Finding] = []
    if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
        found.append(problem(f"{at}.args is not a list of strings", 'write "args": ["--flag"]'))
    folder = entry.get("cwd")
    start = Path(folder).expanduser() if isinstance(folder, str) and folder else base
    program = resolve(command, start, env)
    if program is not None:
        return [*found, ok(f"{at}: runs {program}")]
    if " " in command.strip() and resolve(command.split()[0], start, env) is not None:
        fix = f'put the arguments in args: "command": "{command.split()[0]}", "args": [...]'
        return [*found, problem(f"{at}.command {command!r} names no program", fix)]
    if os.sep in command:
        fix = f"install the server at {start / Path(command).expanduser()}, or correct the path"
        return [*found, problem(f"{at}.command {command} is not an executable file", fix)]
    fix = f"install {command}, or give the absolute path of the program in command"
    return [*found, problem(f"{at}.command {command} is not found on PATH", fix)]


def resolve(command: str, start: Path, env: Mapping[str, str]) -> str | None:
    """The program `command` runs: a path (relative to `start`) or a name on PATH."""
    if os.sep not in command:
        return shutil.which(command, path=env.get("PATH", os.defpath))
    path = start / Path(command).expanduser()
    return str(path) if path.is_file() and os.access(path, os.X_OK) else None


def _http_findings(
    at: str, url: object, entry: dict[str, Any], env: Mapping[str, str]
) -> list[Finding]:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return [problem(f"{at}.url is not an http(s) URL", f"set the full URL, e.g. {URL_EXAMPLE}")]
    variable = entry.get("bearer_token_env")
    if isinstance(variable, str) and variable and not env.get(variable):
        fix = f"export {variable}=... in the shell that runs harness"
        return [problem(f"{at} reads its token from {variable}, which is not set here", fix)]
    return [ok(f"{at}: HTTP server at {url}")]


def _choice_problems(at: str, entry: dict[str, Any]) -> list[Finding]:
    found: list[Finding] = []
    approve = entry.get("approve", "always")
    listed = isinstance(approve, list) and all(isinstance(tool, str) for tool in approve)
    if approve not in APPROVE_WORDS and not listed:
        fix = 'use "always", "never" or a list of the tools that need no approval'
        found.append(problem(f"{at}.approve is {approve!r}", fix))
    if entry.get("start", "lazy") not in START_WORDS:
        found.append(problem(f"{at}.start is {entry.get('start')!r}", 'use "lazy" or "eager"'))
    return found
