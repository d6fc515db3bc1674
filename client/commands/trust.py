"""`harness trust`: review this project's `.local_coding_harness.json` and `.mcp.json`
and trust them.

Shows every key the project file sets, marking those that wait for trust (they
can send requests, and the key they carry, somewhere else, or widen what runs),
and every MCP server `.mcp.json` names, each with the command it runs or the URL
it reaches (all wait for trust: a server is a program run on this machine);
then asks once for both. Either file may be absent; one already trusted as it
is now is not asked about again. At a terminal it prompts; from a pipe it reads
the answer as a line. Trust is recorded in the state folder for this folder,
each file's name and its SHA-256, so any later change to a file revokes it, and
no other folder shares it; `--revoke` forgets both. A file that is a symbolic
link is refused, never read or trusted: it must be a regular file here. Keys
only the user sets (`debug`) are shown as ignored, trusted or not.
Exit codes: 0 trusted (or already, or revoked with --revoke), 1 not trusted or
nothing to trust, 5 bad arguments.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from coding_harness.client.render.style import Style, color_wanted
from coding_harness.protocol import exit_codes, trust
from coding_harness.protocol.config_files import MCP_CONFIG_NAME, PROJECT_CONFIG_NAME, parse_json
from coding_harness.protocol.project_files import ProjectFileRefused, read_project_file

USAGE = "usage: harness trust [-y|--yes] [--revoke]   (in the project folder)"
NOT_TRUSTED = 1
VALUE_PREVIEW = 80
NEEDS_TRUST = "   <- needs trust"
USER_ONLY = "   <- ignored: only your own config sets it"


def main(argv: list[str]) -> int:
    flags = set(argv)
    if flags & {"-h", "--help"}:
        print(USAGE)
        return exit_codes.OK
    if flags - {"-y", "--yes", "--revoke"} or ({"-y", "--yes"} & flags and "--revoke" in flags):
        print(USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    files = [Path.cwd() / PROJECT_CONFIG_NAME, Path.cwd() / MCP_CONFIG_NAME]
    store = trust.store_path()
    if "--revoke" in flags:
        for path in files:
            trust.record(store, path, None)
            style.line(f"{path} is no longer trusted")
        return exit_codes.OK
    present = [path for path in files if path.exists() or path.is_symlink()]
    if not present:
        names, where = f"{files[0].name} or {files[1].name}", files[0].parent
        style.line(f"harness trust: no {names} in {where}; nothing to trust", "red")
        return NOT_TRUSTED
    return _review(present, store, style, asked="-y" not in flags and "--yes" not in flags)


def _review(files: list[Path], store: Path, style: Style, *, asked: bool) -> int:
    """Show the files not yet trusted as they are, ask once, record each."""
    loaded: list[tuple[Path, dict[str, Any], bytes]] = []
    for path in files:
        found = _load(path, style)
        if found is None:
            return NOT_TRUSTED  # nothing is trusted while one file cannot be read
        data, raw = found
        if trust.is_trusted(store, path, raw):
            style.line(f"{path} is already trusted, as it is now")
        else:
            loaded.append((path, data, raw))
    if not loaded:
        return exit_codes.OK
    for path, data, _raw in loaded:
        (_show_servers if path.name == MCP_CONFIG_NAME else _show)(path, data, style)
    style.line(
        "Keys marked 'needs trust' can send your requests, and the API key they name, "
        "somewhere else, or widen what runs. A provider or an MCP server these files add "
        "needs trust too: a server is a program run on your machine."
    )
    question = f"Trust {'this file' if len(loaded) == 1 else 'these files'}? [y/N] "
    if asked and not _confirmed(style, question):
        style.line("not trusted; keys and servers that need trust stay ignored")
        return NOT_TRUSTED
    for path, _data, raw in loaded:
        trust.record(store, path, raw)
        style.line(f"trusted {path}; the next command uses all of it", "green")
    return exit_codes.OK


def _load(path: Path, style: Style) -> tuple[dict[str, Any], bytes] | None:
    try:
        raw = read_project_file(path, limit=None)
    except ProjectFileRefused as exc:
        style.line(f"harness trust: {exc}", "red")
        return None
    except OSError as exc:
        style.line(f"harness trust: cannot read {path} ({exc.strerror})", "red")
        return None
    if raw is None:
        style.line(f"harness trust: {path} is gone; nothing to trust", "red")
        return None
    try:
        data = parse_json(raw.decode("utf-8"))
    except ValueError as exc:
        style.line(f"harness trust: {path} is not valid JSON ({exc}); fix it first", "red")
        return None
    if not isinstance(data, dict):
        style.line(f"harness trust: {path} must hold a JSON object; fix it first", "red")
        return None
    return data, raw


def _show(path: Path, data: dict[str, Any], style: Style) -> None:
    keys = list(trust.leaf_paths(data))
    style.line(f"{path} sets {len(keys)} key(s):", "bold")
    for key in keys:
        if trust.user_only(key):
            style.line(f"  {'.'.join(key)} = {_preview(_at(data, key))}{USER_ONLY}", "dim")
        elif trust.needs_trust(key):  # what is trusted is shown whole: nothing past a cut
            value = json.dumps(_at(data, key), ensure_ascii=False)
            style.line(f"  {'.'.join(key)} = {value}{NEEDS_TRUST}", "yellow")
        else:
            style.line(f"  {'.'.join(key)} = {_preview(_at(data, key))}")


def _show_servers(path: Path, data: dict[str, Any], style: Style) -> None:
    """Each MCP server of `.mcp.json` with what it runs or reaches; all need trust."""
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        style.line(f"{path} names no MCP servers (no mcpServers object); its keys:", "bold")
        _show(path, data, style)
        return
    style.line(f"{path} names {len(servers)} MCP server(s):", "bold")
    for name, entry in servers.items():
        style.line(f"  {name}: {_runs(entry)}{NEEDS_TRUST}", "yellow")


def _runs(entry: object) -> str:
    """What a server entry starts (`runs: cmd args`) or reaches (`url: ...`)."""
    if not isinstance(entry, dict):
        return f"not an object: {_preview(entry)}"
    if isinstance(entry.get("url"), str):
        return f"url {entry['url']}"
    args = entry.get("args")
    words = [str(entry.get("command", "(no command)"))]
    if isinstance(args, list):
        words.extend(str(arg) for arg in args)
    return f"runs {shlex.join(words)}"  # whole: what is trusted is never cut


def _preview(value: object, *, raw: bool = False) -> str:
    text = value if raw and isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= VALUE_PREVIEW else text[: VALUE_PREVIEW - 3] + "..."


def _at(data: dict[str, Any], key: tuple[str, ...]) -> Any:
    node: Any = data
    for part in key:
        node = node[part]
    return node


def _confirmed(style: Style, question: str) -> bool:
    while True:
        style.stream.write(style.paint(question, "bold"))
        style.stream.flush()
        line = sys.stdin.readline()
        if not line or not sys.stdin.isatty():
            style.stream.write("\n")  # end of input, or an answer from a pipe: no echo
        if not line:
            return False
        answer = line.strip().lower()
        if answer in ("y", "yes"):
            return True
        if answer in ("", "n", "no"):
            return False
        style.line("Please answer y or n.")
