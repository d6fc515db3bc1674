"""The plan of one edit: which file, what it holds now, what it will hold, the diff.

propose_edit's plan is checked against the file on disk here (a stale base or
an edit that changes nothing is refused), or against `held`, the text of an
editor that holds the file with unsaved changes (`held.py`): the text the
model was shown; replace_text and write_file build the same record from their
own arguments with `make_plan`. The gate (`gate.py`)
and the revert after a failed check (`revert.py`) take it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.edit.diff import unified_diff
from coding_harness.daemon.tools.edit.writes import read_current
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.workspace import Workspace


@dataclass(kw_only=True, slots=True, frozen=True)
class EditPlan:
    """One checked edit: where, what the file holds now, what it will hold."""

    real: Path
    rel: str
    current: str | None  # None for a file that does not exist yet
    new: str
    diff: str
    in_editor: bool = False  # `current` is an editor's unsaved text: written back through it


def plan_edit(
    workspace: Workspace, path: str, old: str, new: str, held: str | None = None
) -> EditPlan:
    """Validate an edit against the file on disk, or the editor's unsaved text `held`;
    `ToolRefusal` when it cannot go ahead."""
    real = workspace.resolve_for_write(path)
    rel = workspace.relative(real)
    current = read_current(real, rel) if held is None else held
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
    return make_plan(real, rel, current, text, in_editor=held is not None)


def make_plan(
    real: Path, rel: str, current: str | None, new: str, *, in_editor: bool = False
) -> EditPlan:
    diff = unified_diff(current or "", new, rel)
    return EditPlan(real=real, rel=rel, current=current, new=new, diff=diff, in_editor=in_editor)


def keep_final_newline(current: str, new: str) -> str:
    """Give `new` the final newline the file has, when the model left it off."""
    if current.endswith("\n") and new and not new.endswith("\n"):
        return new + "\n"
    return new
