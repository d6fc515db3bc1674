"""The bell of an approval left waiting, in the real REPL in a real terminal (tmux): BEL
reaches the pane once `notify.after_seconds` pass, with a line naming the session, and
`CODING_HARNESS_BELL=off` keeps the line but not the bell. Skipped without tmux."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.tmux_terminal import Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

WAITS = "is waiting for your approval (edit calc.py)"


@pytest.fixture
def terminal(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> Iterator[Callable[..., tuple[Terminal, Path]]]:
    """`open_repl(**env)`: the REPL in a pane, and the file of every byte the pane got."""
    config_path = sandbox.home / ".coding_harness.json"
    config = json.loads(config_path.read_text())
    config["notify"] = {"after_seconds": 0.5, "desktop": "off"}
    config_path.write_text(json.dumps(config))
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)]),
        Reply(content="Left as it was."),
    )
    opened: list[Terminal] = []

    def open_repl(*args: str, **env: str) -> tuple[Terminal, Path]:
        sandbox.env.update(env)
        term = Terminal(sandbox, calc_project, str(len(opened)), *args)
        opened.append(term)
        raw = sandbox.root / f"pane-{len(opened)}.bytes"
        term._tmux("pipe-pane", "-t", "repl", "-o", f"cat >> {raw}")
        if not args:
            term.wait_until(lambda: ">" in term.text().split(), "the prompt")
        return term, raw

    yield open_repl
    for term in opened:  # failure or not, nothing is left running
        term.close()


def _answer_no_and_leave(term: Terminal) -> None:
    term.type("n")
    term.wait_for("Left as it was.")
    term.keys("C-d")
    assert term.exit_status() == 0


def test_the_bell_rings_once_in_the_repl_when_an_approval_waits(
    terminal: Callable[..., tuple[Terminal, Path]], calc_project: Path
) -> None:
    term, raw = terminal()
    term.type("fix calc.py")
    term.wait_for("Apply this change?")
    term.wait_for(WAITS)
    term.wait_until(lambda: b"\a" in raw.read_bytes(), "the bell in the pane's bytes")
    _answer_no_and_leave(term)
    assert raw.read_bytes().count(b"\a") == 1
    assert (calc_project / "calc.py").read_text() == BUGGY


def test_coding_harness_bell_off_keeps_the_line_but_not_the_bell(
    terminal: Callable[..., tuple[Terminal, Path]],
) -> None:
    term, raw = terminal(CODING_HARNESS_BELL="off")
    term.type("fix calc.py")
    term.wait_for(WAITS)
    _answer_no_and_leave(term)
    assert b"\a" not in raw.read_bytes()


def test_harness_approve_rings_when_the_question_waits(
    terminal: Callable[..., tuple[Terminal, Path]], sandbox: Sandbox, calc_project: Path
) -> None:
    term, raw = terminal("approve")
    term.wait_for("answering approvals for every session")
    task = sandbox.root / "task.txt"
    task.write_text("fix calc.py")
    # --stdin takes the input for the prompt, so only `harness approve` can answer.
    with task.open() as given:
        oneshot = subprocess.Popen(
            [sys.executable, "-m", "coding_harness.client", "--stdin"],
            env=sandbox.env,
            cwd=calc_project,
            stdin=given,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    try:
        term.wait_for("is still waiting for your answer")
        term.wait_until(lambda: b"\a" in raw.read_bytes(), "the bell in the pane's bytes")
        term.type("n")
        oneshot.wait(timeout=30)
    finally:
        oneshot.kill()
        oneshot.communicate(timeout=10)
    term.keys("C-c")
    assert raw.read_bytes().count(b"\a") == 1
    assert (calc_project / "calc.py").read_text() == BUGGY
