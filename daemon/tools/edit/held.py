"""Edits to a file an editor holds with unsaved changes: planned on its text, written back to it.

read_file shows the model an attached editor's buffer (`ToolContext.buffers`),
unsaved changes included, so an edit is made against that text, not the disk's.
`unsaved_text` asks the editor at planning time: when its text differs from the
file on disk, the edit tools plan against it (`EditPlan.in_editor`). Such an
edit is written through the editor (`client.write_text_file`, the editor's
`fs/write_text_file`), never to the disk behind it, where it would be lost or
would clobber the editor's changes; an editor that does not take writes gets
the edit refused, saying why and what to do. `write_held` checks the buffer
still holds what the diff was made against before it writes.
"""

from __future__ import annotations

import asyncio

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.plan import EditPlan
from coding_harness.daemon.tools.edit.writes import read_current
from coding_harness.daemon.tools.errors import ToolRefusal

NO_WRITES = (
    "refused: '{rel}' has unsaved changes in the editor, and the editor does not let the "
    "agent write its buffers (it offers no fs/write_text_file), so writing the file on disk "
    "would go behind it. Nothing was written. Ask the user to save the file in the editor "
    "(or discard the changes), then read it again and make the edit."
)
MOVED = (
    "not applied: the editor's text of '{rel}' changed since the diff was shown. Read it "
    "again and propose a new edit."
)


async def unsaved_text(ctx: ToolContext, path: str) -> str | None:
    """The editor's text of `path` when it holds one that differs from the disk (the
    text the model was shown); None: plan against the disk."""
    if ctx.buffers is None:
        return None
    real = await asyncio.to_thread(ctx.workspace.resolve_for_write, path)
    held = await ctx.buffers.read_text(real)
    if held is None:
        return None
    rel = ctx.workspace.relative(real)
    on_disk = await asyncio.to_thread(read_current, real, rel)
    return None if held == on_disk else held


def refuse_unwritable(ctx: ToolContext, plan: EditPlan) -> None:
    """`ToolRefusal` for an edit of unsaved text the editor will not take back."""
    if plan.in_editor and (ctx.buffers is None or not ctx.buffers.can_write()):
        raise ToolRefusal(NO_WRITES.format(rel=plan.rel))


async def write_held(ctx: ToolContext, plan: EditPlan, text: str, before: str | None) -> None:
    """Hand `text` to the editor as the file's content, if its buffer still holds
    `before`; `ToolRefusal` when it moved on, `OSError` when the write fails."""
    if ctx.buffers is None:
        raise OSError("the editor that holds the file is no longer attached")
    now = await ctx.buffers.read_text(plan.real)
    if before is not None and now is not None and now != before:
        raise ToolRefusal(MOVED.format(rel=plan.rel))
    await ctx.buffers.write_text(plan.real, text)
