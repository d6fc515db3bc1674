"""The one-shot output formats through the real `harness` command and a real daemon:
text into a pipe and at a terminal (a pseudo-terminal), -q, --plain, NO_COLOR, json and
stream-json."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys

import pytest

from coding_harness.protocol.client import Connection
from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply
from tests.support.oneshot import PROMPT, harness, script_fix
from tests.support.waiting import wait_for

MARKDOWN = "# Fixed\n\nThe **bug** was `a - b`; [red]not markup[/red].\n\n- one\n- two\n"
CONTRACT_KEYS = ["reply", "exit_code", "session", "usage", "cost_usd", "files_changed", "check"]
COLOR = re.compile(r"\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;)[0-9;]*m")


def at_terminal(sandbox: Sandbox, *args: str, env: dict[str, str] | None = None) -> str:
    """Run harness with standard output and error on a pseudo-terminal; what it showed."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "coding_harness.client", *args],
        env={**sandbox.env, "TERM": "xterm-256color", "COLUMNS": "100", **(env or {})},
        cwd=sandbox.workspace,
        stdin=subprocess.DEVNULL,
        stdout=child,
        stderr=child,
    )
    os.close(child)
    shown = b""
    while select.select([main], [], [], 30)[0]:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed its side
            break
        if not data:
            break
        shown += data
    os.close(main)
    assert process.wait(timeout=30) == 0, shown
    return shown.decode()


def test_into_a_pipe_the_reply_is_exactly_what_the_model_wrote(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final=MARKDOWN)
    result = harness(sandbox, "-y", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == MARKDOWN
    assert "• read_file calc.py" in result.stderr and "intent:" not in result.stdout
    assert "      2 +    return a + b" in result.stderr  # the diff, numbered
    assert "\x1b" not in result.stdout + result.stderr


def test_quiet_leaves_only_the_reply(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final="Done.")
    result = harness(sandbox, "-q", "-y", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert (result.stdout, result.stderr) == ("Done.\n", "")


def test_quiet_still_shows_a_change_put_to_the_user(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final="Done.")
    result = harness(sandbox, "-q", "-p", PROMPT, input="y\n")
    assert result.returncode == 0, result.stderr
    assert "+    return a + b" in result.stderr and "Apply this change?" in result.stderr
    assert result.stdout == "Done.\n"


def test_json_prints_one_object_with_the_contract_keys(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model)
    result = harness(sandbox, "--output-format", "json", "-p", PROMPT, input="y\n")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # one object and nothing else
    assert list(report) == CONTRACT_KEYS
    assert report["usage"] == {"prompt_tokens": 300, "cached_tokens": 0, "completion_tokens": 60}
    assert report["files_changed"] == ["calc.py"] and report["session"]
    assert report["check"] == {"command": "make check", "passed": True}
    assert "Apply this change?" in result.stderr  # the question still goes to the person
    assert "• read_file calc.py" in result.stderr  # standard error is as in text
    assert (calc_project / "calc.py").read_text() == FIXED


def test_stream_json_prints_every_event_then_the_same_object(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model)
    result = harness(sandbox, "--output-format", "stream-json", "-y", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    *events, final = lines
    kinds = [event["kind"] for event in events]
    assert kinds[0] == "turn.started" and kinds[-1] == "turn.finished"
    assert {"tool.call", "tool.result", "diff", "text.delta", "usage"} <= set(kinds)
    seqs = [event["seq"] for event in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert list(final) == CONTRACT_KEYS and final["reply"] == "Fixed: add now adds."


def test_json_formats_report_an_unreachable_daemon_as_an_object(sandbox: Sandbox) -> None:
    sandbox.env["CODING_HARNESS_SOCKET"] = str(sandbox.root / ("x" * 120) / "harnessd.sock")
    result = harness(sandbox, "--output-format", "json", "-p", "hi")
    assert result.returncode == 4
    report = json.loads(result.stdout)
    assert list(report) == CONTRACT_KEYS and report["exit_code"] == 4
    assert "daemon" in result.stderr


def test_a_pipe_never_imports_rich(sandbox: Sandbox, model: FakeModelServer, calc_project) -> None:
    model.add(Reply(content="ok"))
    sandbox.env["PYTHONPROFILEIMPORTTIME"] = "1"
    result = harness(sandbox, "-p", "hi")
    assert result.returncode == 0, result.stderr
    imported = {line.split("|")[-1].strip() for line in result.stderr.splitlines() if "|" in line}
    assert "coding_harness.client.commands.oneshot" in imported
    assert not {name for name in imported if name.split(".")[0] in ("rich", "prompt_toolkit")}


def test_at_a_terminal_the_answer_is_markdown_in_color(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final=MARKDOWN)
    shown = at_terminal(sandbox, "-y", "-p", PROMPT)
    assert COLOR.search(shown)
    assert "The \x1b[1mbug\x1b[0m was" in shown and "**" not in shown
    assert "[red]not markup[/red]" in shown
    assert "\x1b[32m      2 +    return a + b\x1b[0m" in shown


def test_plain_at_a_terminal_prints_the_reply_as_written(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final=MARKDOWN)
    shown = at_terminal(sandbox, "--plain", "-y", "-p", PROMPT)
    assert "\x1b" not in shown
    assert MARKDOWN.replace("\n", "\r\n") in shown


def test_no_color_at_a_terminal_keeps_the_layout_without_color(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final=MARKDOWN)
    shown = at_terminal(sandbox, "-y", "-p", PROMPT, env={"NO_COLOR": "1"})
    assert not COLOR.search(shown)
    assert "**" not in shown and "bug" in shown
    assert (calc_project / "calc.py").read_text() == FIXED != BUGGY


def test_the_json_result_counts_the_turns_calls_and_the_session_the_notes_call_too(
    sandbox: Sandbox, model: FakeModelServer, conn: Connection
) -> None:
    """`usage` and `cost_usd` of the result are the turn's own calls; the turn-close notes
    call that follows the turn is counted in the session's usage and cost (stats.get)."""
    sandbox.write_config(model.endpoint, pricing={"input": 1.0, "output": 1.0})
    model.add(Reply(content="Done.", prompt_tokens=100_000, completion_tokens=20_000))
    notes = {"decisions": [], "facts": ["The project is empty"], "todo": []}
    model.notes_script.append(
        Reply(content=json.dumps(notes), prompt_tokens=30_000, completion_tokens=7_000)
    )
    result = harness(sandbox, "--output-format", "json", "-p", "list the files")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["usage"] == {
        "prompt_tokens": 100_000,
        "cached_tokens": 0,
        "completion_tokens": 20_000,
    }
    assert report["cost_usd"] == pytest.approx(0.12)
    session = wait_for(
        lambda: (
            (s := conn.request("stats.get", {"session": report["session"]})["session"])
            and s["usage"]["prompt_tokens"] == 130_000
            and s
        ),
        "the notes call's tokens in the session's",
    )
    assert session["usage"]["completion_tokens"] == 27_000
    assert session["cost_usd"] == pytest.approx(0.157)
