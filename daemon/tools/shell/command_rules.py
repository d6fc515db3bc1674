"""The argument rules of run_shell's built-in programs, written as data.

For each program, and for each `uv` subcommand, a table says which options
exist, which take a value and what that value may be, which are refused and
why, and what the remaining words (operands) are. These are allow-lists: an
option that is not listed is refused. `argv_rules.py` reads a command line
against a table; `run_shell.py` and `uv_gate.py` decide what the operands may
name. The tables follow GNU make 4.x and GNU coreutils; uv's are in
`uv_rules.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# none: a flag. required: the next word or an attached value (-fX, --file=X).
# attached: optional, only attached (-Oline, --output-sync=line).
# number: optional; attached, or the next word when that word is a valid value (make -j 4).
ValueKind = Literal["none", "required", "attached", "number"]
# What the words that are not options are: files and folders the program reads, make
# targets, package or command names, or (uv run) the command to run and its arguments.
Operands = Literal["none", "paths", "targets", "names", "command"]


@dataclass(kw_only=True, slots=True, frozen=True)
class Option:
    """One option: its spellings, its value, and why it is refused ('' when allowed)."""

    short: str = ""  # the letter of -x, or ''
    long: tuple[str, ...] = ()  # long names without the dashes
    value: ValueKind = "none"
    accepts: str = ""  # a regular expression the whole value must match; '' takes any
    path: bool = False  # the value names a file or folder, held to the workspace rules
    refused: str = ""

    def spelling(self) -> str:
        return f"--{self.long[0]}" if self.long else f"-{self.short}"


@dataclass(kw_only=True, slots=True, frozen=True)
class Syntax:
    """How one program (or uv subcommand) reads its words."""

    options: tuple[Option, ...]
    operands: Operands = "none"
    # GNU getopt_long takes any unambiguous prefix of a long name (`--fil` is `--file`).
    abbreviations: bool = False
    requires: tuple[str, ...] = ()  # long options that must be given


def flag(short: str, *long: str, value: ValueKind = "none", accepts: str = "") -> Option:
    """An allowed option; `short` is '' when it has no one-letter spelling."""
    return Option(short=short, long=long, value=value, accepts=accepts)


def path_option(short: str, *long: str) -> Option:
    """An allowed option whose value names a file or folder."""
    return Option(short=short, long=long, value="required", path=True)


def refused(short: str, *long: str, why: str, value: ValueKind = "none") -> Option:
    """A refused option; its value kind still matters for reading what follows it."""
    return Option(short=short, long=long, value=value, refused=why)


# -- make -----------------------------------------------------------------------

_MAKE_ELSEWHERE = "make runs only the workspace's own makefile, in the workspace root"

MAKE = Syntax(
    operands="targets",
    abbreviations=True,
    options=(
        flag("j", "jobs", value="number", accepts=r"[1-9][0-9]{0,3}"),
        flag("l", "load-average", "max-load", value="number", accepts=r"[0-9]{1,4}(\.[0-9]+)?"),
        flag("k", "keep-going"),
        flag("S", "no-keep-going", "stop"),
        flag("s", "silent", "quiet"),
        flag("", "no-silent"),
        flag("n", "just-print", "dry-run", "recon"),
        flag("q", "question"),
        flag("i", "ignore-errors"),
        flag("B", "always-make"),
        flag("r", "no-builtin-rules"),
        flag("R", "no-builtin-variables"),
        flag("w", "print-directory"),
        flag("", "no-print-directory"),
        flag("O", "output-sync", value="attached", accepts="none|line|target|recurse"),
        flag("p", "print-data-base"),
        flag("d"),
        flag("", "debug", value="attached", accepts=r"[a-z,]{0,40}"),
        flag("", "trace"),
        flag("", "warn-undefined-variables"),
        flag("v", "version"),
        flag("h", "help"),
        refused("f", "file", "makefile", value="required", why=_MAKE_ELSEWHERE),
        refused("C", "directory", value="required", why=_MAKE_ELSEWHERE),
        refused("I", "include-dir", value="required", why=_MAKE_ELSEWHERE),
        refused(
            "E", "eval", value="required", why="it evaluates make text, which can run any command"
        ),
        refused(
            "e",
            "environment-overrides",
            why="it lets the environment replace the makefile's variables, and so its commands",
        ),
        refused(
            "",
            "jobserver-auth",
            "jobserver-fds",
            "jobserver-style",
            "temp-stdin",
            "sync-mutex",
            value="required",
            why="it is make's internal plumbing between a make and its sub-makes",
        ),
    ),
)

# Why a command-line variable is refused, whatever its name or value: it replaces
# the makefile's own (`CC=id`, `PYTHON=python3 -c ...` change what a recipe runs).
MAKE_ASSIGNMENT_REFUSED = (
    "make variables may not be set on the command line (here '{word}'): a variable "
    "such as CC or PYTHON decides which program a recipe runs. Run the target as the "
    "makefile defines it; to change a variable, propose an edit to the makefile"
)

# -- ls, cat, pwd ---------------------------------------------------------------

_HIDDEN = "it would list hidden files, which are off limits"
_ESCAPES = "it writes terminal escape sequences into the output"
_SYMLINKS = "it follows symbolic links, which may lead outside the workspace"
_CONTROL = "it prints control characters in file names as they are"

LS = Syntax(
    operands="paths",
    abbreviations=True,
    options=(
        *(flag(letter) for letter in "1CFUXcgmopux"),
        flag("l"),
        flag("R", "recursive"),
        flag("h", "human-readable"),
        flag("", "si"),
        flag("S"),
        flag("t"),
        flag("r", "reverse"),
        flag("d", "directory"),
        flag("", "classify", value="attached", accepts="always|auto|never"),
        flag("s", "size"),
        flag("i", "inode"),
        flag("n", "numeric-uid-gid"),
        flag("k", "kibibytes"),
        flag("v"),
        flag("Q", "quote-name"),
        flag("b", "escape"),
        flag("q", "hide-control-chars"),
        flag("G", "no-group"),
        flag("", "group-directories-first"),
        flag("", "full-time"),
        flag("", "sort", value="required", accepts="none|size|time|version|extension|width"),
        flag(
            "",
            "time",
            value="required",
            accepts="atime|access|use|ctime|status|mtime|modification|birth|creation",
        ),
        flag("w", "width", value="required", accepts=r"[0-9]{1,4}"),
        flag(
            "",
            "format",
            value="required",
            accepts="across|commas|horizontal|long|single-column|verbose|vertical",
        ),
        flag("", "indicator-style", value="required", accepts="none|slash|file-type|classify"),
        flag("I", "ignore", value="required"),
        flag("", "hide", value="required"),
        flag("", "help"),
        flag("", "version"),
        refused("a", "all", why=_HIDDEN),
        refused("A", "almost-all", why=_HIDDEN),
        refused("f", why=_HIDDEN),
        refused("", "color", "colour", "hyperlink", value="attached", why=_ESCAPES),
        refused(
            "L",
            "dereference",
            "dereference-command-line",
            "dereference-command-line-symlink-to-dir",
            why=_SYMLINKS,
        ),
        refused("H", why=_SYMLINKS),
        refused("N", "literal", "show-control-chars", why=_CONTROL),
        refused("", "quoting-style", value="required", why=_CONTROL),
    ),
)

CAT = Syntax(
    operands="paths",
    abbreviations=True,
    options=(
        flag("A", "show-all"),
        flag("b", "number-nonblank"),
        flag("e"),
        flag("E", "show-ends"),
        flag("n", "number"),
        flag("s", "squeeze-blank"),
        flag("t"),
        flag("T", "show-tabs"),
        flag("u"),
        flag("v", "show-nonprinting"),
        flag("", "help"),
        flag("", "version"),
    ),
)

PWD = Syntax(
    abbreviations=True,
    options=(
        flag("L", "logical"),
        flag("P", "physical"),
        flag("", "help"),
        flag("", "version"),
    ),
)
