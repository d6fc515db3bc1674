"""The `hook` event's dim line: what ran, and what came of it; -q leaves it out."""

from __future__ import annotations

from tests.unit.client.render.test_plain_view import Screen


def test_each_hook_run_is_one_line_unless_quiet() -> None:
    screen = Screen()
    screen.emit("hook", event="PreToolUse", command="./no-shell.sh", exit_code=2, blocked=True)
    screen.emit("hook", event="PostToolUse", command="fmt.sh\nmore", exit_code=0, blocked=False)
    screen.emit("hook", event="Stop", command="x" * 80, exit_code=None, blocked=False)
    screen.emit("hook", event="UserPromptSubmit", command="log.sh", exit_code=3, blocked=False)
    assert screen.err.getvalue().splitlines() == [
        "hook PreToolUse: ./no-shell.sh -> blocked",
        "hook PostToolUse: fmt.sh -> ok",
        f"hook Stop: {'x' * 57}... -> killed",
        "hook UserPromptSubmit: log.sh -> exit 3",
    ]
    assert screen.out.getvalue() == ""
    quiet = Screen(quiet=True)
    quiet.emit("hook", event="PreToolUse", command="./no-shell.sh", exit_code=2, blocked=True)
    assert quiet.err.getvalue() == ""
