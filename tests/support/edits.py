"""`propose_edit` run on a project of tests/support/tool_context.py, and what it leaves.

`edit` runs one edit and returns its result (a refusal included), context and
events; `APP` is the project's src/app.py; `CHECKING_MAKEFILE` a `make check`
that fails on BROKEN in src; `temp_files` lists leftover temporary files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.gate import propose_edit
from coding_harness.daemon.tools.errors import ToolRefusal
from tests.support.tool_context import RecordingSink, ScriptedApprover, make_ctx, run

APP = "def main():\n    return 42\n"
CHECKING_MAKEFILE = (
    "check:\n"
    "\t@echo checking\n"
    '\t@if grep -rq BROKEN src; then echo "found BROKEN in src"; exit 1; fi\n'
)


def edit(
    root: Path,
    path: str,
    old: str,
    new: str,
    approver: ScriptedApprover | None = None,
    **flags: Any,
) -> tuple[str, ToolContext, RecordingSink]:
    ctx, sink = make_ctx(root, approver, **flags)
    try:
        result = run(propose_edit(ctx, path, old, new))
    except ToolRefusal as refusal:  # the registry turns these into results
        result = str(refusal)
    return result, ctx, sink


def temp_files(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if p.name.startswith(".harness-")]
