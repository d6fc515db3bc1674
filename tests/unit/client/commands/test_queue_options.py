"""`--queue --repo --ref`: read by both command-line readers, and refused where they make
no sense; `harness queue`'s table."""

from __future__ import annotations

import pytest

from coding_harness.client.args import UsageError, _fast_parse, build_parser, parse_oneshot
from coding_harness.client.commands.queue_table import age, table


def test_queue_options_are_read_alike_by_both_readers() -> None:
    argv = ["-p", "fix it", "--queue", "--repo", "git@h:a.git", "--ref", "dev"]
    fast = _fast_parse(argv)
    assert fast is not None
    slow = build_parser().parse_args(argv)
    assert (fast.queue, fast.repo, fast.ref) == (True, "git@h:a.git", "dev")
    assert (slow.queue, slow.repo, slow.ref) == (True, "git@h:a.git", "dev")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["-p", "x", "--repo", "u"], "--repo and --ref go with --queue"),
        (["-p", "x", "--queue", "--bg"], "--queue and --bg do not go together"),
        (["-p", "x", "--queue", "-y"], "--queue and --yes do not go together"),
        (["-p", "x", "--queue", "--session", "s"], "--queue and --session"),
    ],
)
def test_queue_refuses_what_a_runner_would_not_do(argv: list[str], said: str) -> None:
    with pytest.raises(UsageError, match=said):
        parse_oneshot(argv)


def test_the_table_has_a_row_per_task_and_shows_a_branch_or_an_error() -> None:
    rows = [
        {"id": 12, "state": "done", "person": "ann", "repo": "r", "ref": "main",
         "runner": "box", "attempt": 1, "created_at": 100.0, "branch": "harness/task-12",
         "pushed": True, "error": None},
        {"id": 11, "state": "failed", "person": "bob\x1b[31m", "repo": "r", "ref": "v1",
         "runner": "box", "attempt": 2, "created_at": 0.0, "branch": None, "error": "no ref"},
    ]  # fmt: skip
    lines = table(rows, now=160.0)
    assert lines[0].startswith("ID")
    assert "harness/task-12 (pushed)" in lines[1] and "r@main" in lines[1] and "1m" in lines[1]
    assert "no ref" in lines[2] and "\x1b" not in lines[2]
    assert age(7200) == "2h"
