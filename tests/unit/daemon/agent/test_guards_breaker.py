"""The shell circuit breaker: three failures of one shape turn into a question."""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path

from coding_harness.daemon.agent.breaker import QUESTION, ShellBreaker, failure_shape
from coding_harness.daemon.agent.seams import JSONObject, ModelReply, ToolCall
from coding_harness.daemon.tools.builtin import build_tools
from tests.support.scripted_model import run_loop
from tests.support.tool_context import make_ctx

THE_QUESTION = (
    "\n\n[harness] Three commands have now failed in this same way, although the commands "
    "differed. Another variation of the command is unlikely to help. Before the next call, "
    "work out what is actually missing or wrong: a program, a package, a file, a make "
    "target, a permission? Can it be provided from inside this workspace with the allowed "
    "commands? If not, stop trying this approach: take a different one, or tell the user "
    "what is missing and ask them how to proceed."
)


class CannedShell:
    """run_shell answers from a table (command -> output); any other tool answers 'ok'."""

    def __init__(self, outputs: dict[str, str]) -> None:
        self.outputs = outputs

    def schemas(self) -> list[JSONObject]:
        return [{"type": "function", "function": {"name": "run_shell", "parameters": {}}}]

    async def execute(self, call: ToolCall) -> str:
        if call.name != "run_shell":
            return "ok"
        return self.outputs[json.loads(call.arguments)["command"]]


def shell_reply(command: str, id: str) -> ModelReply:
    arguments = json.dumps({"command": command})
    return ModelReply(tool_calls=[ToolCall(id=id, name="run_shell", arguments=arguments)])


def test_the_question_text() -> None:
    assert QUESTION.format(count="Three") == THE_QUESTION


def test_third_same_shaped_failure_becomes_a_question_once_per_streak() -> None:
    outputs = {  # the command varies, the failure stays: pytest is not installed
        "uv run pytest": "/work/.venv/bin/python: No module named pytest\n(exit 1)",
        "uv run python -m pytest": "/usr/bin/python3: No module named pytest\n(exit 1)",
        "uv run python3.12 -m pytest": "/opt/py/bin/python3.12: No module named pytest\n(exit 1)",
        "uv run python -m pytest -q": "/usr/bin/python3: No module named pytest\n(exit 1)",
        "make test": "ok\n(exit 0)",
    }
    commands = list(outputs)
    script = [shell_reply(command, f"c{i}") for i, command in enumerate(commands)]
    done = run_loop([*script, ModelReply(content="Missing pytest.")], CannedShell(outputs))
    results = done.tool_results()
    assert results[0] == outputs[commands[0]]
    assert results[1] == outputs[commands[1]]
    assert results[2] == outputs[commands[2]] + THE_QUESTION
    assert results[3] == outputs[commands[3]]  # the streak starts again after the question
    assert results[4] == "ok\n(exit 0)"
    assert done.result.reply == "Missing pytest."


def test_different_failures_do_not_add_up() -> None:
    outputs = {
        "make lint": "make: *** No rule to make target 'lint'.  Stop.\n(exit 2)",
        "cat missing.txt": "cat: missing.txt: No such file or directory\n(exit 1)",
        "uv sync": "error: No `pyproject.toml` found in current directory\n(exit 2)",
    }
    script = [shell_reply(command, f"c{i}") for i, command in enumerate(outputs)]
    done = run_loop([*script, ModelReply(content="done")], CannedShell(outputs))
    assert done.tool_results() == list(outputs.values())


def test_refused_programs_are_failures_of_one_shape(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    commands = ["pip install pytest", "python3 -m pytest", "pytest -q"]
    script = [shell_reply(command, f"c{i}") for i, command in enumerate(commands)]
    done = run_loop([*script, ModelReply(content="stop")], build_tools(ctx))
    results = done.tool_results()
    assert results[0] == (
        "refused: 'pip' is not allowed. run_shell runs only cat, ls, make, pwd, uv, "
        "named without a path"
    )
    assert results[2] == (
        "refused: 'pytest' is not allowed. run_shell runs only cat, ls, make, pwd, uv, "
        "named without a path" + THE_QUESTION
    )


def test_real_make_targets_that_do_not_exist(tmp_path: Path) -> None:
    (tmp_path / "Makefile").write_text("check:\n\t@echo ok\n")
    ctx, _ = make_ctx(tmp_path, extra_commands=frozenset({"make"}))  # targets run unasked
    commands = ["make lint", "make style", "make format-check"]
    script = [shell_reply(command, f"c{i}") for i, command in enumerate(commands)]
    done = run_loop([*script, ModelReply(content="stop")], build_tools(ctx))
    results = done.tool_results()
    assert "No rule to make target 'lint'" in results[0]
    assert not results[1].endswith(THE_QUESTION)
    assert "No rule to make target 'format-check'" in results[2]
    assert results[2].endswith(THE_QUESTION)


def test_a_changed_workspace_ends_the_streak() -> None:
    states = iter(range(100))

    def probe() -> Hashable:  # every round changes the workspace, like a real edit would
        return next(states)

    outputs = {
        f"make test{i}": "FAILED tests/test_a.py::test_x - assert 1 == 2\n(exit 2)"
        for i in range(3)
    }
    script = [shell_reply(command, f"c{i}") for i, command in enumerate(outputs)]
    done = run_loop(
        [*script, ModelReply(content="done")], CannedShell(outputs), progress_probe=probe
    )
    assert not any(result.endswith(THE_QUESTION) for result in done.tool_results())


def test_shapes_ignore_names_paths_and_numbers() -> None:
    a = failure_shape("/home/u/p/.venv/bin/python: No module named 'pytest'\n(exit 1)")
    b = failure_shape('/usr/bin/python3.12: No module named "py.test"\n(exit 1)')
    assert a == b == "<path>: no module named <name> (exit <n>)"
    assert failure_shape("x\n(exit 1)") != failure_shape("y\n(exit 1)")


def test_other_tools_and_successes_are_not_counted() -> None:
    breaker = ShellBreaker()
    read = ToolCall(id="r", name="read_file", arguments="{}")
    shell = ToolCall(id="s", name="run_shell", arguments="{}")
    for _ in range(5):
        assert breaker.review(read, "'x' does not exist") == "'x' does not exist"
        assert breaker.review(shell, "fine\n(exit 0)") == "fine\n(exit 0)"
