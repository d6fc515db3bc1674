"""The REPL's history file: its own format, the reference designs' plain lines, a cap."""

from __future__ import annotations

from pathlib import Path

from coding_harness.client.repl.prompt import HISTORY_LIMIT, TaskHistory, history_entries


def test_plain_lines_and_the_repl_format_are_both_read() -> None:
    text = "fix calc.py\nadd a test\n\n# 2026-12-01 10:00\n+first line\n+second line\nlast\n"
    assert history_entries(text) == [
        "fix calc.py",
        "add a test",
        "first line\nsecond line",
        "last",
    ]


def test_only_the_newest_entries_are_loaded(tmp_path: Path) -> None:
    path = tmp_path / ".coding_agent_history"
    path.write_text("".join(f"task {i}\n" for i in range(HISTORY_LIMIT + 500)))
    loaded = list(TaskHistory(path, keep=lambda: True).load_history_strings())
    assert len(loaded) == HISTORY_LIMIT
    assert loaded[0] == f"task {HISTORY_LIMIT + 499}" and loaded[-1] == "task 500"
