"""The worktree records: kept whole across writes, found by name or by session."""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.worktrees.create import name_problem
from coding_harness.daemon.worktrees.records import NoSuchWorktree, WorktreeBook, WorktreeRecord


def record(name: str, session: str) -> WorktreeRecord:
    return WorktreeRecord(
        name=name, branch=f"harness/{name}", path=f"/w/{name}", repo="/r", base="main",
        base_commit="0" * 40, session=session,
    )  # fmt: skip


def test_a_worktree_is_found_by_name_session_short_id_or_a_unique_prefix(tmp_path: Path) -> None:
    book = WorktreeBook(tmp_path)
    book.add(record("alpha", "20261205-233521-68e7d5"))
    book.add(record("alpine", "20261205-233522-99aa00"))
    assert book.find("alpha").name == "alpha"
    assert book.find("20261205-233522-99aa00").name == "alpine"
    assert book.find("68e7").name == "alpha"  # a short id's prefix
    assert book.find("alpi").name == "alpine"
    with pytest.raises(NoSuchWorktree, match=r"'alp' fits 2 worktrees \(alpha, alpine\)"):
        book.find("alp")
    with pytest.raises(NoSuchWorktree, match="`harness worktree list` lists them"):
        book.find("zeta")
    book.remove("alpha")
    assert [r.name for r in WorktreeBook(tmp_path).all()] == ["alpine"]
    assert book.of_session("20261205-233522-99aa00") is not None


def test_a_damaged_file_reads_as_no_worktrees(tmp_path: Path) -> None:
    (tmp_path / "worktrees.json").write_text("{not json")
    assert WorktreeBook(tmp_path).all() == []


@pytest.mark.parametrize("name", ["a..b", "-x", "x.lock", "has space", "x/y", "", "é"])
def test_names_that_cannot_be_a_branch_are_refused(name: str) -> None:
    assert name_problem(name) is not None


def test_plain_names_are_fine() -> None:
    assert name_problem("fix-login_2.0") is None
