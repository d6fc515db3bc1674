"""A command's output in the REPL, in a real terminal (tmux): folded under its call,
naming the key that shows it whole, and Ctrl-O shows it whole (issue 26, item 7)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.tmux_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]


def test_ctrl_o_shows_the_folded_output_whole(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> None:
    (calc_project / "long.txt").write_text("".join(f"row {n}\n" for n in range(1, 41)))
    model.add(
        Reply(tool_calls=[tool_call("run_shell", command="cat long.txt")]),
        Reply(content="Forty rows."),
    )
    term = Terminal(sandbox, calc_project, "0")
    try:
        term.wait_until(lambda: ">" in term.text().split(), "the prompt")
        term.type("count the rows")
        term.wait_for("Forty rows.")
        screen = term.text()
        assert "… 34 more lines (Ctrl-O shows them)" in screen
        assert "row 20" not in screen
        term.keys("C-o")
        term.wait_for("row 20")
        assert term.text().count("row 40") == 2  # the fold's last line, then the whole
    finally:
        term.close()
