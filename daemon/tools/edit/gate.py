"""propose_edit, and the approval gate every write to the workspace goes through.

An edit names the whole old and new text of one file (replace_text builds the
same `EditPlan` from one snippet). It is checked against the file on disk
(trailing whitespace aside), shown as a diff, and then, by mode: only shown
(dry run), applied (`-y`, or the session's accept-edits mode: the two behave
alike here), or put to the people attached to the session. An edit that
changes what `make check` runs (a makefile, a `.mk` file, a file the makefile
includes, pyproject.toml) is always put to the people, `-y` or not, and its
prompt says why. In the read-only mode nothing is written, nor even shown: the
write is refused with a result telling the model to put it in its plan (the
tool is not offered then, so this is for a model that calls it anyway). An
applied edit is re-checked against the file, written atomically with the
file's mode kept (and journaled before and after: `journal.py`), and followed
by `make check`. The approval prompt offers one more answer than yes, no and
skip: "revert" applies the edit like yes and puts the file back if `make check`
then fails (`revert.py`); nothing is asked after the check. Every applied edit
is announced by one "applied" notice, so `-y` shows one line per file written.
A write the disk refuses leaves the file as it was and ends the turn with exit
code 3, like a rejected edit. A file an attached editor holds with unsaved
changes is edited on the editor's text and written back through the editor, or
refused when it takes no writes (`held.py`).
"""

from __future__ import annotations

import asyncio
import errno
from pathlib import Path

from coding_harness.daemon.agent.seams import ApprovalDecision, ApprovalRequest, FailedResult
from coding_harness.daemon.tools.build_files import changes_check, note_written
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.checks import run_check
from coding_harness.daemon.tools.edit.held import refuse_unwritable, unsaved_text, write_held
from coding_harness.daemon.tools.edit.journal import journaled
from coding_harness.daemon.tools.edit.plan import EditPlan, plan_edit
from coding_harness.daemon.tools.edit.revert import REVERT, revert_edit
from coding_harness.daemon.tools.edit.seen import seen_texts
from coding_harness.daemon.tools.edit.writes import read_current, temp_path, write_atomically
from coding_harness.daemon.tools.errors import ToolRefusal

KEPT = (
    "\nThe edit stays in place. Fix what make check reported, starting from the file as it is now."
)
CHANGES_CHECK = "this changes what `make check` runs"
DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
READ_ONLY_REFUSAL = (
    "refused: this session is in read-only mode (plan mode), so nothing may be written and "
    "'{path}' was left as it is. Do not try another way to write it: describe the change as a "
    "step of your plan; the user switches the mode if they accept the plan."
)
AUTO_APPROVE_KEPT = (
    "\nThe edit stays in place: with auto-approve nothing is reverted automatically. "
    "Fix what make check reported, starting from the file as it is now."
)


async def propose_edit(ctx: ToolContext, path: str, old: str, new: str) -> str:
    """Check the whole-file edit (against the editor's unsaved text, when it holds one),
    then put it through the gate."""
    held = await unsaved_text(ctx, path)
    plan = await asyncio.to_thread(plan_edit, ctx.workspace, path, old, new, held)
    return await submit_edit(ctx, plan)


async def submit_edit(ctx: ToolContext, plan: EditPlan, *, always_ask: str = "") -> str:
    """Show the diff, then by mode: preview only, apply, or ask and apply on yes or revert.

    `always_ask` names a reason to ask even under -y (write_file over a file the model
    never read); it ends the prompt's summary line.
    """
    if ctx.read_only:
        raise ToolRefusal(READ_ONLY_REFUSAL.format(path=plan.rel))
    ctx.events.emit("diff", {"path": plan.rel, "diff": plan.diff, "new_file": plan.current is None})
    if ctx.dry_run:
        ctx.outcome.dry_run_diffs += 1
        return (
            f"dry run: the diff for '{plan.rel}' was shown to the user and the file was "
            "deliberately not written, because the user asked only for a preview. This edit "
            "is complete: do not retry it or write the file any other way. Carry on, and end "
            "with a summary of the changes you proposed."
        )
    refuse_unwritable(ctx, plan)
    shapes_check = await asyncio.to_thread(changes_check, ctx.workspace.root, plan.rel)
    reasons = [CHANGES_CHECK] if shapes_check else []
    reasons += [always_ask] if always_ask else []
    if ctx.accepts_edits and not reasons:
        return await apply_edit(ctx, plan, "applied (auto-approved)")
    summary = "; ".join([summarize(plan), *reasons])
    if reasons and ctx.accepts_edits:
        summary += ", so it is asked even with " + (
            "-y" if ctx.auto_approve else "the accept-edits mode"
        )
    request = ApprovalRequest(kind="edit", path=plan.rel, diff=plan.diff, summary=summary)
    decision = await ctx.approver.ask(request)
    answer: str = decision.decision
    if answer not in ("yes", REVERT):
        ctx.outcome.edits_rejected += 1
        return _declined(plan.rel, decision)
    return await apply_edit(ctx, plan, "applied", revert_on_failure=answer == REVERT)


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
        return FailedResult(
            f"the user skipped this change to '{rel}', so it was not written. Reason: {reason}"
        )
    refused = f"the change to '{rel}' was refused; the file was not written."
    return FailedResult(
        f"{refused} Reason: {decision.reason.strip()}"
        if decision.reason.strip()
        else (f"the user rejected this change to '{rel}'; the file was not written.")
    )


