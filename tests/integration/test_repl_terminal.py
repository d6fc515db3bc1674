"""Every slash command typed into the real `harness` REPL in a real terminal (tmux),
each followed by the next task, whose answer must come: no command locks the prompt.

The REPL runs as its own process in a tmux pane against a real daemon and the
fake model server; the test types with `send-keys` and reads the pane (its
scrollback included) with `capture-pane`. Skipped where tmux is not installed.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.mcp_setup import TIME, stdio_server, use_servers
from tests.support.tmux_terminal import WAIT, Terminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")

NEXT_TASK, NEXT_ANSWER = "say hi", "Hello after the command."


@pytest.fixture
def terminal(
    sandbox: Sandbox, model: FakeModelServer, daemon: object, calc_project: Path
) -> Iterator[Callable[..., Terminal]]:
    opened: list[Terminal] = []

    def open_repl(*args: str) -> Terminal:
        term = Terminal(sandbox, calc_project, str(len(opened)), *args)
        opened.append(term)
        term.wait_until(lambda: ">" in term.text().split(), "the prompt")
        return term

    yield open_repl
    for term in opened:  # failure or not, nothing is left running
        term.close()


def add_skill(sandbox: Sandbox, name: str, description: str) -> None:
    folder = sandbox.home / ".agents" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(f"---\ndescription: {description}\n---\nDo it carefully.\n")


def saved_conversation(sandbox: Sandbox) -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    (sandbox.root / "saved.json").write_text(json.dumps({"messages": messages}))


def time_server(sandbox: Sandbox) -> None:
    use_servers(sandbox, {"time": stdio_server(TIME)})


def map_off(sandbox: Sandbox) -> None:
    """`agent.repo_map_tokens` 0: what `/map` says then does not depend on how far a build got."""
    path = sandbox.home / ".coding_harness.json"
    config = json.loads(path.read_text())
    config["agent"]["repo_map_tokens"] = 0
    path.write_text(json.dumps(config))


@dataclass(kw_only=True, slots=True)
class Case:
    line: str
    shows: str
    replies: tuple[Reply, ...] = ()
    setup: Callable[[Sandbox], None] | None = None


CASES = [
    Case(line="/help", shows="Anything else is a task"),
    Case(line="/history", shows="(no messages yet)"),
    Case(line="/reset", shows="conversation cleared"),
    Case(line="/clear", shows="conversation cleared"),
    Case(line="/save {root}/out.json", shows="saved 0 messages"),
    Case(line="/load {root}/saved.json", shows="2 loaded messages", setup=saved_conversation),
    Case(line="/provider", shows="* fake"),
    Case(line="/provider fake", shows="next turns use fake"),
    Case(line="/model", shows="model: fake-model (provider fake)"),
    Case(line="/model other-model", shows="next turns use fake · other-model"),
    Case(line="/tokens", shows="tokens and cost"),
    Case(line="/cost", shows="this session: 0 tokens in, 0 out"),
    Case(line="/resume", shows="(no task yet)"),
    Case(line="!echo from-my-shell", shows="the output is in the conversation"),
    Case(line="/allow-cmd make", shows="`make` now runs without asking in this session"),
    Case(line="/search", shows="web search: off, from the config"),
    Case(line="/search duckduckgo", shows="web search on"),
    Case(line="/search off", shows="web search off"),
    Case(line="/budget", shows="session token budget: none"),
    Case(line="/budget 5000", shows="session token budget set to 5,000 tokens"),
    Case(line="/context", shows="context:"),
    Case(line="/compact", shows="nothing to compact yet"),
    Case(
        line="/summary",
        shows="calc.py adds two numbers.",
        replies=(Reply(content="calc.py adds two numbers."),),
    ),
    Case(
        line="/skills",
        shows="say hello nicely",
        setup=lambda box: add_skill(box, "greet", "say hello nicely"),
    ),
    Case(
        line="/greet the user",
        shows="Greetings, user.",
        replies=(Reply(content="Greetings, user."),),
        setup=lambda box: add_skill(box, "greet", "say hello nicely"),
    ),
    Case(line="/plan", shows="no plan yet"),
    Case(line="/map", shows="no repo map: agent.repo_map_tokens is 0", setup=map_off),
    Case(
        line="/intent general what is calc",
        shows="A calculator.",
        replies=(Reply(content="A calculator."),),
    ),
    Case(line="/undo", shows="nothing to undo"),
    Case(line="/checkpoints", shows="no checkpoints in session"),
    Case(line="/mcp", shows="time  stopped", setup=time_server),
    Case(line="/mcp restart time", shows="time: ready (pid", setup=time_server),
    Case(line="/nope", shows="unknown command /nope"),
]


@pytest.mark.parametrize("case", CASES, ids=[case.line.replace("{root}/", "") for case in CASES])
def test_after_each_command_the_next_task_runs(
    sandbox: Sandbox, model: FakeModelServer, terminal: Callable[..., Terminal], case: Case
) -> None:
    if case.setup is not None:
        case.setup(sandbox)
    model.add(*case.replies, Reply(content=NEXT_ANSWER))
    term = terminal()
    term.type(case.line.format(root=sandbox.root))
    term.wait_for(case.shows)
    term.type(NEXT_TASK)
    term.wait_for(NEXT_ANSWER)
    term.type("/quit")
    assert term.exit_status() == 0
    assert model.requests[-1]["messages"][-1]["content"] == NEXT_TASK


@pytest.mark.parametrize("line", ["/quit", "/exit"])
def test_quit_leaves_and_the_session_stays(
    sandbox: Sandbox, model: FakeModelServer, terminal: Callable[..., Terminal], line: str
) -> None:
    model.add(Reply(content=NEXT_ANSWER))
    term = terminal()
    term.type(NEXT_TASK)
    term.wait_for(NEXT_ANSWER)
    term.type(line)
    assert term.exit_status() == 0
    again = terminal("attach")  # the next task goes to the same session, its history shown
    again.wait_for(f"> {NEXT_TASK}")
    model.add(Reply(content="Still here."))
    again.type("and again")
    again.wait_for("Still here.")
    assert [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "user"] == [
        NEXT_TASK,
        "and again",
    ]


def test_a_skill_asks_its_approval_at_the_prompt_and_a_task_typed_meanwhile_runs(
    sandbox: Sandbox, model: FakeModelServer, terminal: Callable[..., Terminal], calc_project: Path
) -> None:
    add_skill(sandbox, "fixer", "fix bugs")
    model.add(
        Reply(
            tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=FIXED)], delay=1.0
        ),
        Reply(content="Fixed calc."),
        Reply(content=NEXT_ANSWER),
    )
    term = terminal()
    term.type("/fixer fix calc")
    term.type(NEXT_TASK)  # typed while the skill's turn runs: queued, not lost
    term.wait_for("queued behind the running turn")
    term.wait_for("Apply this change?")
    term.type("y")
    term.wait_for("Fixed calc.")
    term.wait_for(NEXT_ANSWER)
    assert (calc_project / "calc.py").read_text() == FIXED
    term.type("/quit")
    assert term.exit_status() == 0


def test_ctrl_c_cancels_a_summary_and_the_prompt_stays(
    sandbox: Sandbox, model: FakeModelServer, terminal: Callable[..., Terminal]
) -> None:
    model.add(Reply(content="too slow", delay=5.0), Reply(content=NEXT_ANSWER))
    term = terminal()
    term.type("/summary")
    deadline = time.monotonic() + WAIT
    while not model.requests and time.monotonic() < deadline:
        time.sleep(0.05)
    term.wait_for("intent:")  # the REPL heard the turn start (the route comes after it)
    term.keys("C-c")
    term.wait_for("(turn cancelled)")
    term.type(NEXT_TASK)
    term.wait_for(NEXT_ANSWER)
    term.type("/quit")
    assert term.exit_status() == 0
    assert "too slow" not in term.text()
