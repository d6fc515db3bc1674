"""The five built-in coding tools, registered with their model-facing descriptions.

Names and parameters are part of the contract (prompts and scripted tests use
them). `build_tools` binds them to one turn's `ToolContext`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from coding_harness.daemon.tools import edits, files, shell
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.registry import BoundTools, ToolRegistry

BUILTIN_TOOLS = ToolRegistry()

_PATH = "Path relative to the workspace root; '.' is the root itself."
_HIDDEN = "Hidden files (dotfiles, names ending in '~', '#...#') are off limits."


@BUILTIN_TOOLS.tool(
    "read_file",
    f"Return the full text of one file in the workspace. {_HIDDEN} Very long files "
    "are cut off with a note.",
    [("path", _PATH)],
)
async def read_file(ctx: ToolContext, *, path: str) -> str:
    return await asyncio.to_thread(files.read_file, ctx.workspace, path)


@BUILTIN_TOOLS.tool(
    "list_dir",
    "List a folder's entries, sorted, with '/' after each subfolder. Hidden entries are left out.",
    [("path", f"Folder to list. {_PATH}")],
)
async def list_dir(ctx: ToolContext, *, path: str) -> str:
    return await asyncio.to_thread(files.list_dir, ctx.workspace, path)


@BUILTIN_TOOLS.tool(
    "grep",
    "Search files for lines matching an extended regular expression (Python `re` "
    "syntax), recursively under a folder or in one file. Prints 'path:line:text' per "
    "match. Binary and hidden files are skipped; many matches are cut off with a note.",
    [
        ("pattern", "Extended regular expression, e.g. 'def \\w+_test' or 'TODO|FIXME'."),
        ("path", f"Folder or file to search. {_PATH}"),
    ],
)
async def grep(ctx: ToolContext, *, pattern: str, path: str) -> str:
    return await asyncio.to_thread(files.grep, ctx.workspace, pattern, path)


@BUILTIN_TOOLS.tool(
    "run_shell",
    "Run one command in the workspace root and return its combined output and exit "
    f"code. Allowed programs: {', '.join(shell.ALLOWED)}. There is no shell: pipes, "
    "';', '&&', redirections, globs and $(...) do not work. Arguments may not name "
    "hidden files or paths outside the workspace, and make always uses the "
    "workspace's own Makefile.",
    [("command", "The command line, e.g. 'make test' or 'ls src'.")],
)
async def run_shell(ctx: ToolContext, *, command: str) -> str:
    return await shell.run_shell(ctx, command)


@BUILTIN_TOOLS.tool(
    "propose_edit",
    "Create or change a file by giving its whole old and new text. The user sees a "
    "diff and decides; once written, `make check` runs and its result is returned. "
    "'old' must be the file's current text (read it first); a mismatch is refused as "
    "a stale base.",
    [
        ("path", f"File to change or create. {_PATH}"),
        ("old", "The file's full current text, exactly as read; an empty string for a new file."),
        ("new", "The file's full new text."),
    ],
)
async def propose_edit(ctx: ToolContext, *, path: str, old: str, new: str) -> str:
    return await edits.propose_edit(ctx, path, old, new)


def build_tools(ctx: ToolContext, names: Iterable[str] | None = None) -> BoundTools:
    """The executor for one turn: the built-in tools (or `names` of them) bound to `ctx`."""
    return BoundTools(BUILTIN_TOOLS, ctx, names)
