"""The check after an approved edit, while it runs, in a real terminal (tmux): the
REPL's status line and the one-shot's spinner say `running make check` with its
elapsed time (issue 26, item 5), not a bare prompt or the edit tool's name.

The check waits for a file the test writes once it has seen the status, so the
test sees the check running however fast or slow the machine is.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.tmux_terminal import Terminal

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
]

RUNNING = re.compile(r"running make check \d+\.\ds")


@pytest.fixture
def held_check(calc_project: Path) -> Iterator[Path]:
    """A `make check` that runs until the file `release` exists (that path); released
    at the end whatever happened, so no check is left running."""
    (calc_project / "Makefile").write_text(
        "check:\n\t@while [ ! -f release ]; do sleep 0.05; done\n"
    )
    yield calc_project / "release"
    (calc_project / "release").write_text("")


@pytest.fixture
def terminal(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> Iterator[Callable[..., Terminal]]:
    opened: list[Terminal] = []

    def open_terminal(*args: str) -> Terminal:
        term = Terminal(sandbox, calc_project, str(len(opened)), *args)
        opened.append(term)
        return term

    yield open_terminal
    for term in opened:
        term.close()


def script_fix(model: FakeModelServer) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Fixed it."),
    )


def test_the_repl_shows_the_check_running(
    terminal: Callable[..., Terminal], model: FakeModelServer, held_check: Path
) -> None:
    script_fix(model)
    term = terminal()
    term.wait_until(lambda: ">" in term.text().split(), "the prompt")
    term.type("fix calc.py")
    term.wait_for("Apply this change?")
    term.type("y")
    term.wait_until(lambda: RUNNING.search(term.text()) is not None, "the check's status")
    held_check.write_text("")
    term.wait_for("make check passed (")
    term.wait_for("Fixed it.")
    assert RUNNING.search(term.text().split("make check passed")[-1]) is None  # it ended
    term.type("/quit")
    assert term.exit_status() == 0


def test_the_oneshot_spinner_names_the_check(
    terminal: Callable[..., Terminal], model: FakeModelServer, held_check: Path
) -> None:
    script_fix(model)
    term = terminal("-y", "-p", "fix calc.py")
    term.wait_until(lambda: RUNNING.search(term.text()) is not None, "the check's spinner")
    assert "running propose_edit" not in term.text()
    held_check.write_text("")
    assert term.exit_status() == 0
    assert "make check passed (" in term.text()
