"""commit_plan: the model writes down its plan before a multi-step change.

The plan is kept on the session (see `plan_book.py`), published as a `plan`
event for every attached client, put back into the system prompt as guidance
on later turns, and reconciled with the files on disk when asked for.
"""

from __future__ import annotations

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.registry import ToolRegistry

COMMIT_PLAN = "commit_plan"
PLAN_TOOLS = ToolRegistry()


@PLAN_TOOLS.tool(
    COMMIT_PLAN,
    "Write down your plan before a change that takes several steps. The user sees it, "
    "and it is shown to you again later with each step's progress. Calling it again "
    "replaces the plan.",
    [
        (
            "steps",
            "The steps, one per line, in order. End a line with 'files: a.py, b.py' to name "
            "the files that step will create or change; start it with [x] once it is done.",
        )
    ],
    loose=["steps"],
)
async def commit_plan(ctx: ToolContext, *, steps: str) -> str:
    if ctx.plans is None:
        raise ToolRefusal("plans are not kept here; go ahead without one")
    return ctx.plans.commit(steps)
