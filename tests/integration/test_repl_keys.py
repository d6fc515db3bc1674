"""The REPL's keys against a real daemon: Ctrl-C, Ctrl-D, Tab, Ctrl-R, multi-line input,
and typing while a turn runs."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from prompt_toolkit.history import FileHistory

from coding_harness.protocol import methods
from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.processes import client
from tests.support.repl_run import ReplRun, user_messages, wait_until

CTRL_C, CTRL_D, CTRL_R, TAB, ENTER, ESC_ENTER = "\x03", "\x04", "\x12", "\t", "\r", "\x1b\r"


def in_flight(run: ReplRun, model: FakeModelServer, count: int = 1) -> None:
    """Wait until the model has been asked `count` times and the REPL heard the turn start
    (it prints the turn's route, which the daemon sends after `turn.started`)."""
    wait_until(lambda: len(model.requests) >= count, f"model request {count}")
    wait_until(lambda: run.err.text().count("intent:") >= count, "the turn's route shown", run=run)


def drawn(run: ReplRun, text: str, since: int) -> bool:
    """Whether `text` appears on the REPL's screen after offset `since`, styles aside."""
    return text in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", run.screen.text()[since:])


def complete(run: ReplRun, typed: str, inserted: str) -> None:
    """Type `typed`, press Tab, and wait until the completion's `inserted` text is drawn."""
    mark = len(run.screen.text())
    run.type(typed)
    wait_until(lambda: drawn(run, typed, mark), f"{typed!r} drawn")
    before = len(run.screen.text())
    run.type(TAB)
    wait_until(lambda: inserted in run.screen.text()[before:], f"completion {inserted!r}")


def test_ctrl_c_cancels_the_running_turn_and_stays(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="too late", delay=5.0), Reply(content="Hello again."))
    run = repl()
    run.type("take your time\n")
    in_flight(run, model)
    run.type(CTRL_C)
    run.wait_for("(turn cancelled)", "err")
    assert "cancelling the turn" in run.err.text()
    run.type("say hi\n")
    run.wait_for("Hello again.")
    assert run.finish() == 0
    assert "too late" not in run.out.text()
    assert user_messages(model) == ["take your time", "say hi"]


def test_ctrl_d_leaves_while_the_turn_goes_on(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="finished without you", delay=1.0))
    run = repl()
    run.type("long task\n")
    in_flight(run, model)
    assert run.finish(CTRL_D) == 0
    assert "goes on in the daemon" in run.err.text()
    with client(sandbox.socket) as conn:

        def answered() -> bool:
            [listed] = conn.request(methods.SESSION_LIST)["sessions"]
            history = conn.request(methods.SESSION_HISTORY, {"session": listed["session"]})
            return any(m.get("content") == "finished without you" for m in history["messages"])

        wait_until(answered, "the turn to finish in the daemon")


def test_a_line_typed_during_a_turn_is_queued(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="first done", delay=1.0), Reply(content="second done"))
    run = repl()
    run.type("first\n")
    in_flight(run, model)
    run.type("second\n")
    run.wait_for("queued behind the running turn (position 1)", "err")
    run.wait_for("second done")
    assert run.finish() == 0
    assert run.out.text().index("first done") < run.out.text().index("second done")


def test_backslash_and_esc_enter_continue_the_line(
    model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    model.add(Reply(content="one"), Reply(content="two"))
    run = repl()
    run.type("first line\\" + ENTER + "second line" + ENTER)
    run.wait_for("one")
    run.type("alpha" + ESC_ENTER + "beta" + ENTER)
    run.wait_for("two")
    assert run.finish() == 0
    assert user_messages(model) == ["first line\nsecond line", "alpha\nbeta"]


def test_history_is_searched_with_ctrl_r_and_recalled_with_up(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    history = FileHistory(str(sandbox.home / ".coding_agent_history"))
    for line in ("remember kumquat", "explain calc.py", "list the files"):
        history.store_string(line)
    model.add(Reply(content="found it"), Reply(content="up again"))
    run = repl()
    run.wait_for(">", "screen")  # the prompt is up; its history loads in the background
    time.sleep(0.3)
    mark = len(run.screen.text())
    run.type(CTRL_R)
    wait_until(lambda: drawn(run, "(reverse-i-search)", mark), "the search prompt")
    mark = len(run.screen.text())
    run.type("kumq")
    wait_until(lambda: drawn(run, "remember kumquat", mark), "the line found")
    mark = len(run.screen.text())
    run.type(ENTER)  # accept the search
    wait_until(lambda: drawn(run, "> remember kumquat", mark), "the line found in the prompt")
    run.type(ENTER)  # submit the line found
    run.wait_for("found it")
    run.type("\x1b[A" + ENTER)  # Up: the line just sent
    run.wait_for("up again")
    assert run.finish() == 0
    assert user_messages(model) == ["remember kumquat", "remember kumquat"]


def test_tab_completes_commands_providers_models_and_skills(
    sandbox: Sandbox, model: FakeModelServer, repl: Callable[..., ReplRun]
) -> None:
    for name, description in (("greeting", "say hello nicely"), ("grumble", "complain")):
        skill = sandbox.home / ".agents" / "skills" / name
        skill.mkdir(parents=True)
        (skill / "SKILL.md").write_text(f"---\ndescription: {description}\n---\nDo it.\n")
    run = repl()
    complete(run, "/hel", "p")
    run.type(ENTER)
    run.wait_for("/budget")  # the help table
    complete(run, "/provider fa", "ke")
    run.type(ENTER)
    run.wait_for("next turns use fake", "err")
    complete(run, "/model fake-m", "odel")
    run.type(ENTER)
    wait_until(lambda: run.err.text().count("next turns use fake · fake-model") == 2, "/model")
    complete(run, "/gr", "/greeting")  # two skills: the menu shows both
    run.wait_for("say hello nicely", "screen")
    run.wait_for("/grumble", "screen")
    assert run.finish("\x15/quit\n") == 0  # Ctrl-U clears the line first
