"""propose_edit: the approval gate every write to the workspace goes through.

An edit names the whole old and new text of one file. It is checked against
the file on disk (trailing whitespace aside), shown as a diff, and then, by
mode: only shown (dry run), applied (`-y`), or put to the people attached to
the session. An applied edit is re-checked against the file, written
atomically with the file's mode kept, and followed by `make check`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.seams import ApprovalDecision, ApprovalRequest
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.diff import unified_diff
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.files import decode_text, read_regular
from coding_harness.daemon.tools.process import run_process, shorten
from coding_harness.daemon.tools.workspace import Workspace

CHECK_OUTPUT_CHARS = 2_000
MAX_EDIT_BYTES = 16_000_000
MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")


@dataclass(kw_only=True, slots=True, frozen=True)
class EditPlan:
    """One checked edit: where, what the file holds now, what it will hold."""

    real: Path
    rel: str
    current: str | None  # None for a file that does not exist yet
    new: str
    diff: str


async def propose_edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    """Check, show, ask (by mode), then write and run `make check`."""
    plan = await asyncio.to_thread(plan_edit, ctx.workspace, path, old, new)
    new_file = plan.current is None
    ctx.events.emit("diff", {"path": plan.rel, "diff": plan.diff, "new_file": new_file})
    if ctx.dry_run:
        ctx.outcome.dry_run_diffs += 1
        return (
            f"dry run: the diff for '{plan.rel}' was shown to the user and the file was "
            "deliberately not written, because the user asked only for a preview. This edit "
            "is complete: do not retry it or write the file any other way. Carry on, and end "
            "with a summary of the changes you proposed."
        )
    if ctx.auto_approve:
        return await apply_edit(ctx, plan, "applied (auto-approved)")
    request = ApprovalRequest(kind="edit", path=plan.rel, diff=plan.diff, summary=summarize(plan))
    decision = await ctx.approver.ask(request)
    if decision.decision != "yes":
        ctx.outcome.edits_rejected += 1
        return _declined(plan.rel, decision)
    return await apply_edit(ctx, plan, "applied")


def plan_edit(workspace: Workspace, path: str, old: str, new: str) -> EditPlan:
    """Validate an edit against the file on disk; `ToolRefusal` when it cannot go ahead."""
    real = workspace.resolve_for_write(path)
    rel = workspace.relative(real)
    current = read_current(real, rel)
    if current is None:
        if old.strip():
            raise ToolRefusal(
                f"stale base: '{rel}' does not exist, yet 'old' is not empty. Check the path "
                "with list_dir; to create a new file, pass old as an empty string."
            )
        if not new.strip():
            raise ToolRefusal(f"refused: will not create '{rel}' as an empty file")
        text = new if new.endswith("\n") else new + "\n"
    else:
        if old.rstrip() != current.rstrip():
            raise ToolRefusal(
                f"stale base: 'old' does not match what '{rel}' holds now (trailing "
                "whitespace aside). Read the file again and propose the edit against it."
            )
        if new.rstrip() == current.rstrip():
            raise ToolRefusal(f"no changes: '{rel}' already holds this content")
        text = keep_final_newline(current, new)
    return EditPlan(
        real=real, rel=rel, current=current, new=text, diff=unified_diff(current or "", text, rel)
    )


def keep_final_newline(current: str, new: str) -> str:
    """Give `new` the final newline the file has, when the model left it off."""
    if current.endswith("\n") and new and not new.endswith("\n"):
        return new + "\n"
    return new


def read_current(real: Path, rel: str) -> str | None:
    """The file's text, or None when there is no file yet."""
    if not real.exists():
        return None
    data, size = read_regular(real, rel, MAX_EDIT_BYTES + 1)
    if size > MAX_EDIT_BYTES or len(data) > MAX_EDIT_BYTES:
        raise ToolRefusal(f"refused: '{rel}' is too large to edit as a whole file")
    return decode_text(data, True, rel)


def summarize(plan: EditPlan) -> str:
    """A one-line description of the edit for the approval prompt."""
    if plan.current is None:
        count = plan.new.count("\n")
        return f"create {plan.rel} ({count} line{'' if count == 1 else 's'})"
    body = plan.diff.splitlines()[2:]
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    return f"edit {plan.rel} (+{added} -{removed} lines)"


def _declined(rel: str, decision: ApprovalDecision) -> str:
    if decision.decision == "skip":
        reason = decision.reason.strip() or "(no reason given)"
        return f"the user skipped this change to '{rel}', so it was not written. Reason: {reason}"
    return f"the user rejected this change to '{rel}'; the file was not written."


async def apply_edit(ctx: ToolContext, plan: EditPlan, label: str) -> str:
    """Write the approved edit, then run `make check`."""
    try:
        await asyncio.to_thread(_write_if_unchanged, plan)
    except OSError as exc:
        return (
            f"edit not applied: could not write '{plan.rel}' ({exc.strerror or exc}); "
            "the file was left as it was."
        )
    ctx.outcome.record_change(plan.rel)
    created = " (new file)" if plan.current is None else ""
    return f"{label}: wrote '{plan.rel}'{created}. {await run_check(ctx)}"


def _write_if_unchanged(plan: EditPlan) -> None:
    if read_current(plan.real, plan.rel) != plan.current:
        raise ToolRefusal(
            f"not applied: the file changed since the diff was shown ('{plan.rel}' no longer "
            "holds what the diff was made against). Read it again and propose a new edit."
        )
    write_atomically(plan.real, plan.new)


def write_atomically(target: Path, text: str) -> None:
    """Replace `target` in one step; on any error the old file stays as it was."""
    created = _make_parents(target.parent)
    try:
        _replace(target, text.encode("utf-8"))
    except OSError:
        for folder in reversed(created):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _make_parents(folder: Path) -> list[Path]:
    """Create missing folders top-down; returns the ones made."""
    missing: list[Path] = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    missing.reverse()
    for each in missing:
        each.mkdir()
    return missing


def _replace(target: Path, data: bytes) -> None:
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
    temp = target.with_name(f".harness-{secrets.token_hex(6)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            temp.chmod(mode)
        temp.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def has_makefile(root: Path) -> bool:
    return any((root / name).is_file() for name in MAKEFILE_NAMES)


async def run_check(ctx: ToolContext) -> str:
    """Run `make check` when there is a makefile; the sentence to add to the result."""
    if not has_makefile(ctx.workspace.root):
        return "There is no Makefile in the workspace, so make check was skipped."
    result = await run_process(["make", "check"], ctx.workspace.root, ctx.check_timeout)
    passed = result.exit_code == 0
    output = shorten(result.output, CHECK_OUTPUT_CHARS)
    ctx.events.emit(
        "check.result", {"passed": passed, "exit_code": result.exit_code, "output": output}
    )
    ctx.outcome.last_check_failed = not passed
    if passed:
        return "make check passed."
    if result.timed_out:
        return f"make check FAILED: it timed out after {ctx.check_timeout:g} s.\n{output}"
    return f"make check FAILED (exit {result.exit_code}):\n{output}"
