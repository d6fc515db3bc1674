"""After a failed `make check`, the approved edit can be reverted by a second approval."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from coding_harness.daemon.seams import ApprovalRequest
from coding_harness.daemon.tools.edits import propose_edit
from coding_harness.daemon.tools.replace import replace_text
from tests.unit.test_tools_support import ScriptedApprover, build_project, make_ctx, run

APP = "def main():\n    return 42\n"
CHECKING_MAKEFILE = (
    'check:\n\t@if grep -rq BROKEN src; then echo "found BROKEN in src"; exit 1; fi\n\t@echo fine\n'
)
REVERTED = (
    "\nThe user reverted this edit because make check failed: 'src/app.py' holds its "
    "previous text again. make check was not run again. Work out from the failure above "
    "what went wrong, then propose a corrected edit against the file as it is now."
)
FAILED = "applied: wrote 'src/app.py'. make check FAILED (exit 2):\nfound BROKEN in src\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    project = build_project(tmp_path)
    (project / "Makefile").write_text(CHECKING_MAKEFILE)
    return project


def test_yes_restores_the_previous_bytes_and_mode(root: Path) -> None:
    target = root / "src" / "app.py"
    target.chmod(0o751)
    before = target.read_bytes()
    approver = ScriptedApprover(("yes", ""), ("yes", ""))
    ctx, sink = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith(FAILED)
    assert result.endswith(REVERTED)
    assert target.read_bytes() == before
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    _edit, revert = approver.requests
    assert revert.kind == "edit"
    assert revert.path == "src/app.py"
    assert revert.summary == (
        "revert the edit just applied, because make check failed: "
        "restore the previous text of src/app.py"
    )
    assert "-BROKEN = 1\n" in revert.diff and "+    return 42\n" in revert.diff
    assert revert.diff.startswith("--- a/src/app.py\n+++ b/src/app.py\n")
    assert ctx.outcome.files_changed == []  # nothing changed in the end
    assert ctx.outcome.exit_code() == 2  # the check did fail
    assert {"message": "reverted src/app.py after the failed make check"} in sink.of_kind("notice")
    assert [p.name for p in target.parent.iterdir() if p.name.startswith(".harness-")] == []


def test_yes_deletes_a_file_the_edit_created_with_its_folders(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""), ("yes", ""))
    ctx, _ = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/new/deep/mod.py", "", "BROKEN = 2\n"))
    assert result.endswith(
        "'src/new/deep/mod.py' was deleted again, since the edit had created it. make check "
        "was not run again. Work out from the failure above what went wrong, then propose "
        "a corrected edit against the file as it is now."
    )
    assert approver.requests[1].summary.endswith(
        "delete src/new/deep/mod.py, which the edit created"
    )
    assert not (root / "src" / "new").exists()


@pytest.mark.parametrize(
    ("answer", "reason", "ending"),
    [
        ("no", "", "although make check failed. Fix what make check reported"),
        ("skip", "I will fix the test", "(their reason: I will fix the test). Fix what"),
    ],
)
def test_declining_the_revert_keeps_the_edit(
    root: Path, answer: str, reason: str, ending: str
) -> None:
    approver = ScriptedApprover(("yes", ""), (answer, reason))  # type: ignore[arg-type]
    ctx, _ = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith(FAILED)
    assert "\nThe user chose to keep this edit in place although make check failed" in result
    assert ending in result
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


def test_a_file_rewritten_after_the_edit_is_not_reverted(root: Path) -> None:
    target = root / "src" / "app.py"

    def formatter_ran(request: ApprovalRequest) -> None:
        if request.summary.startswith("revert"):
            target.write_text("BROKEN = 1  # reformatted\n")

    approver = ScriptedApprover(("yes", ""), ("yes", ""), before_answer=formatter_ran)
    ctx, _ = make_ctx(root, approver)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.endswith(
        "The user asked to revert this edit, but 'src/app.py' changed after the edit was "
        "written (make check may have rewritten it), so it was left as it is now. Read it "
        "before changing it again."
    )
    assert target.read_text() == "BROKEN = 1  # reformatted\n"


def test_replace_text_offers_the_same_revert(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""), ("yes", ""))
    ctx, _ = make_ctx(root, approver)
    result = run(replace_text(ctx, "src/app.py", "return 42", "return BROKEN"))
    assert result.startswith(FAILED)
    assert result.endswith(REVERTED)
    assert (root / "src" / "app.py").read_text() == APP


def test_an_earlier_passing_change_stays_listed_after_a_revert(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""), ("yes", ""), ("yes", ""))
    ctx, _ = make_ctx(root, approver)
    assert run(propose_edit(ctx, "src/app.py", APP, "x = 1\n")).endswith("make check passed.")
    run(propose_edit(ctx, "src/app.py", "x = 1\n", "BROKEN\n"))
    assert (root / "src" / "app.py").read_text() == "x = 1\n"
    assert ctx.outcome.files_changed == ["src/app.py"]


def test_a_passing_check_asks_nothing_more(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))
    ctx, _ = make_ctx(root, approver)
    assert run(propose_edit(ctx, "src/app.py", APP, "x = 1\n")) == (
        "applied: wrote 'src/app.py'. make check passed."
    )
    assert len(approver.requests) == 1


def test_the_offer_can_be_turned_off(root: Path) -> None:
    approver = ScriptedApprover(("yes", ""))  # a second request would fail the test
    ctx, _ = make_ctx(root, approver, offer_revert=False)
    result = run(propose_edit(ctx, "src/app.py", APP, "BROKEN = 1\n"))
    assert result.startswith(FAILED)
    assert result.endswith(
        "\nThe edit stays in place. Fix what make check reported, starting from the file as "
        "it is now."
    )
