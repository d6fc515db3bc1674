"""Progress detection: the workspace fingerprint, the .gitignore matcher, the stall stop."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Hashable
from pathlib import Path

import pytest

from coding_harness.daemon.agent.fingerprint import (
    Fingerprinter,
    workspace_fingerprint,
    workspace_probe,
)
from coding_harness.daemon.agent.gitignore import GitIgnore
from coding_harness.daemon.agent.history import repair_dangling
from coding_harness.daemon.agent.progress import NO_PROGRESS
from coding_harness.daemon.agent.seams import ModelReply, ToolCall
from tests.support.scripted_model import EchoTools, run_loop

STOPPED = (
    "Stopped: 8 rounds of tool calls in a row left the workspace exactly as it was, so the "
    "model seems to be going round in circles. Nothing it did in those rounds was lost. Ask "
    "again with a more specific request, point it at the file to change, or try a stronger "
    "model."
)


def reads(count: int) -> list[ModelReply | Exception]:
    """`count` rounds of reading a different file each time (no repetition)."""
    return [
        ModelReply(
            tool_calls=[ToolCall(id=f"r{i}", name="read_file", arguments=f'{{"path": "f{i}"}}')]
        )
        for i in range(count)
    ]


def test_eight_rounds_without_a_change_stop_the_turn(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    done = run_loop(
        [*reads(20), ModelReply(content="never")], progress_probe=workspace_probe(tmp_path)
    )
    assert done.result.stopped == "no_progress"
    assert done.result.reply == STOPPED == NO_PROGRESS.format(count=8)
    assert len(done.model.payloads) == 8
    assert len(done.tool_results()) == 8
    assert repair_dangling(done.messages, "x") == 0


class WritingTools(EchoTools):
    """Each call writes a file, as an applied edit would."""

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root

    async def execute(self, call: ToolCall) -> str:
        path = json.loads(call.arguments)["path"]
        (self.root / f"{path}.txt").write_text(path)
        return await super().execute(call)


def test_rounds_that_change_files_keep_going(tmp_path: Path) -> None:
    done = run_loop(
        [*reads(12), ModelReply(content="finished")],
        WritingTools(tmp_path),
        progress_probe=workspace_probe(tmp_path),
    )
    assert done.result.stopped is None
    assert done.result.reply == "finished"


def test_a_change_resets_the_count(tmp_path: Path) -> None:
    states = iter([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1])  # changed in round 8

    def probe() -> Hashable:
        return next(states)

    done = run_loop([*reads(20), ModelReply(content="never")], progress_probe=probe)
    assert done.result.stopped == "no_progress"
    assert len(done.model.payloads) == 16  # 7 unchanged, 1 changed, then 8 unchanged


def test_the_limit_is_a_setting_and_zero_turns_it_off(tmp_path: Path) -> None:
    probe = workspace_probe(tmp_path)
    done = run_loop(
        [*reads(5), ModelReply(content="x")], progress_probe=probe, settings={"stall_limit": 3}
    )
    assert done.result.reply == NO_PROGRESS.format(count=3)
    done = run_loop(
        [*reads(10), ModelReply(content="done")], progress_probe=probe, settings={"stall_limit": 0}
    )
    assert done.result.stopped is None


def test_no_probe_means_no_progress_guard() -> None:
    assert run_loop([*reads(12), ModelReply(content="done")]).result.stopped is None


def test_the_probe_runs_off_the_event_loop(tmp_path: Path) -> None:
    threads: list[threading.Thread] = []

    def probe() -> Hashable:
        threads.append(threading.current_thread())
        return 0

    run_loop([*reads(2), ModelReply(content="done")], progress_probe=probe)
    assert len(threads) == 3  # the baseline, then one per round
    assert threading.main_thread() not in threads


# --- the fingerprint -------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print(1)\n")
    (tmp_path / "README.md").write_text("# x\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "index").write_text("i")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.o").write_text("o")
    (tmp_path / "debug.log").write_text("log")
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    return tmp_path


def test_edits_creations_deletions_and_renames_change_it(tree: Path) -> None:
    first = workspace_fingerprint(tree)
    assert first.entries == 3  # src/, src/app.py, README.md
    app = tree / "src" / "app.py"
    os.utime(app, ns=(1, 1))
    changes = [
        lambda: app.write_text("print(2)\n"),
        lambda: (tree / "new.py").write_text(""),
        lambda: (tree / "README.md").unlink(),
        lambda: app.rename(tree / "src" / "main.py"),
        lambda: (tree / "empty").mkdir(),
    ]
    seen = {workspace_fingerprint(tree)}
    for change in changes:
        change()
        now = workspace_fingerprint(tree)
        assert now not in seen
        seen.add(now)
    assert workspace_fingerprint(tree) == workspace_fingerprint(tree)


def test_hidden_and_ignored_files_do_not_count(tree: Path) -> None:
    before = workspace_fingerprint(tree)
    (tree / ".git" / "index").write_text("changed")
    (tree / "build" / "out.o").write_text("changed")
    (tree / "build" / "more.o").write_text("new")
    (tree / "debug.log").write_text("more log")
    (tree / "other.log").write_text("log")
    (tree / "src" / "app.py~").write_text("backup")
    (tree / "#lock#").write_text("lock")
    assert workspace_fingerprint(tree) == before


def test_the_walk_is_capped(tree: Path) -> None:
    for i in range(10):
        (tree / f"f{i}.txt").write_text("x")
    capped = workspace_fingerprint(tree, max_entries=5)
    assert capped.capped and capped.entries <= 5
    assert not workspace_fingerprint(tree).capped


def test_symlinks_are_not_followed(tree: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "big.txt").write_text("x")
    (tree / "link").symlink_to(outside, target_is_directory=True)
    before = workspace_fingerprint(tree)
    (outside / "big.txt").write_text("changed elsewhere")
    assert workspace_fingerprint(tree) == before


# --- the .gitignore matcher --------------------------------------------------------------

RULES = """
# comment
*.pyc
build/
/dist
docs/*.html
**/cache/**
!keep.pyc
\\#literal
data?.csv
[abc].tmp
"""


@pytest.mark.parametrize(
    ("rel", "is_dir", "ignored"),
    [
        ("x.pyc", False, True),
        ("a/b/x.pyc", False, True),
        ("a/keep.pyc", False, False),  # negated
        ("build", True, True),
        ("a/build", True, True),
        ("build", False, False),  # folders only
        ("dist", True, True),
        ("a/dist", True, False),  # anchored to the root
        ("docs/a.html", False, True),
        ("docs/sub/a.html", False, False),  # * does not cross folders
        ("a/cache/x", False, True),
        ("#literal", False, True),
        ("data1.csv", False, True),
        ("data12.csv", False, False),
        ("b.tmp", False, True),
        ("d.tmp", False, False),
        ("src/app.py", False, False),
    ],
)
def test_gitignore_rules(rel: str, is_dir: bool, ignored: bool) -> None:
    rules = GitIgnore.parse(RULES)
    assert rules.ignored(rel, rel.rsplit("/", 1)[-1], is_dir) is ignored


def test_no_gitignore_means_no_rules(tmp_path: Path) -> None:
    assert not GitIgnore.for_root(tmp_path).has_rules
    assert not GitIgnore.for_root(tmp_path).ignored("a.pyc", "a.pyc", False)


# --- listings reused between walks --------------------------------------------------------


def age(root: Path) -> None:
    """Give every folder an old mtime, as in a workspace nobody touched for a while."""
    for folder, _, _ in os.walk(root):
        os.utime(folder, ns=(10**18, 10**18))


def test_reused_listings_still_see_every_change(tree: Path) -> None:
    age(tree)
    probe = Fingerprinter(tree)
    seen = {probe()}
    app = tree / "src" / "app.py"
    changes = [
        lambda: app.write_text("print(3)\n"),  # in place: the folder's mtime stays
        lambda: (tree / "src" / "new.py").write_text(""),
        lambda: (tree / "src" / "new.py").rename(tree / "src" / "newer.py"),
        lambda: (tree / ".gitignore").write_text("build/\n"),  # debug.log counts now
    ]
    for change in changes:
        change()
        now = probe()
        assert now not in seen
        assert now == workspace_fingerprint(tree)  # the same as a walk from scratch
        seen.add(now)


def test_a_folder_changed_just_now_is_listed_again(tree: Path) -> None:
    src = tree / "src"
    stamp = src.stat().st_mtime_ns  # recent: its listing must not be kept
    probe = Fingerprinter(tree)
    before = probe()
    (src / "late.py").write_text("")
    os.utime(src, ns=(stamp, stamp))  # a change within the same clock tick
    assert probe() != before
