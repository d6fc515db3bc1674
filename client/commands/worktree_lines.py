"""How worktrees look: the listing, a diff, a merge's and a removal's outcome, and
the line a new session in a worktree is announced with.

Shared by `harness worktree` (`worktree.py`), the REPL's `/worktree` and the
session set-up; each takes the daemon's answer and a `Style`. Every value the
daemon sends is shown through `field` or `one_line`, so a folder name holding an
escape stays on its line.
"""

from __future__ import annotations

from typing import Any, TextIO

from coding_harness.client.render.sanitize import field, one_line
from coding_harness.client.render.style import Style
from coding_harness.protocol import exit_codes

NONE_MADE = "no worktrees; `harness --worktree [NAME] ...` makes one for a session"
_STATE_STYLE = {"clean": "green", "changed": "yellow", "missing": "red"}


def changes_word(worktree: dict[str, Any]) -> str:
    """`2 files changed, 1 commit`, `merged` or `nothing yet`."""
    changed, ahead = len(worktree.get("changed") or []), worktree.get("ahead")
    parts = []
    if changed:
        parts.append(f"{changed} file{'' if changed == 1 else 's'} changed")
    if ahead:
        parts.append(f"{ahead} commit{'' if ahead == 1 else 's'}")
    if parts:
        return ", ".join(parts)
    return "nothing to merge" if worktree.get("state") != "missing" else "folder gone"


def print_list(listing: dict[str, Any], out: TextIO, style: Style, err: Style) -> int:
    """The table on `out`; under it, on `err`, what to do about a missing folder."""
    worktrees = [w for w in listing.get("worktrees") or [] if isinstance(w, dict)]
    if not worktrees:
        style.line(NONE_MADE, "dim")
        return exit_codes.OK
    head = f"{'NAME':<16} {'STATE':<8} {'SESSION':<8} {'BRANCH':<24} {'FROM':<12} CHANGES  PATH"
    out.write(head + "\n")
    for w in worktrees:
        state = field(str(w.get("state", "?")))
        painted = style.paint(f"{state:<8}", _STATE_STYLE.get(state, ""))
        session = field(str(w.get("session") or "-")).rsplit("-", 1)[-1]
        out.write(
            f"{field(str(w.get('name'))):<16} {painted} "
            f"{session:<8} {field(str(w.get('branch'))):<24} {field(str(w.get('base'))):<12} "
            f"{changes_word(w)}  {field(str(w.get('path')))}\n"
        )
    out.flush()
    for w in worktrees:
        if w.get("state") == "missing":
            err.line(missing_hint(w), "yellow")
    return exit_codes.OK


def missing_hint(worktree: dict[str, Any]) -> str:
    name, branch = field(str(worktree.get("name"))), field(str(worktree.get("branch")))
    kept = (
        f"its branch {branch} keeps what was committed"
        if worktree.get("branch_exists")
        else (f"its branch {branch} is gone too")
    )
    return (
        f"{name}: the folder was deleted by hand; {kept}: `harness worktree merge {name}` "
        f"merges that, `harness worktree rm {name}` clears it"
    )


def print_diff(answer: dict[str, Any], out: TextIO, style: Style) -> int:
    diff = str(answer.get("diff") or "")
    if answer.get("note"):
        style.line(one_line(str(answer["note"]), 400), "yellow")
    if not diff:
        style.line("no changes", "dim")
        return exit_codes.OK
    painter = Style(out, color=style.color)
    for line in diff.splitlines():
        color = ""
        if line.startswith(("diff --git", "index ", "---", "+++", "@@", "new file")):
            color = "cyan"
        elif line.startswith("+"):
            color = "green"
        elif line.startswith("-"):
            color = "red"
        out.write(painter.paint(line, color) + "\n")
    out.flush()
    return exit_codes.OK


def print_merge(answer: dict[str, Any], style: Style) -> int:
    message = one_line(str(answer.get("message") or ""), 600)
    if answer.get("merged"):
        style.line(message, "green")
        return exit_codes.OK
    conflicts = [c for c in answer.get("conflicts") or [] if isinstance(c, str)]
    style.line(message, "red" if conflicts else "")
    for path in conflicts:
        style.line(f"  conflict: {field(path)}", "red")
    return exit_codes.MODEL_ERROR if conflicts else exit_codes.OK


def print_remove(answer: dict[str, Any], style: Style) -> int:
    message = one_line(str(answer.get("message") or ""), 600)
    if answer.get("removed"):
        style.line(message, "yellow" if answer.get("dropped") else "green")
        return exit_codes.OK
    style.line(message, "red")
    return exit_codes.MODEL_ERROR


def print_created(session: dict[str, Any], style: Style, *, quiet: bool) -> None:
    """After `--worktree`: where the session works (unless quiet), and what a dirty
    tree means for its branch (always)."""
    worktree = session.get("worktree")
    if not isinstance(worktree, dict):
        return
    if not quiet:
        style.line(
            f"worktree {field(str(worktree.get('name')))} on {field(str(worktree.get('branch')))}"
            f" (from {field(str(worktree.get('base')))}): {field(str(worktree.get('path')))}",
            "dim",
        )
    if worktree.get("notice"):
        style.line(f"note: {one_line(str(worktree['notice']), 600)}", "yellow")
