"""write_file: a whole new or replaced file through propose_edit's gate, checked against
what the model has seen in the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from coding_harness.daemon.tools.builtin import build_tools
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.edit.gate import propose_edit
from coding_harness.daemon.tools.edit.seen import forget_session
from coding_harness.daemon.tools.edit.write_file import write_file
from coding_harness.daemon.tools.errors import ToolRefusal
from tests.support.tool_context import RecordingSink, ScriptedApprover, build_project, make_ctx, run

APP = "def main():\n    return 42\n"
NEW_APP = "def main():\n    return 43\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text("check:\n\t@echo checking\n")
    return project


def write(ctx: ToolContext, path: str, content: str) -> str:
    try:
        return run(write_file(ctx, path, content))
    except ToolRefusal as refusal:  # the registry turns these into results
        return str(refusal)


def read(ctx: ToolContext, path: str) -> str:
    """read_file as the model calls it, through the registry (which records what it saw)."""
    from coding_harness.daemon.agent.seams import ToolCall

    tools = build_tools(ctx)
    call = ToolCall(id="c1", name="read_file", arguments=f'{{"path": "{path}"}}')
    return run(tools.execute(call))


def ctx_for(root: Path, *answers: Any, **flags: Any) -> tuple[ToolContext, RecordingSink]:
    return make_ctx(root, ScriptedApprover(*answers), **flags)


def test_a_new_file_is_created_after_yes(root: Path) -> None:
    ctx, sink = ctx_for(root, ("yes", ""))
    result = write(ctx, "src/util/helpers.py", "X = 1")
    assert result == "applied: wrote 'src/util/helpers.py' (new file). make check passed."
    assert (root / "src" / "util" / "helpers.py").read_text() == "X = 1\n"
    assert sink.of_kind("diff")[0]["new_file"] is True
    assert ctx.outcome.files_changed == ["src/util/helpers.py"]
    journal = sink.of_kind("edit.write")  # journaled before and after, like propose_edit
    assert [entry["phase"] for entry in journal] == ["started", "done"]
    assert {entry["path"] for entry in journal} == {"src/util/helpers.py"}


def test_a_new_file_refused_is_not_written(root: Path) -> None:
    ctx, _ = ctx_for(root, ("no", ""))
    result = write(ctx, "src/new.py", "X = 1\n")
    assert "rejected" in result
    assert not (root / "src" / "new.py").exists()
    assert ctx.outcome.exit_code() == 3


def test_an_empty_new_file_is_refused(root: Path) -> None:
    ctx, _ = ctx_for(root)
    assert (
        write(ctx, "src/empty.py", "  \n")
        == "refused: will not create 'src/empty.py' as an empty file"
    )


def test_a_read_file_is_replaced_like_propose_edit(root: Path) -> None:
    ctx, _ = ctx_for(root)
    ctx.auto_approve = True  # nothing is asked for a file the model has read
    assert read(ctx, "src/app.py") == APP
    result = write(ctx, "src/app.py", NEW_APP)
    assert result.startswith("applied (auto-approved): wrote 'src/app.py'.")
    assert (root / "src" / "app.py").read_text() == NEW_APP


def test_a_file_changed_since_it_was_read_is_a_stale_base(root: Path) -> None:
    ctx, sink = ctx_for(root)
    read(ctx, "src/app.py")
    (root / "src" / "app.py").write_text("def main():\n    return 7\n")
    result = write(ctx, "src/app.py", NEW_APP)
    assert result.startswith("stale base: 'src/app.py' changed since you last read it")
    assert "Read the file again" in result
    assert (root / "src" / "app.py").read_text() == "def main():\n    return 7\n"
    assert sink.of_kind("diff") == []


def test_an_unread_file_is_asked_with_its_whole_diff_even_under_yes(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    ctx, sink = make_ctx(root, approver, auto_approve=True)
    result = write(ctx, "src/app.py", NEW_APP)
    assert result.startswith("applied: wrote 'src/app.py'.")
    (request,) = approver.requests
    assert request.summary == (
        "edit src/app.py (+1 -1 lines); it replaces a file not read in this session, "
        "so it is asked even with -y"
    )
    assert "-    return 42\n+    return 43\n" in request.diff
    assert sink.of_kind("diff")[0]["diff"] == request.diff


def test_an_unread_file_refused_stays(root: Path) -> None:
    ctx, _ = ctx_for(root, ("no", ""))
    result = write(ctx, "src/app.py", "everything else\n")
    assert "rejected" in result
    assert (root / "src" / "app.py").read_text() == APP


def test_its_own_earlier_write_counts_as_seen(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))  # only the unread replacement is asked
    ctx, _ = make_ctx(root, approver, auto_approve=True)
    write(ctx, "src/app.py", NEW_APP)
    result = write(ctx, "src/app.py", "def main():\n    return 44\n")
    assert result.startswith("applied (auto-approved)")
    assert len(approver.requests) == 1


def test_what_was_seen_lasts_for_the_session_not_the_turn(root: Path) -> None:
    approver = ScriptedApprover()
    first, _ = make_ctx(root, approver)
    read(first, "src/app.py")
    second, _ = make_ctx(root, approver, auto_approve=True)  # the next turn, same session
    assert write(second, "src/app.py", NEW_APP).startswith("applied (auto-approved)")
    other_session, _ = make_ctx(root, ScriptedApprover(("no", "")), auto_approve=True)
    assert "rejected" in write(other_session, "src/app.py", APP)


def test_propose_edit_after_a_read_keeps_write_file_in_step(root: Path) -> None:
    ctx, _ = ctx_for(root, ("yes", ""))
    read(ctx, "src/app.py")
    run(propose_edit(ctx, "src/app.py", APP, NEW_APP))
    ctx.auto_approve = True
    assert write(ctx, "src/app.py", APP).startswith("applied (auto-approved)")


def test_no_change_is_refused(root: Path) -> None:
    ctx, _ = ctx_for(root)
    read(ctx, "src/app.py")
    assert (
        write(ctx, "src/app.py", APP + "\n\n")
        == "no changes: 'src/app.py' already holds this content"
    )


def test_dry_run_shows_the_diff_and_writes_nothing(root: Path) -> None:
    ctx, sink = ctx_for(root, dry_run=True)
    result = write(ctx, "src/app.py", NEW_APP)
    assert result.startswith("dry run: the diff for 'src/app.py' was shown")
    assert (root / "src" / "app.py").read_text() == APP
    assert len(sink.of_kind("diff")) == 1


@pytest.mark.parametrize("path", ["../outside.txt", ".env", "notes.txt", "outlink/secret.txt"])
def test_paths_are_held_to_the_workspace_rules(root: Path, path: str) -> None:
    ctx, sink = ctx_for(root)
    before = {p: p.read_bytes() for p in root.parent.rglob("*") if p.is_file()}
    result = write(ctx, path, "X = 1\n")
    assert result.startswith("refused"), result
    assert {p: p.read_bytes() for p in root.parent.rglob("*") if p.is_file()} == before
    assert sink.events == []


def test_the_makefile_is_always_asked(root: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    ctx, _ = make_ctx(root, approver, auto_approve=True)
    read(ctx, "Makefile")
    write(ctx, "Makefile", "check:\n\t@true\n")
    assert "this changes what `make check` runs, so it is asked even with -y" in (
        approver.requests[0].summary
    )
    assert (root / "Makefile").read_text() == "check:\n\t@echo checking\n"


def test_each_applied_write_is_announced_once(root: Path) -> None:
    ctx, sink = ctx_for(root, auto_approve=True)
    write(ctx, "src/a.py", "A = 1\n")
    write(ctx, "src/b.py", "B = 1\n")
    assert [n["message"] for n in sink.of_kind("notice")] == [
        "applied (auto-approved): src/a.py (new file)",
        "check: make check (found: Makefile target check)",  # once per turn
        "applied (auto-approved): src/b.py (new file)",
    ]


def test_a_forgotten_session_counts_every_file_as_unread(root: Path) -> None:
    approver = ScriptedApprover(("no", ""))
    ctx, _ = make_ctx(root, approver, auto_approve=True)
    read(ctx, "src/app.py")
    forget_session(ctx.approver)  # the conversation that showed it was reset
    assert "rejected" in write(ctx, "src/app.py", NEW_APP)
    assert len(approver.requests) == 1
