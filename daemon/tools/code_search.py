"""grep: a regular-expression search of the workspace, run by ripgrep in a child process.

The search never runs inside the daemon. ripgrep (`rg`, shipped by the `ripgrep`
package) runs through `run_process`, so a pattern that would take hours holds neither
the event loop nor the interpreter: it costs its own time limit at most, and
cancelling the turn kills it. Patterns are Rust `regex` syntax (ripgrep's), which
matches in linear time and has no look-around or back-references. Without `rg` the
search runs the same way in a Python child (`grep_fallback.py`, Python `re` syntax),
and the result says so.

What is searched follows the file tools' rules: the start path is resolved inside the
workspace and must not be hidden; hidden names (dotfiles, `~` backups, `#...#`) are
neither searched nor shown; the walk follows no symlink, and a symlink to a regular file
inside the workspace (listed by `find`, resolved and checked here) is searched under its
own name; binary files and files over 8 MB are skipped; the output is capped. Ignore
files are obeyed as ripgrep obeys them (`.gitignore` at every level, also outside a git
repository, `.ignore`, `.rgignore`), and a symlink they ignore is not searched; a file
or folder named as the start path is searched even when ignored.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from coding_harness.daemon.index.ignore_rules import RIPGREP_IGNORES, IgnoreCheck
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import read_regular
from coding_harness.daemon.tools.shell.process import ProcessResult, run_process
from coding_harness.daemon.tools.workspace import Workspace, check_not_hidden

GREP_TIME_LIMIT = 20.0  # seconds; `agent.command_timeout` lowers it when smaller
GREP_MAX_MATCHES = 500
GREP_MAX_CHARS = 20_000
GREP_LINE_CHARS = 500
GREP_MAX_FILE_BYTES = 8_000_000
GREP_MAX_PATTERN_CHARS = 10_000
_RG_COLUMNS = 4_000  # bytes of a line ripgrep prints; longer lines come as a preview
_CAPTURE_CHARS = 400_000  # enough for every cap above, whatever the lines look like
_MAX_LINKS = 200
_HIDDEN_GLOBS = ("--glob=!*~", "--glob=!#*#")  # ripgrep leaves dotfiles out by itself
_RG_OPTIONS = (
    "--no-config",  # no RIPGREP_CONFIG_PATH
    "--no-require-git",  # .gitignore files count outside a git repository too
    "--no-messages",  # an unreadable file is skipped quietly
    *_HIDDEN_GLOBS,
    "--glob=!*\n*",  # a name with a line break could forge an output line
    "--sort=path",
    "--line-buffered",  # what was found before a time-out reaches us
    "--crlf",
    "--null",
    "--with-filename",
    "--line-number",
    "--no-heading",
    "--color=never",
    f"--max-filesize={GREP_MAX_FILE_BYTES}",
    f"--max-count={GREP_MAX_MATCHES + 1}",  # per file: past that no file can show more
    f"--max-columns={_RG_COLUMNS}",
    "--max-columns-preview",
)
_FALLBACK = ("-I", "-m", "coding_harness.daemon.tools.grep_fallback")
_FALLBACK_NOTE = (
    "[ripgrep ('rg') is missing, so this search ran in Python: the pattern was read as "
    "Python regex syntax. Install ripgrep with '{python} -m pip install ripgrep']"
)
_FIND_HIDDEN = ("(", "-name", ".*", "-o", "-name", "*~", "-o", "-name", "#*#", ")")


@dataclass(kw_only=True, slots=True, frozen=True)
class Match:
    path: str
    line: int
    text: str


class _SearchTimedOut(Exception):
    """The search ran past its time limit."""


def find_ripgrep() -> str | None:
    """The `rg` next to the daemon's Python (the package's copy), else on PATH."""
    beside = Path(sys.executable).parent / "rg"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


async def grep(
    workspace: Workspace,
    pattern: str,
    path: str,
    time_limit: float = GREP_TIME_LIMIT,
    use_ripgrep: bool | None = None,
) -> str:
    """Matching lines as `path:line:text` under a folder or in one file.

    `use_ripgrep`: None runs ripgrep when it is there, else the Python fallback;
    True insists on ripgrep, False runs the fallback (tests, the bench).
    """
    _check_pattern(pattern)
    rg = None if use_ripgrep is False else find_ripgrep()
    if rg is None and use_ripgrep:
        raise ToolRefusal(
            f"grep is unavailable: the ripgrep program 'rg' is neither next to "
            f"{sys.executable} nor on PATH. Install it with "
            f"'{sys.executable} -m pip install ripgrep' (or the system's ripgrep package)"
        )
    text = await _search(workspace, pattern, path, time_limit, rg)
    return text if rg else f"{text}\n{_FALLBACK_NOTE.format(python=sys.executable)}"


async def _search(
    workspace: Workspace, pattern: str, path: str, time_limit: float, rg: str | None
) -> str:
    target, is_dir = await asyncio.to_thread(_start, workspace, path)
    deadline = asyncio.get_running_loop().time() + time_limit
    if rg is None:
        program = [sys.executable, *_FALLBACK, pattern]
    else:
        program = [rg, *_RG_OPTIONS, "--regexp", pattern, "--"]
    try:
        links = await _linked_files(workspace, target, time_limit) if is_dir else []
        left = deadline - asyncio.get_running_loop().time()
        argv = [*program, target, *links]
        result = await run_process(argv, workspace.root, max(left, 0.0), _CAPTURE_CHARS)
    except _SearchTimedOut:
        return _timed_out([], time_limit)
    matches, cut = parse_output(result.output, _CAPTURE_CHARS)
    if result.timed_out:
        return _timed_out(matches, time_limit)
    if not matches and result.exit_code not in (0, 1):  # 0: only binary files matched
        _raise_failure(result, pattern)
    return render(matches, pattern, path, cut)


def _check_pattern(pattern: str) -> None:
    problem = ""
    if "\x00" in pattern:
        problem = "it contains a NUL byte"
    elif len(pattern) > GREP_MAX_PATTERN_CHARS:
        problem = f"it is longer than {GREP_MAX_PATTERN_CHARS} characters"
    else:
        try:
            pattern.encode("utf-8")
        except UnicodeEncodeError:
            problem = "it is not valid Unicode text"
    if problem:
        raise ToolRefusal(f"invalid regular expression: {problem}")


def _start(workspace: Workspace, path: str) -> tuple[str, bool]:
    """The start path as ripgrep is given it (`./` in front), and whether it is a folder."""
    real = workspace.resolve_visible(path)
    if not real.exists():
        raise ToolRefusal(f"'{path}' does not exist; use list_dir to see what is there")
    is_dir = real.is_dir()
    if not is_dir:
        read_regular(real, path, 0)  # refuses FIFOs, devices and the like
    rel = workspace.relative(real)
    if "\n" in rel:
        raise ToolRefusal(f"grep cannot search {rel!r}: its name holds a line break")
    return ("." if rel == "." else f"./{rel}"), is_dir


async def _linked_files(workspace: Workspace, target: str, time_limit: float) -> list[str]:
    """Symlinks below `target` to regular visible files inside the workspace."""
    find = shutil.which("find")
    if find is None:
        return []
    argv = [find, target, "-mindepth", "1", *_FIND_HIDDEN, "-prune", "-o", "-type", "l"]
    result = await run_process([*argv, "-print0"], workspace.root, time_limit, _CAPTURE_CHARS)
    if result.timed_out:
        raise _SearchTimedOut
    output = result.output
    if len(output) > _CAPTURE_CHARS:  # cut: only the head is whole
        output = output[: _CAPTURE_CHARS // 2]
    names = output.split("\x00")[:-1]  # the last piece is empty or cut off
    return await asyncio.to_thread(_searchable_links, workspace, target, names)


def _searchable_links(workspace: Workspace, target: str, names: list[str]) -> list[str]:
    start = target.removeprefix(".").removeprefix("/")
    ignores = IgnoreCheck(workspace.root, RIPGREP_IGNORES, f"{start}/" if start else "")
    kept: list[str] = []
    for name in names:
        if len(kept) >= _MAX_LINKS:
            break
        real = Path(os.path.realpath(workspace.root / name))
        if "\n" in name or not workspace.contains(real) or ignores.ignored(name[2:]):
            continue
        try:
            check_not_hidden(real.relative_to(workspace.root))
            info = real.stat()
        except (ToolRefusal, OSError):
            continue
        if stat.S_ISREG(info.st_mode) and info.st_size <= GREP_MAX_FILE_BYTES:
            kept.append(name)
    return kept


def parse_output(output: str, cap: int) -> tuple[list[Match], bool]:
    """ripgrep's `path NUL line:text` lines, and whether the output was cut short.

    `run_process` keeps the head and the tail of a long output and returns more than
    `cap` characters only then; its first `cap // 2` characters are the true head.
    """
    cut = len(output) > cap
    if cut:
        output = output[: cap // 2]
    lines = output.split("\n")[:-1]  # the last piece is empty or cut off
    matches = []
    for line in lines:
        name, nul, rest = line.partition("\x00")
        number, colon, text = rest.partition(":")
        if nul and colon and number.isdigit():  # else one of ripgrep's own notes
            path = name.removeprefix("./")
            matches.append(Match(path=path, line=int(number), text=text.removesuffix("\r")))
    matches.sort(key=lambda match: match.path.split("/"))  # linked files join the walk's order
    return matches, cut


@dataclass(kw_only=True, slots=True)
class _Report:
    lines: list[str] = field(default_factory=list)
    chars: int = 0
    stopped: str = ""

    def add(self, line: str) -> bool:
        """Record a match; False once a cap is reached."""
        if len(self.lines) >= GREP_MAX_MATCHES:
            self.stopped = f"stopped after {GREP_MAX_MATCHES} matches"
        elif self.chars + len(line) + 1 > GREP_MAX_CHARS:
            self.stopped = f"stopped at {GREP_MAX_CHARS} characters of output"
        else:
            self.lines.append(line)
            self.chars += len(line) + 1
        return not self.stopped


def _collect(matches: list[Match]) -> _Report:
    report = _Report()
    for match in matches:
        if not report.add(f"{match.path}:{match.line}:{_clip(match.text)}"):
            break
    return report


def render(matches: list[Match], pattern: str, path: str, cut: bool = False) -> str:
    report = _collect(matches)
    if not report.lines:
        return f"no matches for {pattern!r} in '{path}'"
    stopped = report.stopped or ("stopped: too much output" if cut else "")
    text = "\n".join(report.lines)
    if stopped:
        text += f"\n[{stopped}; narrow the pattern or the path to see the rest]"
    return text


def _timed_out(matches: list[Match], limit: float) -> str:
    note = f"search timed out after {limit:g} s; narrow the path or simplify the pattern"
    report = _collect(matches)
    if not report.lines:
        return note
    return "\n".join([*report.lines, f"[{note}; the matches above were found before]"])


def _raise_failure(result: ProcessResult, pattern: str) -> None:
    """A refusal for a search that found nothing because ripgrep failed."""
    message = result.output.strip().removeprefix("rg: ")
    if result.exit_code == 2 and "regex" in message:
        raise ToolRefusal(f"invalid regular expression {pattern!r}: {message[:2000]}")
    if result.exit_code in (2, 127):  # 127: it could not be started
        raise ToolRefusal(f"grep failed: {message[:2000]}")
    how = "was stopped" if result.exit_code is None else f"exited with {result.exit_code}"
    raise ToolRefusal(f"grep failed: the search {how} on this pattern; try a simpler pattern")


def _clip(line: str) -> str:
    if len(line) <= GREP_LINE_CHARS:
        return line
    if len(line.encode("utf-8", "replace")) > _RG_COLUMNS:  # ripgrep sent a preview
        return line[:GREP_LINE_CHARS] + "... [more characters not shown: a very long line]"
    return line[:GREP_LINE_CHARS] + f"... [{len(line) - GREP_LINE_CHARS} more characters]"
