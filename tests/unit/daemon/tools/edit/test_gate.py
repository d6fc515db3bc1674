"""propose_edit: stale base, dry run, approval answers, atomic write, make check."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from coding_harness.daemon.agent.seams import ApprovalRequest
from coding_harness.daemon.tools.edit.gate import propose_edit
from tests.support.edits import APP, CHECKING_MAKEFILE, edit, temp_files
from tests.support.tool_context import (
    ScriptedApprover,
    build_project,
    make_ctx,
    run,
    umask,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(CHECKING_MAKEFILE)
    return project


def test_stale_base_is_refused(root: Path) -> None:
    result, ctx, sink = edit(root, "src/app.py", "def other(): pass\n", "x = 1\n")
    assert result.startswith("stale base")
    assert "Read the file again" in result
    assert (root / "src" / "app.py").read_text() == APP
    assert sink.events == []
    assert ctx.outcome.exit_code() == 0


def test_old_for_a_missing_file_is_a_stale_base(root: Path) -> None:
    result, _, _ = edit(root, "src/nope.py", "something\n", "x = 1\n")
    assert result.startswith("stale base")
    assert not (root / "src" / "nope.py").exists()


def test_trailing_whitespace_in_old_is_tolerated_and_newline_kept(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    old = APP.rstrip() + "   \n\n\n"
    result, ctx, _ = edit(root, "src/app.py", old, "def main():\n    return 43", approver)
    assert result.startswith("applied: wrote 'src/app.py'")
    assert (root / "src" / "app.py").read_text() == "def main():\n    return 43\n"
    assert ctx.outcome.files_changed == ["src/app.py"]


def test_no_op_edits_are_refused(root: Path) -> None:
    for new in (APP, APP.rstrip(), APP + "\n\n  "):
        result, _, sink = edit(root, "src/app.py", APP, new)
        assert result.startswith("no changes")
        assert sink.events == []


def test_empty_new_file_is_refused(root: Path) -> None:
    for new in ("", "\n  \n"):
        result, _, _ = edit(root, "src/empty.py", "", new)
        assert "empty file" in result
    assert not (root / "src" / "empty.py").exists()


def test_hidden_or_outside_targets_are_refused(root: Path) -> None:
    assert "hidden" in edit(root, ".env", "", "X=1\n")[0]
    assert "hidden" in edit(root, "notes.txt", "", "X=1\n")[0]
    assert "outside" in edit(root, "../outside.txt", "", "X=1\n")[0]
    assert "outside" in edit(root, "outlink/new.txt", "", "X=1\n")[0]
    assert "folder" in edit(root, "src", "", "X=1\n")[0]


def test_dry_run_shows_the_diff_and_writes_nothing(root: Path) -> None:
    result, ctx, sink = edit(root, "src/app.py", APP, "print('hi')\n", dry_run=True)
    assert "not written" in result
    assert "do not retry" in result
    assert (root / "src" / "app.py").read_text() == APP
    [diff] = sink.of_kind("diff")
    assert diff["path"] == "src/app.py"
    assert diff["new_file"] is False
    assert "+print('hi')" in diff["diff"]
    assert ctx.outcome.dry_run_diffs == 1
    assert ctx.outcome.exit_code() == 0
    assert sink.of_kind("check.result") == []


def test_yes_writes_and_runs_make_check_that_passes(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    result, ctx, sink = edit(root, "src/app.py", APP, "def main():\n    return 7\n", approver)
    assert result == "applied: wrote 'src/app.py'. make check passed."
    assert (root / "src" / "app.py").read_text() == "def main():\n    return 7\n"
    [request] = approver.requests
    assert request.kind == "edit"
    assert request.path == "src/app.py"
    assert request.summary == "edit src/app.py (+1 -1 lines)"
    assert "+    return 7" in request.diff
    [check] = sink.of_kind("check.result")
    assert check == {
        "command": "make check",
        "passed": True,
        "exit_code": 0,
        "output": "checking\n",
    }
    assert ctx.outcome.exit_code() == 0
    assert temp_files(root / "src") == []


def test_yes_with_failing_make_check_exits_2(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""), ("no", ""))  # the second: keep, do not revert
    result, ctx, sink = edit(root, "src/app.py", APP, "BROKEN\n", approver)
    assert result.startswith("applied: wrote 'src/app.py'. make check FAILED (exit 2):")
    assert "found BROKEN in src" in result
    assert sink.of_kind("check.result")[0]["passed"] is False
    assert ctx.outcome.last_check_failed
    assert ctx.outcome.exit_code() == 2


def test_failing_check_output_is_cut_to_2000_characters(root: Path) -> None:
    (root / "Makefile").write_text("check:\n\t@python3 -c \"print('E' * 9000)\"; exit 1\n")
    approver = ScriptedApprover(("yes", ""), ("no", ""))  # the second: keep, do not revert
    result, _, sink = edit(root, "src/app.py", APP, "x = 1\n", approver)
    assert "characters omitted" in result
    assert len(result) < 2400
    assert len(sink.of_kind("check.result")[0]["output"]) < 2100


def test_no_writes_nothing_and_exits_3(root: Path) -> None:
    result, ctx, sink = edit(root, "src/app.py", APP, "x = 1\n", ScriptedApprover(("no", "")))
    assert "rejected" in result
    assert (root / "src" / "app.py").read_text() == APP
    assert ctx.outcome.edits_rejected == 1
    assert ctx.outcome.exit_code() == 3
    assert ctx.outcome.files_changed == []
    assert sink.of_kind("check.result") == []


def test_skip_reason_reaches_the_model(root: Path) -> None:
    approver = ScriptedApprover(("skip", "use a constant instead"))
    result, ctx, _ = edit(root, "src/app.py", APP, "x = 1\n", approver)
    assert "skipped" in result
    assert "use a constant instead" in result
    assert (root / "src" / "app.py").read_text() == APP
    assert ctx.outcome.exit_code() == 3


def test_file_changed_while_the_person_looked_is_refused(root: Path) -> None:
    target = root / "src" / "app.py"

    def someone_edits(_: ApprovalRequest) -> None:
        target.write_text(APP + "# edited by hand\n")

    approver = ScriptedApprover(("yes", ""), before_answer=someone_edits)
    result, ctx, _ = edit(root, "src/app.py", APP, "x = 1\n", approver)
    assert "changed since the diff was shown" in result
    assert target.read_text() == APP + "# edited by hand\n"
    assert ctx.outcome.files_changed == []


def test_new_file_created_while_the_person_looked_is_refused(root: Path) -> None:
    target = root / "src" / "new.py"
    approver = ScriptedApprover(("yes", ""), before_answer=lambda _: target.write_text("mine\n"))
    result, _, _ = edit(root, "src/new.py", "", "x = 1\n", approver)
    assert "changed since the diff was shown" in result
    assert target.read_text() == "mine\n"


def test_mode_bits_are_kept(root: Path) -> None:
    script = root / "run.py"
    script.write_text("print(1)\n")
    script.chmod(0o750)
    result, _, _ = edit(root, "run.py", "print(1)\n", "print(2)\n", auto_approve=True)
    assert result.startswith("applied (auto-approved)")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert script.read_text() == "print(2)\n"


def test_new_file_gets_parents_default_mode_and_final_newline(root: Path) -> None:
    result, ctx, sink = edit(root, "pkg/deep/mod.py", "", "VALUE = 1", auto_approve=True)
    assert "(new file)" in result
    target = root / "pkg" / "deep" / "mod.py"
    assert target.read_text() == "VALUE = 1\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask()
    assert sink.of_kind("diff")[0]["new_file"] is True
    assert ctx.outcome.files_changed == ["pkg/deep/mod.py"]


def test_auto_approve_never_asks(root: Path) -> None:
    approver = ScriptedApprover()  # asking would fail the test
    result, ctx, _ = edit(root, "src/app.py", APP, "x = 1\n", approver, auto_approve=True)
    assert result.startswith("applied (auto-approved)")
    assert approver.requests == []
    assert ctx.outcome.exit_code() == 0


def test_files_changed_has_no_duplicates(root: Path) -> None:
    ctx, _ = make_ctx(root, auto_approve=True)
    run(propose_edit(ctx, "src/app.py", APP, "x = 1\n"))
    run(propose_edit(ctx, "src/app.py", "x = 1\n", "x = 2\n"))
    assert ctx.outcome.files_changed == ["src/app.py"]


def test_without_any_check_the_edit_is_not_verified(root: Path) -> None:
    (root / "Makefile").unlink()
    result, ctx, sink = edit(root, "src/app.py", APP, "x = 1\n", auto_approve=True)
    assert "not verified" in result and "no check command" in result
    assert sink.of_kind("check.result") == []
    assert not ctx.outcome.last_check_failed and ctx.outcome.check is None
    [told] = [n for n in sink.of_kind("notice") if n.get("kind") == "not_verified"]
    assert told["message"].startswith("not verified: no check command")


def test_write_failure_leaves_the_original_intact(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    result, ctx, sink = edit(root, "src/app.py", APP, "x = 1\n", auto_approve=True)
    assert result.startswith("disk full: edit not applied")
    assert "No space left on device" in result
    assert (root / "src" / "app.py").read_text() == APP
    assert temp_files(root / "src") == []
    assert ctx.outcome.files_changed == []
    assert ctx.outcome.exit_code() == 3  # a failed edit ends the run like a refused one
    assert sink.of_kind("check.result") == []
    assert [e["phase"] for e in sink.of_kind("edit.write")] == ["started", "failed"]


def test_write_failure_removes_folders_it_created(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    result, _, _ = edit(root, "made/here/new.py", "", "x = 1\n", auto_approve=True)
    assert result.startswith("disk full: edit not applied")
    assert not (root / "made").exists()


def test_binary_files_are_not_edited(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01\xff")
    assert "not UTF-8" in edit(root, "blob.bin", "", "text\n")[0]