async def apply_edit(
    ctx: ToolContext, plan: EditPlan, label: str, *, revert_on_failure: bool = False
) -> str:
    """Write the approved edit and run `make check`; revert when it fails, if so chosen."""
    listed_before = plan.rel in ctx.outcome.files_changed
    temp = temp_path(plan.real)
    try:
        if plan.in_editor:
            created: list[Path] = []
            await write_held(ctx, plan, plan.new, plan.current)
        else:
            created = await journaled(
                ctx.events,
                plan.rel,
                temp,
                (plan.current, plan.new),
                lambda: _write_if_unchanged(plan, temp),
            )
    except OSError as exc:
        ctx.outcome.edits_rejected += 1
        headline, advice = _not_written(plan.rel, exc)
        ctx.events.emit("error", {"message": headline, "kind": "edit"})
        return FailedResult(f"{headline}. {advice}")
    ctx.outcome.record_change(plan.rel)
    seen_texts(ctx).note(plan.rel, plan.new)
    await asyncio.to_thread(note_written, ctx, plan.rel)
    note = " (new file)" if plan.current is None else ""
    ctx.events.emit("notice", {"message": f"{label}: {plan.rel}{note}", "path": plan.rel})
    plan_note = ctx.plans.after_write(plan.rel, plan.new) if ctx.plans else ""
    check = await run_check(ctx)
    result = f"{label}: wrote '{plan.rel}'{note}. {check.text}{plan_note}"
    if check.passed is not False:
        return result
    if revert_on_failure and plan.in_editor:
        return result + await _revert_held(ctx, plan)
    if revert_on_failure:
        return result + await revert_edit(ctx, plan, created, listed_before=listed_before)
    return result + (AUTO_APPROVE_KEPT if ctx.accepts_edits else KEPT)


def _not_written(rel: str, exc: OSError) -> tuple[str, str]:
    """What to tell the people and the model of a write the file system refused."""
    cause = exc.strerror or str(exc)
    kept = "The file was left exactly as it was and make check was not run."
    if exc.errno in DISK_FULL:
        return (
            f"disk full: edit not applied to '{rel}' ({cause})",
            f"{kept} Tell the user the disk is full; do not retry until they have freed space.",
        )
    return f"edit not applied: could not write '{rel}' ({cause})", kept


async def _revert_held(ctx: ToolContext, plan: EditPlan) -> str:
    """Put the editor's text back after the failed check, through the editor."""
    try:
        await write_held(ctx, plan, plan.current or "", plan.new)
    except (ToolRefusal, OSError) as exc:
        return f"\nThe user chose to revert this edit if make check failed, but {exc}"
    seen_texts(ctx).forget(plan.rel)
    ctx.events.emit("notice", {"message": f"reverted {plan.rel} after the failed make check"})
    return (
        f"\nThe user had chosen to revert this edit if make check failed, so the editor's "
        f"text of '{plan.rel}' was put back. Work out from the failure above what went "
        "wrong, then propose a corrected edit against the file as it is now."
    )


def _write_if_unchanged(plan: EditPlan, temp: Path) -> list[Path]:
    if read_current(plan.real, plan.rel) != plan.current:
        raise ToolRefusal(
            f"not applied: the file changed since the diff was shown ('{plan.rel}' no longer "
            "holds what the diff was made against). Read it again and propose a new edit."
        )
    return write_atomically(plan.real, plan.new, temp)
