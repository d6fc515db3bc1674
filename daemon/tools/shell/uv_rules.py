"""uv's argument rules, written as data (the tables `uv_gate.py` applies).

uv subcommands come in three kinds. Read-only ones (`UV_COMMANDS` with access
"run") run freely; `uv run` and `uv sync` (access "ask") run project code and
may download packages, so the user is asked first, as for an edit; every other
subcommand is refused, with its reason where `UV_REFUSED` knows one. Options
follow uv's command line (clap): no abbreviations, global options anywhere
before a `uv run` command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from coding_harness.daemon.tools.shell.command_rules import (
    Option,
    Syntax,
    flag,
    path_option,
    refused,
)

_UV_SOURCES = (
    "uv uses only the package sources the project declares; another index, "
    "find-links or trusted host is not allowed"
)

# Options uv accepts anywhere (clap `global` arguments). clap takes no abbreviations.
UV_GLOBAL: tuple[Option, ...] = (
    flag("q", "quiet"),
    flag("v", "verbose"),
    flag("", "no-progress"),
    flag("", "color", value="required", accepts="auto|never"),
    flag("", "offline"),
    flag("n", "no-cache"),
    flag("", "native-tls"),
    flag("", "no-python-downloads"),
    flag("", "no-config"),
    flag("h", "help"),
    path_option("", "directory"),
    path_option("", "project"),
    refused("", "config-file", value="required", why="it reads uv settings from another file"),
    refused("", "cache-dir", value="required", why="uv keeps its own cache folder"),
    refused(
        "p",
        "python",
        value="required",
        why="it picks another interpreter, which uv may download; the project's own is used",
    ),
    refused(
        "i",
        "index-url",
        "index",
        "extra-index-url",
        "default-index",
        value="required",
        why=_UV_SOURCES,
    ),
    refused(
        "f",
        "find-links",
        "allow-insecure-host",
        "trusted-host",
        "keyring-provider",
        "index-strategy",
        value="required",
        why=_UV_SOURCES,
    ),
    refused(
        "",
        "with",
        "with-editable",
        "with-requirements",
        value="required",
        why="it adds packages the project does not declare, fetched from the network",
    ),
    refused(
        "U",
        "upgrade",
        "reinstall",
        "refresh",
        why="it upgrades or re-fetches packages from the network",
    ),
)

# `uv -V`, `uv --version`, `uv --help`: no subcommand at all.
UV_TOP = Syntax(options=(*UV_GLOBAL, flag("V", "version")))

UvAccess = Literal["run", "ask"]


@dataclass(kw_only=True, slots=True, frozen=True)
class UvCommand:
    """A uv subcommand run_shell accepts: run freely (read-only) or asked of the user."""

    access: UvAccess
    syntax: Syntax  # its own options; UV_GLOBAL is added to them


_PACKAGE = r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}"
_DEPTH = flag("d", "depth", value="required", accepts=r"[0-9]{1,3}")
_TREE = (
    _DEPTH,
    flag("", "invert"),
    flag("", "no-dedupe"),
    flag("", "package", value="required", accepts=_PACKAGE),
    flag("", "prune", value="required", accepts=_PACKAGE),
)
# What selects the parts of a project that `uv run` and `uv sync` install.
_PROJECT_PARTS = (
    flag("", "frozen"),
    flag("", "locked"),
    flag("", "no-sync"),
    flag("", "extra", value="required", accepts=_PACKAGE),
    flag("", "all-extras"),
    flag("", "dev"),
    flag("", "no-dev"),
    flag("", "group", value="required", accepts=_PACKAGE),
    flag("", "only-group", value="required", accepts=_PACKAGE),
    flag("", "no-group", value="required", accepts=_PACKAGE),
    flag("", "all-groups"),
    flag("", "package", value="required", accepts=_PACKAGE),
    flag("", "all-packages"),
    flag("", "exact"),
    flag("", "no-editable"),
)

UV_COMMANDS: dict[tuple[str, ...], UvCommand] = {
    ("version",): UvCommand(
        access="run",
        syntax=Syntax(
            options=(
                flag("", "short"),
                flag("", "output-format", value="required", accepts="text|json"),
            )
        ),
    ),
    ("help",): UvCommand(access="run", syntax=Syntax(options=(), operands="names")),
    ("tree",): UvCommand(
        access="run",
        syntax=Syntax(
            options=(*_TREE, flag("", "frozen"), flag("", "universal"), flag("", "no-dev")),
            requires=("frozen",),
        ),
    ),
    ("pip", "list"): UvCommand(
        access="run",
        syntax=Syntax(
            options=(
                flag("", "format", value="required", accepts="columns|freeze|json"),
                flag("e", "editable"),
                flag("", "exclude-editable"),
                flag("", "exclude", value="required", accepts=_PACKAGE),
                flag("", "strict"),
            )
        ),
    ),
    ("pip", "show"): UvCommand(
        access="run",
        syntax=Syntax(options=(flag("", "files"), flag("", "strict")), operands="names"),
    ),
    ("pip", "freeze"): UvCommand(
        access="run",
        syntax=Syntax(options=(flag("", "exclude-editable"), flag("", "strict"))),
    ),
    ("pip", "tree"): UvCommand(access="run", syntax=Syntax(options=(*_TREE, flag("", "strict")))),
    ("pip", "check"): UvCommand(access="run", syntax=Syntax(options=())),
    ("run",): UvCommand(
        access="ask",
        syntax=Syntax(
            operands="command",
            options=(
                *_PROJECT_PARTS,
                flag("m", "module"),
                flag("", "no-project"),
                flag("", "isolated"),
                path_option("", "env-file"),
                flag("", "no-env-file"),
            ),
        ),
    ),
    ("sync",): UvCommand(
        access="ask",
        syntax=Syntax(
            options=(
                *_PROJECT_PARTS,
                flag("", "inexact"),
                flag("", "no-install-project"),
                flag("", "dry-run"),
                flag("", "check"),
            )
        ),
    ),
}

# Subcommands that hold others (`uv pip list`): the next word names the command.
UV_GROUPS = frozenset({"pip", "tool", "python", "cache", "self", "auth", "workspace"})

_UV_CHANGES_DEPENDENCIES = (
    "it changes the project's dependencies; propose the edit to pyproject.toml instead, "
    "or ask the user to run it"
)
_UV_RESOLVES = (
    "it resolves packages from the network and may build them, which runs their code; "
    "`uv sync` (asked of the user) installs what the project declares"
)

# Known subcommands and why they are refused; any other is refused as unknown.
UV_REFUSED: dict[tuple[str, ...], str] = {
    ("pip", "install"): _UV_RESOLVES,
    ("pip", "sync"): _UV_RESOLVES,
    ("pip", "compile"): _UV_RESOLVES,
    ("pip", "uninstall"): "it removes packages from the environment; ask the user to run it",
    ("lock",): _UV_RESOLVES,
    ("export",): _UV_RESOLVES,
    ("add",): _UV_CHANGES_DEPENDENCIES,
    ("remove",): _UV_CHANGES_DEPENDENCIES,
    ("tool",): "it installs and runs tools fetched from the network",
    ("build",): "it builds the project, which runs its build backend",
    ("publish",): "it uploads packages; only the user publishes",
    ("init",): "it creates projects; propose the files as edits instead",
    ("venv",): "it creates environments; `uv sync` (asked of the user) does that",
    ("python",): "it installs or changes Python interpreters; ask the user to run it",
    ("self",): "it updates uv itself; ask the user to run it",
    ("cache",): "it changes uv's cache outside the workspace",
    ("auth",): "it handles credentials, which the model never sees",
    ("format",): "it downloads a formatter and rewrites files without approval",
}
