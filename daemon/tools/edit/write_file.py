"""write_file: a whole new file, or the whole new text of one, through the edit gate.

The model sends only the new text, so the stale-base check works from what it
has seen (`seen.py`) instead of an `old` it repeats:

- no file there yet: created (an empty text is refused, a final newline added);
- the file is as the model last saw it (read_file, or its own applied write,
  trailing whitespace aside): replaced, like propose_edit with the right `old`;
- the model saw an older text: refused as a stale base, nothing asked;
- the model never read it in this session: the whole diff is shown and a
  person is asked, even under -y, with the prompt saying why.

From there it is propose_edit's gate (`edits.submit_edit`): dry run, approval
with `[r]evert`, re-check at apply, atomic journaled write, `make check`, and
the rule that an edit to what `make check` runs is always asked.
"""

from __future__ import annotations

import asyncio

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.gate import submit_edit
from coding_harness.daemon.tools.edit.held import unsaved_text
from coding_harness.daemon.tools.edit.plan import EditPlan, keep_final_newline, make_plan
from coding_harness.daemon.tools.edit.seen import Base, seen_texts
from coding_harness.daemon.tools.edit.writes import read_current
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace

UNREAD = "it replaces a file not read in this session"


async def write_file(ctx: ToolContext, path: str, content: str) -> str:
    """Check the write against what the model has seen, then put it through the gate."""
    held = await unsaved_text(ctx, path)
    plan, base = await asyncio.to_thread(plan_write, ctx, path, content, held)
    return await submit_edit(ctx, plan, always_ask=UNREAD if base == "unseen" else "")


def plan_write(
    ctx: ToolContext, path: str, content: str, held: str | None = None
) -> tuple[EditPlan, Base | None]:
    """The edit and how the file's text (the editor's unsaved `held` text, when it holds
    one) compares with what the model saw (None: new file)."""
    workspace: Workspace = ctx.workspace
    real = workspace.resolve_for_write(path)
    rel = workspace.relative(real)
    current = read_current(real, rel) if held is None else held
    if current is None:
        if not content.strip():
            raise ToolRefusal(f"refused: will not create '{rel}' as an empty file")
        text = content if content.endswith("\n") else content + "\n"
        return make_plan(real, rel, None, text), None
    base = seen_texts(ctx).base(rel, current)
    if base == "changed":
        raise ToolRefusal(
            f"stale base: '{rel}' changed since you last read it, so writing it whole would "
            "undo changes you have not seen. Read the file again, then write it."
        )
    if content.rstrip() == current.rstrip():
        raise ToolRefusal(f"no changes: '{rel}' already holds this content")
    new = keep_final_newline(current, content)
    return make_plan(real, rel, current, new, in_editor=held is not None), base
