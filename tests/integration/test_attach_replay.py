"""`harness attach` shows a session's past turns exactly as the live stream showed
them (issue 26, item 9): one renderer for both, in a real terminal (tmux).

A turn runs in the REPL (a refused command, a command's output, an approved edit
and its check, a Markdown answer); then `harness attach` opens on the session in
a second terminal, and the turn reads the same there, line for line, under the
same `provider · model` banner.
"""

from __future__ import annotations

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

FIRST_LINE = "• run_shell 'git log'"
LAST_LINE = "add adds"


@pytest.fixture
def terminal(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> Iterator[Callable[..., Terminal]]:
    opened: list[Terminal] = []

    def open_terminal(*args: str) -> Terminal:
        term = Terminal(sandbox, calc_project, str(len(opened)), *args)
        opened.append(term)
        term.wait_until(lambda: ">" in term.text().split(), "the prompt")
        return term

    yield open_terminal
    for term in opened:
        term.close()


def the_turn(screen: str) -> list[str]:
    """The turn's lines on a screen, from its first tool call to its answer's end, less
    the approval question the live REPL asked at its prompt."""
    lines = [line.rstrip() for line in screen.splitlines()]
    start = next(i for i, line in enumerate(lines) if line == FIRST_LINE)
    end = next(i for i, line in enumerate(lines) if LAST_LINE in line and i > start)
    return [line for line in lines[start : end + 1] if not line.startswith("Apply this change?")]


def said_here(line: str) -> str:
    """An approval line as the terminal that answered it reads it."""
    return "approved" if line.startswith("approved in another terminal (") else line


def test_attach_replays_a_turn_as_it_was_shown_live(
    terminal: Callable[..., Terminal], model: FakeModelServer
) -> None:
    model.add(
        Reply(content="Let me look.", tool_calls=[tool_call("run_shell", command="git log")]),
        Reply(tool_calls=[tool_call("run_shell", command="ls")]),
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="# Done\n\n- **fixed** the sign\n- `add` adds"),
    )
    live = terminal()
    live.type("fix calc.py")
    live.wait_for("Apply this change?")
    live.type("y")
    live.wait_for(LAST_LINE)
    live.wait_until(lambda: live.text().rstrip().endswith(">"), "the prompt after the turn")
    shown_live = the_turn(live.text())

    attached = terminal("attach")
    attached.wait_for(LAST_LINE)
    screen = attached.text()
    assert "fake · fake-model · " in screen  # the banner the live REPL had
    assert "fix calc.py" in screen  # the task as it was typed
    replayed = the_turn(screen)
    # One line may differ, and must: the answer typed in the live REPL reads "approved"
    # there and, to the attached terminal, "approved in another terminal (harness REPL,
    # pid N)".
    assert "approved" in shown_live
    assert [said_here(line) for line in replayed] == shown_live
    assert any("refused: 'git' is not allowed" in line for line in replayed)
    assert "# Done" not in screen  # Markdown rendered, as it was live
    assert '{"command"' not in screen  # no raw tool call
