"""Undoing an applied edit after the check failed, when the person chose `[r]evert`.

The choice is made once, in the approval prompt of the edit itself: answering
"revert" applies the edit and runs the check like "yes", and when the check
fails the previous text is restored in one atomic, journaled step (or the file
the edit created is deleted, with the folders made for it). Nothing more is
asked, so a piped one-shot, which can give only one answer, can choose it too.
The file is restored only if it still holds exactly what the edit wrote: if
something rewrote it since (the check itself, say), nothing is touched.
Every branch ends in a sentence that tells the model where things stand.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from coding_harness.daemon.tools.build_files import note_written
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.journal import journaled
from coding_harness.daemon.tools.edit.plan import EditPlan
from coding_harness.daemon.tools.edit.seen import seen_texts
from coding_harness.daemon.tools.edit.writes import (
    read_current,
    remove_created,
    temp_path,
    write_atomically,
)
from coding_harness.daemon.tools.errors import ToolRefusal

# The approval answer that applies an edit and reverts it if the check then fails.
REVERT = "revert"


async def revert_edit(
    ctx: ToolContext, plan: EditPlan, created: list[Path], *, listed_before: bool
) -> str:
    """Undo `plan` after its failed check; the text to add to the tool result."""
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
        return f"\nThe user chose to revert this edit if the check failed, but {refusal}"
    except OSError as exc:
        return (
            f"\nThe user chose to revert this edit if the check failed, but '{plan.rel}' "
            f"could not be restored ({exc.strerror or exc}); it still holds the edited text."
        )
    seen_texts(ctx).forget(plan.rel)
    await asyncio.to_thread(note_written, ctx, plan.rel)
    if not listed_before and plan.rel in ctx.outcome.files_changed:
        ctx.outcome.files_changed.remove(plan.rel)
    ctx.events.emit("notice", {"message": f"reverted {plan.rel} after the failed check"})
    if plan.current is None:
        state = f"'{plan.rel}' was deleted again, since the edit had created it"
    else:
        state = f"'{plan.rel}' holds its previous text again"
    return (
        f"\nThe user had chosen to revert this edit if the check failed, so it was "
        f"reverted: {state}. The check was not run again. Work out from the failure above "
        "what went wrong, then propose a corrected edit against the file as it is now."
    )


def _restore(plan: EditPlan, created: list[Path], temp: Path) -> None:
    if read_current(plan.real, plan.rel) != plan.new:
        raise ToolRefusal(
            f"'{plan.rel}' changed after the edit was written (the check may have rewritten "
            "it), so it was left as it is now. Read it before changing it again."
        )
    if plan.current is None:
        remove_created(plan.real, created)
    else:
        write_atomically(plan.real, plan.current, temp)
