"""Offering to undo an approved edit after `make check` failed.

The offer is a second approval request of kind "edit" whose diff goes from
the new text back to the old one. On yes the previous text is restored in one
atomic, journaled step (or the file the edit created is deleted, with the
folders made for it), provided the file still holds exactly what the edit
wrote: if something rewrote it since (make check itself, say), nothing is
touched.
Every branch ends in a sentence that tells the model where things stand.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from coding_harness.daemon.seams import ApprovalDecision, ApprovalRequest
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.diff import unified_diff
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.journal import journaled
from coding_harness.daemon.tools.writes import (
    read_current,
    remove_created,
    temp_path,
    write_atomically,
)

if TYPE_CHECKING:
    from coding_harness.daemon.tools.edits import EditPlan


async def offer_revert(
    ctx: ToolContext, plan: EditPlan, created: list[Path], *, listed_before: bool
) -> str:
    """Ask whether to undo `plan`; the text to add to the tool result."""
    decision = await ctx.approver.ask(revert_request(plan))
    if decision.decision != "yes":
        return _kept(decision)
    temp = temp_path(plan.real)
    try:
        await journaled(
            ctx.events,
            plan.rel,
            temp,
            (plan.new, plan.current),
            lambda: _restore(plan, created, temp),
        )
    except ToolRefusal as refusal:
        return f"\nThe user asked to revert this edit, but {refusal}"
    except OSError as exc:
        return (
            f"\nThe user asked to revert this edit, but '{plan.rel}' could not be restored "
            f"({exc.strerror or exc}); it still holds the edited text."
        )
    if not listed_before and plan.rel in ctx.outcome.files_changed:
        ctx.outcome.files_changed.remove(plan.rel)
    ctx.events.emit("notice", {"message": f"reverted {plan.rel} after the failed make check"})
    if plan.current is None:
        state = f"'{plan.rel}' was deleted again, since the edit had created it"
    else:
        state = f"'{plan.rel}' holds its previous text again"
    return (
        f"\nThe user reverted this edit because make check failed: {state}. make check was "
        "not run again. Work out from the failure above what went wrong, then propose a "
        "corrected edit against the file as it is now."
    )


def revert_request(plan: EditPlan) -> ApprovalRequest:
    """The approval request for undoing `plan`: its diff runs from new back to old."""
    if plan.current is None:
        what = f"delete {plan.rel}, which the edit created"
    else:
        what = f"restore the previous text of {plan.rel}"
    return ApprovalRequest(
        kind="edit",
        path=plan.rel,
        diff=unified_diff(plan.new, plan.current or "", plan.rel),
        summary=f"revert the edit just applied, because make check failed: {what}",
    )


def _kept(decision: ApprovalDecision) -> str:
    reason = decision.reason.strip()
    said = f" (their reason: {reason})" if reason else ""
    return (
        f"\nThe user chose to keep this edit in place although make check failed{said}. "
        "Fix what make check reported, starting from the file as it is now."
    )


def _restore(plan: EditPlan, created: list[Path], temp: Path) -> None:
    if read_current(plan.real, plan.rel) != plan.new:
        raise ToolRefusal(
            f"'{plan.rel}' changed after the edit was written (make check may have rewritten "
            "it), so it was left as it is now. Read it before changing it again."
        )
    if plan.current is None:
        remove_created(plan.real, created)
    else:
        write_atomically(plan.real, plan.current, temp)
