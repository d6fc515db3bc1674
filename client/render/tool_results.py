"""What a tool's result shows under its call line: an outcome, or the output folded.

The daemon's `tool.result` carries the text the model was given (its first 4,000
characters). A result that did not do what the call asked reads as such here,
never as the dim line of a call that ran:

- a refusal is one red line with the way to allow what was refused, when there
  is one (`/allow-cmd git`, `/mode accept-edits`): the daemon marks it with
  `failed: true`; from a daemon without the flag, it is told by its wording
  (`refused: ...`, `Error: ...`);
- an edit previewed under `--dry-run` says `not written: dry run`;
- an edit or command the user rejected or skipped says so.

A command's output (run_shell) and an MCP tool's answer are a folded block: the
first FOLD_HEAD and last FOLD_TAIL lines, how many are hidden between, and the
command's exit code; `whole` (`--verbose`, or the REPL's key) shows every line.
Standard library only: the one-shot printer uses it.
"""

from __future__ import annotations

import re

from coding_harness.client.render.sanitize import one_line

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

Line = tuple[str, str]  # (text, style)

FOLD_HEAD = 3
FOLD_TAIL = 3
REASON_WIDTH = 200
FIRST = "  ⎿ "
NEXT = "    "
MCP_PREFIX = "mcp__"

_NOT_ALLOWED = re.compile(r"^refused: '([^'\n]+)' is not allowed")
_EXIT = re.compile(r"\n?\((exit -?\d+|killed by a signal|timed out after [^\n]*)\)\s*$")
_DRY_RUN = re.compile(r"^dry run: the diff for '([^'\n]*)'")
_DECLINED = re.compile(
    r"^(the user (rejected|skipped) this change to '([^'\n]*)'"
    r"|the change to '([^'\n]*)' was refused"
    r"|the user (declined|skipped|rejected) (to run|the command|the call of) )"
)
_MCP_FRAME = re.compile(r"^\[result of the MCP tool [^\n]*\]\n|\n\[end of MCP tool result\]\s*$")
_WRITE_TOOLS = ("propose_edit", "replace_text", "write_file")


class Outcome:
    """A result read: `kind` is `ran`, `refused`, `dry_run` or `declined`; `lines` the
    block to print under the call (folded), `whole` the same unfolded; `path` the file
    of a rejected edit."""

    __slots__ = ("kind", "lines", "path", "whole")

    def __init__(
        self, kind: str, lines: list[Line], whole: list[Line] | None = None, path: str = ""
    ) -> None:
        self.kind, self.lines, self.path = kind, lines, path
        self.whole = lines if whole is None else whole


def read_result(name: str, result: str, more: str = "--verbose", flag: object = None) -> Outcome:
    """What the result of tool `name` says happened, and the lines that show it; a
    folded output names `more` as what shows it whole. `flag` is the daemon's `failed`
    on `tool.result`; without a boolean (a daemon from before it) the wording decides."""
    failed = flag if isinstance(flag, bool) else None
    if failed is None:
        failed = result.startswith(("refused:", "Error:", "Error from the MCP tool"))
    elif failed and _DECLINED.match(result):
        failed = False  # a rejected or skipped change: shown as not written, below
    if failed:
        return Outcome("refused", _refusal(name, result))
    if name in _WRITE_TOOLS and (found := _DRY_RUN.match(result)):
        return Outcome("dry_run", [(f"{FIRST}not written: dry run ({found.group(1)})", "yellow")])
    if declined := _DECLINED.match(result):
        path = declined.group(3) or declined.group(4) or ""
        what = f"edit rejected: {path} not written" if path else one_line(result, REASON_WIDTH)
        if declined.group(2) == "skipped":
            what = f"edit skipped: {path} not written"
        return Outcome("declined", [(FIRST + what, "yellow")], path=path)
    if name == "run_shell":
        return _command(result, more)
    if name.startswith(MCP_PREFIX):
        body = _MCP_FRAME.sub("", result).split("\n")
        return Outcome("ran", fold(body, "", more=more), fold(body, "", whole=True))
    return Outcome("ran", [])


def _refusal(name: str, result: str) -> list[Line]:
    """The refusal's first sentence, and how to allow what it refused."""
    first = result.strip().split("\n")[0]
    if "read-only mode" in first:
        what = "nothing is written" if name in _WRITE_TOOLS else "this command may change files"
        return [
            (f"{FIRST}refused: the session is read-only (plan mode), and {what}", "red"),
            (f"{NEXT}`/mode ask` or `/mode accept-edits` (or --mode) leaves read-only", "yellow"),
        ]
    sentence = first.split(". ", 1)[0]
    lines: list[Line] = [(FIRST + one_line(sentence, REASON_WIDTH), "red")]
    if found := _NOT_ALLOWED.match(result):
        program = found.group(1)
        lines.append(
            (f"{NEXT}`/allow-cmd {program}` in the REPL lets it run in this session", "yellow")
        )
    return lines


def _command(result: str, more: str) -> Outcome:
    """run_shell's report: its output, then `(exit N)` (or how it was stopped)."""
    found = _EXIT.search(result)
    status = found.group(1) if found else ""
    output = result[: found.start()] if found else result
    lines = output.split("\n") if output.strip() else []
    style = "dim" if status == "exit 0" else "red"
    folded = fold(lines, status, style, more=more)
    return Outcome("ran", folded, fold(lines, status, style, whole=True))


def fold(
    lines: Sequence[str],
    status: str,
    status_style: str = "dim",
    *,
    whole: bool = False,
    more: str = "--verbose",
) -> list[Line]:
    """`lines` under `⎿`, the middle hidden past FOLD_HEAD + FOLD_TAIL + 1 of them unless
    `whole`, then `status` (an exit code) on its own line."""
    lines = list(lines)
    while lines and not lines[-1].strip():
        lines.pop()
    hidden = len(lines) - FOLD_HEAD - FOLD_TAIL
    shown: list[Line] = [(line, "dim") for line in lines]
    if hidden > 1 and not whole:
        hint = f"… {hidden} more lines ({more} shows them)"
        shown = [*shown[:FOLD_HEAD], (hint, "dim"), *shown[-FOLD_TAIL:]]
    if status:
        shown.append((status, status_style))
    return [((FIRST if i == 0 else NEXT) + text, style) for i, (text, style) in enumerate(shown)]
