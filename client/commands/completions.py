"""`harness completions bash|zsh|fish`: a completion script on standard output.

The scripts complete subcommands, every flag of `harness --help` (read from
the parser, so they cannot drift apart), daemon actions, shells and output
formats. Values that live in the config or the daemon (provider names, model
ids, session ids) come from `harness completions --values KIND` at Tab time:
it asks a running daemon (never starting one) and otherwise reads the
provider names from the config files. An unknown shell exits 5.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from coding_harness.client.args import SHELLS, build_parser
from coding_harness.client.commands.completion_scripts import Flag, script
from coding_harness.protocol import exit_codes
from coding_harness.protocol.config_files import (
    global_config,
    legacy_config,
    parse_json,
    project_config,
)
from coding_harness.protocol.project_files import read_project_file
from coding_harness.protocol.vocabulary import BUILTIN_PROVIDER

USAGE = "usage: harness completions bash|zsh|fish"
VALUE_KINDS = ("provider", "model", "session")


def flags() -> list[Flag]:
    return [Flag(action) for action in build_parser()._actions if action.option_strings]


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--values" and argv[1] in VALUE_KINDS:
        for value in values(argv[1]):
            print(value)
        return exit_codes.OK
    if len(argv) != 1 or argv[0] not in SHELLS:
        shown = f"unknown shell {argv[0]!r}; " if len(argv) == 1 else ""
        print(f"harness completions: {shown}{USAGE}", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    sys.stdout.write(script(argv[0], flags()))
    return exit_codes.OK


def values(kind: str) -> list[str]:
    """Provider names, model ids or session ids, as well as can be found cheaply."""
    answer = _ask_daemon(kind)
    if answer is not None:
        return answer
    if kind == "provider":
        return sorted({BUILTIN_PROVIDER, *_configured()})
    if kind == "model":
        return sorted({model for model in _configured().values() if model})
    return []


def _ask_daemon(kind: str) -> list[str] | None:
    """The daemon's view, or None when no daemon answers (one is never started)."""
    from coding_harness.protocol import errors, methods, paths
    from coding_harness.protocol.client import DaemonUnreachable, connect
    from coding_harness.protocol.version import __version__

    try:
        with connect(paths.socket_path(), timeout=1.0) as conn:
            conn.initialize("harness-completions", __version__, approvals=False)
            if kind == "session":
                listed = conn.request(methods.SESSION_LIST, timeout=2.0)["sessions"]
                return [str(s["session"]) for s in listed]
            found = conn.request(methods.PROVIDER_LIST, {"cwd": str(Path.cwd())}, timeout=2.0)
    except (DaemonUnreachable, errors.RpcError, KeyError, TypeError):
        return None
    key = "name" if kind == "provider" else "model"
    return sorted({str(p[key]) for p in found.get("providers", []) if p.get(key)})


def _configured() -> dict[str, str]:
    """Provider name -> model from the legacy, global and project config files."""
    found: dict[str, str] = {}
    home = Path.home()
    for path, project in (
        (legacy_config(home), False),
        (global_config(home), False),
        (project_config(Path.cwd()), True),
    ):
        providers = _read_json(path, project=project).get("providers")
        if isinstance(providers, dict):
            for name, profile in providers.items():
                model = profile.get("model") if isinstance(profile, dict) else None
                found[str(name)] = str(model or found.get(str(name), ""))
    return {name: model for name, model in found.items() if name}


def _read_json(path: Path, *, project: bool = False) -> dict[str, Any]:
    """A config file's object, {} when it cannot be used; a project's only as a
    regular file, never through a link (as the daemon reads it)."""
    try:
        raw = read_project_file(path, limit=None) if project else path.read_bytes()
        data = parse_json(raw.decode("utf-8")) if raw is not None else {}
    except (OSError, ValueError):  # ProjectFileRefused is a ValueError
        return {}
    return data if isinstance(data, dict) else {}
