"""`[r]evert`: one answer in the edit's own prompt that undoes it if `make check` fails."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from coding_harness.daemon.tools.edit.gate import propose_edit
from coding_harness.daemon.tools.edit.replace import replace_text
from tests.support.tool_context import ScriptedApprover, build_project, make_ctx, run

APP = "def main():\n    return 42\n"
CHECKING_MAKEFILE = (
    'check:\n\t@if grep -rq BROKEN src; then echo "found BROKEN in src"; exit 1; fi\n\t@echo fine\n'
)
REVERTED = (
    "\nThe user had chosen to revert this edit if the check failed, so it was reverted: "
    "'src/app.py' holds its previous text again. The check was not run again. Work out "
    "from the failure above what went wrong, then propose a corrected edit against the "
    "file as it is now."
)
FAILED = "applied: wrote 'src/app.py'. make check FAILED (exit 2):\nfound BROKEN in src\n"
KEPT = (
    "\nThe edit stays in place. Fix what make check reported, starting from the file as it is now."
)
REVERT = ("revert", "")


def revert_approver(*extra: tuple[str, str]) -> ScriptedApprover:
    return ScriptedApprover(REVERT, *extra)  # type: ignore[arg-type]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(CHECKING_MAKEFILE)
    return project


def test_revert_restores_the_previous_bytes_and_mode_without_a_second_question(
    root: Path,
) -> None:
    target = root / "src" / "app.py"
    target.chmod(0o751)
    before = target.read_bytes()
    approver = revert_approver()  # a second request would fail the test
    ctx, sink = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith(FAILED)
    assert result.endswith(REVERTED)
    assert target.read_bytes() == before
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert len(approver.requests) == 1
    assert ctx.outcome.files_changed == []  # nothing changed in the end
    assert ctx.outcome.exit_code() == 2  # the check did fail
    assert {"message": "reverted src/app.py after the failed check"} in sink.of_kind("notice")
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".harness-")] == []


def test_revert_deletes_a_file_the_edit_created_with_its_folders(root: Path) -> None:
    ctx, _ = make_ctx(root, revert_approver())
    result = run(propose_edit(ctx, "src/new/deep/mod.py", "", "BROKEN = 2\n"))
    assert result.endswith(
        "'src/new/deep/mod.py' was deleted again, since the edit had created it. The check "
        "was not run again. Work out from the failure above what went wrong, then propose "
        "a corrected edit against the file as it is now."
    )
    assert not (root / "src" / "new").exists()


def test_revert_with_a_passing_check_keeps_the_edit(root: Path) -> None:
    ctx, _ = make_ctx(root, revert_approver())
    result = run(propose_edit(ctx, "src/app.py", APP, "x = 1\n"))
    assert result == "applied: wrote 'src/app.py'. make check passed."
    assert (root / "src" / "app.py").read_text() == "x = 1\n"
    assert ctx.outcome.files_changed == ["src/app.py"]


def test_yes_keeps_a_failing_edit_and_asks_nothing_more(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))  # a second request would fail the test
    ctx, _ = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith(FAILED)
    assert result.endswith(KEPT)
    assert (root / "src" / "app.py").read_text() == "BROKEN = 1\n"
    assert ctx.outcome.files_changed == ["src/app.py"]
    assert ctx.outcome.edits_rejected == 0


def test_auto_approve_never_reverts(root: Path) -> None:
    approver = ScriptedApprover()  # asking would fail the test
    ctx, _ = make_ctx(root, approver, auto_approve=True)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith("applied (auto-approved): wrote 'src/app.py'. make check FAILED")
    assert result.endswith(
        "\n\nThe edit stays in place: with auto-approve nothing is reverted automatically. "
        "Fix what make check reported, starting from the file as it is now."
    )
    assert (root / "src" / "app.py").read_text() == "BROKEN = 1\n"


def test_a_file_make_check_rewrote_is_not_reverted(root: Path) -> None:
    (root / "Makefile").write_text(
        "check:\n\t@echo '# reformatted' >> src/app.py\n\t@echo formatter failed; exit 1\n"
    )
    ctx, _ = make_ctx(root, revert_approver())
    result = run(propose_edit(ctx, "src/app.py", APP, "x = 1\n"))
    assert result.endswith(
        "The user chose to revert this edit if the check failed, but 'src/app.py' changed "
        "after the edit was written (the check may have rewritten it), so it was left as "
        "it is now. Read it before changing it again."
    )
    assert (root / "src" / "app.py").read_text() == "x = 1\n# reformatted\n"


def test_replace_text_offers_the_same_revert(root: Path) -> None:
    ctx, _ = make_ctx(root, revert_approver())
    result = run(replace_text(ctx, "src/app.py", "return 42", "return BROKEN"))
    assert result.startswith(FAILED)
    assert result.endswith(REVERTED)
    assert (root / "src" / "app.py").read_text() == APP


def test_an_earlier_passing_change_stays_listed_after_a_revert(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""), REVERT)  # type: ignore[arg-type]
    ctx, _ = make_ctx(root, approver)
    assert run(propose_edit(ctx, "src/app.py", APP, "x = 1\n")).endswith("make check passed.")
    run(propose_edit(ctx, "src/app.py", "x = 1\n", "BROKEN\n"))
    assert (root / "src" / "app.py").read_text() == "x = 1\n"
    assert ctx.outcome.files_changed == ["src/app.py"]
