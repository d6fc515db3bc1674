"""`make` under run_shell: which targets run unasked, and the question for the others.

`make check` is the project's check, run after every applied edit anyway: it
runs unasked. Any other target (`make clean`, `make install`, the first target
of a bare `make`) runs whatever its recipe says, deleting files included, so in
the ask mode it is put to the user first, as `uv run` is; the question offers
"always" for a single named target (`make clean`, an allow-list entry). The
accept-edits mode and `-y` run it; the read-only mode refuses make altogether
(`read_only.py`). `make --version` and `make --help` run no recipe. The entry
`make` (`/allow-cmd make`) lets every target run unasked, `make TARGET` that one.
"""

from __future__ import annotations

import shlex

from coding_harness.daemon.agent.seams import ApprovalRequest
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell.argv_rules import Parsed, parse
from coding_harness.daemon.tools.shell.command_rules import MAKE
from coding_harness.daemon.tools.shell.uv_gate import declined_result

# The targets that are the project's check, which run without a question.
CHECK_TARGETS = frozenset({"check"})
_NO_RECIPE = ("version", "help")


def make_access(ctx: ToolContext, parsed: Parsed) -> str:
    """ "run" when the make command line may run now, "ask" when the user decides."""
    targets = parsed.operands
    if targets and all(target in CHECK_TARGETS for target in targets):
        return "run"
    if not targets and any(set(option.long) & set(_NO_RECIPE) for option, _ in parsed.options):
        return "run"
    if ctx.accepts_edits or _allowed(ctx, targets):
        return "run"
    return "ask"


def _allowed(ctx: ToolContext, targets: list[str]) -> bool:
    entries = ctx.extra_commands
    if "make" in entries:
        return True
    return bool(targets) and all(f"make {target}" in entries for target in targets)


async def ask_to_make(ctx: ToolContext, argv: list[str]) -> str | None:
    """Put the make command to the user; None when it may run, else the tool result."""
    if ctx.read_only:  # `read_only.py` refused it already; this is the second lock
        raise ToolRefusal(
            "refused: make may run recipes that write files, and this session is in "
            "read-only mode (plan mode); put the target in your plan as a step instead"
        )
    targets = parse("make", MAKE, argv[1:]).operands
    shown = shlex.join(argv)
    what = (
        f"the target{'s' if len(targets) > 1 else ''} {', '.join(targets)}"
        if targets
        else ("the makefile's first target")
    )
    summary = (
        f"run the command `{shown}` in the workspace ({what}: a recipe other than "
        "`make check` may change or delete files)"
    )
    allow = f"make {targets[0]}" if len(targets) == 1 else ""
    request = ApprovalRequest(kind="command", path="", diff="", summary=summary, allow=allow)
    decision = await ctx.approver.ask(request)
    if decision.decision == "yes":
        return None
    return declined_result(shown, decision)
