"""The one-shot command line's options: each one's spellings and argparse's settings.

`args.py` builds the parser from `OPTIONS` and reads a plain command line
without it (`_fast_parse`); `harness --help` lists them in this order.
"""

from __future__ import annotations

from coding_harness.client.commands import worktree_option
from coding_harness.protocol.modes import PERMISSION_MODES

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

OUTPUT_FORMATS = ("text", "json", "stream-json")


def _switch(text: str, **more: Any) -> dict[str, Any]:
    return {"action": "store_true", "help": text, **more}


def _value(metavar: str, text: str, **more: Any) -> dict[str, Any]:
    return {"metavar": metavar, "help": text, **more}


# Every option: its spellings, then argparse's settings for it.
OPTIONS: tuple[tuple[tuple[str, ...], dict[str, Any]], ...] = (
    (
        ("-p", "--prompt"),
        _value(
            "TEXT",
            "prompt text; repeatable, joined with newlines",
            dest="prompts",
            action="append",
            default=[],
        ),
    ),
    (("--stdin",), _switch("read the prompt from standard input")),
    (
        ("-y", "--yes"),
        _switch(
            "apply proposed edits without asking (the diff is still shown): the"
            " accept-edits mode for this run, and uv run / uv sync approved too"
        ),
    ),
    (
        ("--mode",),
        _value(
            "MODE",
            "the session's permission mode: ask (the default: every write is put to"
            " you), accept-edits (writes applied without asking) or read-only (no"
            " writes: the agent ends with a plan); docs/modes.md",
            choices=PERMISSION_MODES,
        ),
    ),
    (("--dry-run",), _switch("show diffs, write nothing (and run no `uv`)")),
    (("--provider",), _value("NAME", "provider profile from the config")),
    (("--model",), _value("ID", "model id for this session")),
    (("--cwd",), _value("DIR", "workspace folder (default: the current one)")),
    (("--session",), _value("ID", "submit into an existing session (an id, short id or prefix)")),
    (("-c", "--continue"), _switch("continue this folder's latest session", dest="continued")),
    (
        ("--resume",),
        _value("ID", "resume session ID; without one, pick from a list", nargs="?", const=""),
    ),
    (("-q", "--quiet"), _switch("only the reply and questions for you: no banner, tool lines")),
    (("--worktree",), _value("NAME", worktree_option.HELP, nargs="?", const="")),
    (("--verbose",), _switch("show each command's output whole, not folded to its ends")),
    (
        ("--plain", "--no-color"),
        _switch("no colors, no Markdown: the reply as the model wrote it", dest="plain"),
    ),
    (
        ("--debug",),
        _switch(
            "write the raw model exchanges (keys redacted) to"
            " $XDG_STATE_HOME/coding-harness/debug/SESSION.jsonl; protocol details on errors"
        ),
    ),
    (
        ("--output-format",),
        _value(
            "FORMAT",
            "text (the default), json (one result object) or stream-json",
            choices=OUTPUT_FORMATS,
            default="text",
        ),
    ),
    (
        ("--bg",),
        _switch(
            "submit the task and return at once: prints the session's short id; follow it"
            " with harness logs ID -f, attach ID or wait ID"
        ),
    ),
    (
        ("--queue",),
        _switch(
            "put the task in the team hub's queue for any runner to take, print its id and"
            " return (docs/team.md); harness queue lists the tasks"
        ),
    ),
    (("--repo",), _value("URL", "with --queue: the repository (default: this one's origin)")),
    (("--ref",), _value("REF", "with --queue: the branch, tag or commit (default: this branch)")),
    (("-v", "--version"), _switch("print the version and exit")),
)
