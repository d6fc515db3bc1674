"""replace_text: an edit given as one exact snippet and its replacement.

The snippet must occur exactly once in the file; the whole-file result then
goes through the same gate as propose_edit (diff, dry run, approval, re-check
at apply, atomic write, make check), so a one-line fix in a long file costs
the model a few lines of output instead of the whole file. A file with CRLF
line endings accepts a snippet written with plain newlines, and keeps CRLF.
"""

from __future__ import annotations

import asyncio

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.gate import submit_edit
from coding_harness.daemon.tools.edit.held import unsaved_text
from coding_harness.daemon.tools.edit.plan import EditPlan, make_plan
from coding_harness.daemon.tools.edit.writes import read_current
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace


async def replace_text(ctx: ToolContext, path: str, old_text: str, new_text: str) -> str:
    """Check the snippet against the file (the editor's unsaved text, when it holds
    one), then put the edit through the gate."""
    held = await unsaved_text(ctx, path)
    plan = await asyncio.to_thread(plan_replacement, ctx.workspace, path, old_text, new_text, held)
    return await submit_edit(ctx, plan)


def plan_replacement(
    workspace: Workspace, path: str, old_text: str, new_text: str, held: str | None = None
) -> EditPlan:
    """The whole-file edit that swaps the one occurrence of `old_text`, or `ToolRefusal`."""
    real = workspace.resolve_for_write(path)
    rel = workspace.relative(real)
    current = read_current(real, rel) if held is None else held
    if current is None:
        raise ToolRefusal(
            f"'{rel}' does not exist. replace_text changes existing files only; create a "
            "new file with propose_edit (old set to an empty string)."
        )
    if not old_text:
        raise ToolRefusal(
            "refused: old_text is empty. Pass the exact text to replace, copied from read_file."
        )
    if old_text == new_text:
        raise ToolRefusal("no changes: old_text and new_text are the same")
    old_text, new_text = _line_endings_of(current, old_text, new_text)
    count = current.count(old_text)
    if count != 1:
        raise ToolRefusal(_match_problem(rel, current, old_text, count))
    new = current.replace(old_text, new_text, 1)
    return make_plan(real, rel, current, new, in_editor=held is not None)


def _line_endings_of(current: str, old_text: str, new_text: str) -> tuple[str, str]:
    """Snippets in the file's line endings, when the file uses CRLF and they do not."""
    if "\r\n" not in current or "\r" in old_text or old_text in current:
        return old_text, new_text
    return old_text.replace("\n", "\r\n"), new_text.replace("\r\n", "\n").replace("\n", "\r\n")


def _match_problem(rel: str, current: str, old_text: str, count: int) -> str:
    if count > 1:
        return (
            f"old_text occurs {count} times in '{rel}', so it is not clear which one to "
            "replace. Include more of the surrounding lines in old_text (and the same lines "
            "in new_text) so that it matches exactly once."
        )
    hint = ""
    stripped = old_text.strip()
    if stripped and stripped in current:
        hint = (
            " The text does appear with different leading or trailing whitespace, so check "
            "the indentation and line breaks."
        )
    return (
        f"old_text was not found in '{rel}'; nothing was changed. It must match the file "
        f"exactly, including indentation and line breaks.{hint} Call read_file on '{rel}' "
        "and copy the snippet from what it returns."
    )
