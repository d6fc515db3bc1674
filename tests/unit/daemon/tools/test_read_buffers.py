"""read_file asks the editor's buffers before the disk (`ToolContext.buffers`).

A fake `BufferSource` that records what it is asked: its text is shown with
the disk read's cap and empty-file wording; None reads the disk; hidden files
and paths outside the workspace are refused before it is asked; a buffer's
text shown whole counts as seen (the base write_file checks), the disk's not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from coding_harness.daemon.tools import builtin, files
from coding_harness.daemon.tools.edit.seen import seen_texts
from coding_harness.daemon.tools.errors import ToolRefusal
from tests.support.tool_context import ESCAPES, build_project, make_ctx, run


class Buffers:
    """Answers from a dict of real paths; records every path it is asked about."""

    def __init__(self, texts: dict[Path, str]) -> None:
        self.texts = texts
        self.asked: list[Path] = []

    async def read_text(self, path: Path) -> str | None:
        self.asked.append(path)
        return self.texts.get(path)

    def can_write(self) -> bool:
        return False

    async def write_text(self, path: Path, text: str) -> None:
        raise OSError("this editor takes no writes")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return build_project(tmp_path)


def test_a_buffer_is_shown_instead_of_the_disk(root: Path) -> None:
    app = root / "src" / "app.py"
    buffers = Buffers({app: "def main():\n    return 43  # unsaved\n"})
    ctx, _ = make_ctx(root, buffers=buffers)
    assert run(builtin.read_file(ctx, path="src/app.py")).endswith("# unsaved\n")
    assert buffers.asked == [app.resolve()]
    assert seen_texts(ctx).base("src/app.py", buffers.texts[app]) == "same"
    assert seen_texts(ctx).base("src/app.py", app.read_text()) == "changed"


def test_no_buffer_reads_the_disk_and_counts_as_seen(root: Path) -> None:
    buffers = Buffers({})
    ctx, _ = make_ctx(root, buffers=buffers)
    disk = (root / "src" / "app.py").read_text()
    assert run(builtin.read_file(ctx, path="src/app.py")) == disk
    assert buffers.asked == [(root / "src" / "app.py").resolve()]
    assert seen_texts(ctx).base("src/app.py", disk) == "same"


def test_a_buffer_equal_to_the_disk_counts_as_seen(root: Path) -> None:
    app = root / "src" / "app.py"
    ctx, _ = make_ctx(root, buffers=Buffers({app.resolve(): app.read_text()}))
    run(builtin.read_file(ctx, path="src/app.py"))
    assert seen_texts(ctx).base("src/app.py", app.read_text()) == "same"


def test_a_buffer_gets_the_disk_reads_cap_and_empty_wording(root: Path) -> None:
    big, empty = root / "big.txt", root / "empty.txt"
    big.write_text("")
    empty.write_text("x\n")
    long = "y" * (files.READ_CAP_CHARS + 5)
    ctx, _ = make_ctx(root, buffers=Buffers({big.resolve(): long, empty.resolve(): ""}))
    shown = run(builtin.read_file(ctx, path="big.txt"))
    assert shown.startswith("y" * 100) and f"of {files.READ_CAP_CHARS + 5} characters" in shown
    assert "'empty.txt' is empty" in run(builtin.read_file(ctx, path="empty.txt"))
    assert seen_texts(ctx).base("empty.txt", "x\n") == "changed"  # it saw the empty buffer
    assert seen_texts(ctx).base("big.txt", "") == "unseen"  # the model saw the buffer


def test_hidden_and_outside_paths_are_refused_before_the_editor_is_asked(root: Path) -> None:
    buffers = Buffers({})
    ctx, _ = make_ctx(root, buffers=buffers)
    for path, fragment in ESCAPES:
        with pytest.raises(ToolRefusal, match=fragment):
            run(builtin.read_file(ctx, path=path))
    assert buffers.asked == []
