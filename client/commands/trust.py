"""`harness trust`: review this project's `.local_coding_harness.json` and trust it.

Shows every key the file sets, marking those that wait for trust (they can
send requests, and the key they carry, somewhere else, or widen what runs),
then asks. At a terminal it prompts; from a pipe it reads the answer as a
line. Trust is recorded in the state folder as the file's SHA-256, so any
later change to the file revokes it. Exit codes: 0 trusted (or already, or
revoked with --revoke), 1 not trusted or nothing to trust, 5 bad arguments.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from coding_harness.client.render.style import Style, color_wanted
from coding_harness.protocol import exit_codes, trust
from coding_harness.protocol.config_files import PROJECT_CONFIG_NAME, parse_json

USAGE = "usage: harness trust [-y|--yes] [--revoke]   (in the project folder)"
NOT_TRUSTED = 1
VALUE_PREVIEW = 80
QUESTION = "Trust this file? [y/N] "


def main(argv: list[str]) -> int:
    flags = set(argv)
    if flags & {"-h", "--help"}:
        print(USAGE)
        return exit_codes.OK
    if flags - {"-y", "--yes", "--revoke"} or ({"-y", "--yes"} & flags and "--revoke" in flags):
        print(USAGE, file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    style = Style(sys.stderr, color=color_wanted(sys.stderr, False))
    path = Path.cwd() / PROJECT_CONFIG_NAME
    store = trust.store_path()
    if "--revoke" in flags:
        trust.record(store, path, None)
        style.line(f"{path} is no longer trusted")
        return exit_codes.OK
    loaded = _load(path, style)
    if loaded is None:
        return NOT_TRUSTED
    data, raw = loaded
    if trust.is_trusted(store, path, raw):
        style.line(f"{path} is already trusted, as it is now")
        return exit_codes.OK
    _show(path, data, style)
    if not ({"-y", "--yes"} & flags or _confirmed(style)):
        style.line("not trusted; keys that need trust stay ignored")
        return NOT_TRUSTED
    trust.record(store, path, raw)
    style.line(f"trusted {path}; the next command uses all of it", "green")
    return exit_codes.OK


def _load(path: Path, style: Style) -> tuple[dict[str, Any], bytes] | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        style.line(f"harness trust: no {path.name} in {path.parent}; nothing to trust", "red")
        return None
    except OSError as exc:
        style.line(f"harness trust: cannot read {path} ({exc.strerror})", "red")
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
        value = json.dumps(_at(data, key), ensure_ascii=False)
        if len(value) > VALUE_PREVIEW:
            value = value[: VALUE_PREVIEW - 3] + "..."
        line = f"  {'.'.join(key)} = {value}"
        if trust.needs_trust(key):
            style.line(f"{line}   <- needs trust", "yellow")
        else:
            style.line(line)
    style.line(
        "Keys marked 'needs trust' can send your requests, and the API key they name, "
        "somewhere else, or widen what runs. A provider this file adds needs trust too."
    )


def _at(data: dict[str, Any], key: tuple[str, ...]) -> Any:
    node: Any = data
    for part in key:
        node = node[part]
    return node


def _confirmed(style: Style) -> bool:
    while True:
        style.stream.write(style.paint(QUESTION, "bold"))
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
