"""What the conversation mentions, found in one linear pass: a long run of path
characters without a dot (before: a backtracking pattern, 20 s and more with the
interpreter held) neither holds up the daemon nor hides the mentions around it.

The bound on how long the interpreter is held is a correctness bound, not a
speed figure."""

from __future__ import annotations

import threading

import pytest

from coding_harness.daemon.index.code_index import CodeIndex
from coding_harness.daemon.index.repo_map import Mentions, mentions
from tests.unit.daemon.index.stall_watch import StallWatch


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> CodeIndex:
    root = tmp_path_factory.mktemp("ws")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def handle_request():\n    return 1\n")
    (root / "tools.tar.py").write_text("def pack_things():\n    return 2\n")
    (root / "top.py").write_text("def at_the_top():\n    return 3\n")
    built = CodeIndex(root)
    built.refresh()
    return built


def test_a_long_dotless_run_is_scanned_in_linear_time(index: CodeIndex) -> None:
    run = "a" * 120_000
    texts = [f"{run} then src/app.py and handle_request", "/" * 60_000 + "-" * 60_000]
    found: list[Mentions] = []
    with StallWatch() as watch:
        scan = threading.Thread(target=lambda: found.append(mentions(index, texts)))
        scan.start()
        scan.join()
    assert watch.longest < 1.0
    assert found[0].files == {"src/app.py"} and found[0].names == {"handle_request"}


@pytest.mark.parametrize(
    "text",
    [
        "look at src/app.py.",
        "look at ./src/app.py, please",
        "(src/app.py) and `tools.tar.py`",
        "the trace says src/app.py:12 then top.py:3",
    ],
)
def test_paths_are_found_as_the_old_pattern_found_them(index: CodeIndex, text: str) -> None:
    expected = {path for path in ("src/app.py", "tools.tar.py", "top.py") if path in text}
    assert mentions(index, [text]).files == expected


def test_words_that_are_no_path_are_not_taken_for_one(index: CodeIndex) -> None:
    found = mentions(index, ["src/app.pyc src/app.py.bak xsrc/app.py app.py"])
    assert found.files == set()
