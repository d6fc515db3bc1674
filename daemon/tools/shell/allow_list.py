"""The allow-list: what `/allow-cmd`, an "always" answer and `agent.allow_commands` let run.

One entry is one of:

- `PROGRAM`: a program off run_shell's built-in list, with any arguments
  (`cargo`); `make` lets every make target run without a question;
- `PROGRAM SUBCOMMAND`: that program only when its first word is SUBCOMMAND
  (`git log`, `git diff`, but not `git push`); for the built-in programs, the
  commands that ask: `uv run`, `uv sync`, `make TARGET`;
- `mcp__SERVER__TOOL`: that MCP tool is called without a question.

An entry never widens what the rules refuse: a narrowed program's words are
still held to the workspace rules, and make and uv keep their own tables. The
session's entries (`SessionOptions.extra_commands`) and the global config's
(`agent.allow_commands`, which a project file may not set: USER_ONLY_KEYS) are
read together through `Allowances`, which sees an entry added mid-turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet

from coding_harness.daemon.tools.workspace import is_hidden_name

BUILT_IN = ("cat", "ls", "make", "pwd", "uv")
ASKED_UV = frozenset({"uv run", "uv sync"})
MCP_PREFIX = "mcp__"
_PROGRAM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,63}")
_SUBCOMMAND = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}")
_MCP_TOOL = re.compile(r"mcp__[A-Za-z0-9_-]{1,64}__[A-Za-z0-9_.-]{1,128}")


class BadEntry(ValueError):
    """An entry the allow-list does not take; the message says what would be taken."""


def checked_entry(text: str) -> str:
    """`text` as an entry (words joined by one space); `BadEntry` naming the forms."""
    words = text.split()
    entry = " ".join(words)
    if len(words) == 1 and _MCP_TOOL.fullmatch(entry):
        return entry
    if not 1 <= len(words) <= 2 or not _PROGRAM.fullmatch(words[0]):
        raise BadEntry(
            "allow a program name without a path (cargo), a program and its subcommand "
            "(git log), uv run, uv sync, make TARGET, or an MCP tool (mcp__SERVER__TOOL)"
        )
    if is_hidden_name(words[0]) or words[0].startswith(MCP_PREFIX):
        raise BadEntry(f"{words[0]!r} is not a program name run_shell can run")
    if len(words) == 2 and not _SUBCOMMAND.fullmatch(words[1]):
        raise BadEntry(f"{words[1]!r} is not a subcommand (a word that is not an option)")
    program = words[0]
    if program in ("cat", "ls", "pwd"):
        raise BadEntry(f"{program} runs without a question already")
    if program == "uv" and entry not in ASKED_UV:
        raise BadEntry("of uv, only `uv run` and `uv sync` ask, and so only they can be allowed")
    return entry


def programs(entries: Iterable[str]) -> frozenset[str]:
    """The programs off the built-in list that entries let run_shell start, in full or
    narrowed (`git` for `git log`)."""
    found = set()
    for entry in entries:
        program = entry.split(" ", 1)[0]
        if program in BUILT_IN or program.startswith(MCP_PREFIX) or is_hidden_name(program):
            continue
        if _PROGRAM.fullmatch(program):
            found.add(program)
    return frozenset(found)


def allows(entries: AbstractSet[str], argv: list[str]) -> bool:
    """Whether an entry lets `argv` run without a question: the program in full, or
    narrowed to its first word."""
    if argv[0] in entries:
        return True
    return len(argv) > 1 and f"{argv[0]} {argv[1]}" in entries


def narrowed_to(entries: Iterable[str], program: str) -> list[str]:
    """The subcommands `program` is narrowed to (`["diff", "log"]` for git)."""
    prefix = program + " "
    return sorted(entry[len(prefix) :] for entry in entries if entry.startswith(prefix))


class Allowances(AbstractSet[str]):
    """The session's own entries (live: an "always" counts at once) and the config's."""

    def __init__(self, session: AbstractSet[str], config: Iterable[str] = ()) -> None:
        self._session = session
        self._config = frozenset(config)

    def __contains__(self, entry: object) -> bool:
        return entry in self._session or entry in self._config

    def __iter__(self) -> Iterator[str]:
        return iter(set(self._session) | self._config)

    def __len__(self) -> int:
        return len(set(self._session) | self._config)
