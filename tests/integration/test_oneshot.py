"""`harness -p ...` end to end: real client, real daemon, fake model over HTTP."""

from __future__ import annotations

import json

from tests.integration.conftest import BUGGY, FIXED, Sandbox
from tests.support.fake_model_server import FakeModelServer, Fault, Reply, tool_call
from tests.support.oneshot import PROMPT, harness, script_fix
from tests.support.processes import daemon_pid, run_harness


def tool_results(model: FakeModelServer) -> list[str]:
    last = model.requests[-1]["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def test_fix_with_yes_applies_edit_and_exits_0(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model)
    result = harness(sandbox, "-y", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    assert "Fixed: add now adds." in result.stdout
    assert "+    return a + b" in result.stderr  # the diff is still shown with -y
    assert "make check passed" in result.stderr
    assert any("make check passed" in r for r in tool_results(model))
    # The file the model read is what it was sent.
    assert BUGGY in tool_results(model)[0]


def test_dry_run_shows_diff_and_writes_nothing(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final="Proposed the fix.")
    result = harness(sandbox, "--dry-run", PROMPT)
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert "-    return a - b" in result.stderr
    assert any("not written" in r for r in tool_results(model))


def test_rejected_from_pipe_exits_3_and_writes_nothing(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final="Left it alone.")
    result = harness(sandbox, "-p", PROMPT, input="n\n")
    assert result.returncode == 3, result.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert any("rejected" in r for r in tool_results(model))


def test_approved_from_pipe_applies(sandbox: Sandbox, model: FakeModelServer, calc_project) -> None:
    script_fix(model)
    result = harness(sandbox, "-p", PROMPT, input="y\n")
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == FIXED


def test_skip_sends_reason_to_model_and_exits_3(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    script_fix(model, final="Understood.")
    result = harness(sandbox, "-p", PROMPT, input="s\nuse a docstring too\n")
    assert result.returncode == 3, result.stderr
    assert (calc_project / "calc.py").read_text() == BUGGY
    assert any("use a docstring too" in r for r in tool_results(model))


def test_failing_make_check_exits_2(sandbox: Sandbox, model: FakeModelServer, calc_project) -> None:
    wrong = "def add(a, b):\n    return a * b\n"
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=wrong)]),
        Reply(content="I changed it."),
    )
    result = harness(sandbox, "-y", "-p", PROMPT)
    assert result.returncode == 2, result.stderr
    assert (calc_project / "calc.py").read_text() == wrong
    assert "make check failed" in result.stderr
    assert any("add is wrong" in r for r in tool_results(model))


def test_model_server_down_exits_1_naming_endpoint(sandbox: Sandbox, calc_project) -> None:
    endpoint = "http://127.0.0.1:9/v1/chat/completions"  # discard port: nothing listens
    sandbox.write_config(endpoint)
    result = harness(sandbox, "-p", PROMPT)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if "error" in line.lower()]
    assert len(errors) == 1, result.stderr
    assert endpoint in errors[0]


def test_bad_flag_exits_5(sandbox: Sandbox) -> None:
    result = harness(sandbox, "--no-such-flag", "-p", "hi")
    assert result.returncode == 5
    assert "--no-such-flag" in result.stderr
    assert daemon_pid(sandbox.socket) is None  # nothing was started for a bad command line


def test_two_runs_share_the_daemon_the_first_started(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    model.add(Reply(content="first answer"), Reply(content="second answer"))
    first = harness(sandbox, "-p", "say something")
    pid = daemon_pid(sandbox.socket)
    second = harness(sandbox, "-p", "say more")
    assert (first.returncode, second.returncode) == (0, 0), first.stderr + second.stderr
    assert "first answer" in first.stdout and "second answer" in second.stdout
    assert pid is not None and daemon_pid(sandbox.socket) == pid
    status = harness(sandbox, "daemon", "status")
    assert status.returncode == 0 and str(pid) in status.stdout


def test_json_output_reports_result(sandbox: Sandbox, model: FakeModelServer, calc_project) -> None:
    script_fix(model)
    result = harness(sandbox, "-y", "--output-format", "json", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["exit_code"] == 0
    assert report["reply"] == "Fixed: add now adds."
    assert report["files_changed"] == ["calc.py"]
    assert report["usage"]["prompt_tokens"] == 300  # three model calls of 100
    assert report["cost_usd"] is None  # the profile declares no pricing


def test_daemon_status_without_daemon_exits_4(sandbox: Sandbox) -> None:
    result = harness(sandbox, "daemon", "status")
    assert result.returncode == 4


def test_mlx_profile_posts_without_streaming(
    sandbox: Sandbox, model: FakeModelServer, calc_project
) -> None:
    sandbox.write_config(model.endpoint, type="ollama")
    script_fix(model)
    result = harness(sandbox, "-y", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert (calc_project / "calc.py").read_text() == FIXED
    assert all(request.get("stream") is False for request in model.requests)
    assert "Fixed: add now adds." in result.stdout


def test_an_unknown_session_is_bad_input(sandbox: Sandbox, model: FakeModelServer, daemon) -> None:
    result = run_harness(["--session", "nope", "-p", "hi"], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 5, result.stderr
    assert "nope" in result.stderr and "Traceback" not in result.stderr


def test_a_piped_run_shows_the_words_between_tool_calls_on_stderr(
    sandbox: Sandbox, model: FakeModelServer, daemon
) -> None:
    (sandbox.workspace / "notes.txt").write_text("hello\n")
    for _ in range(2):
        model.add(
            Reply(content="Let me look.", tool_calls=[tool_call("read_file", path="notes.txt")]),
            Reply(content="It says hello."),
        )
    result = run_harness(["-p", "what is in notes.txt"], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "It says hello.\n"
    assert "Let me look." in result.stderr
    quiet = run_harness(["-q", "-p", "notes.txt?"], env=sandbox.env, cwd=sandbox.workspace)
    assert quiet.stdout == "It says hello.\n" and "Let me look." not in quiet.stderr


def test_a_turns_error_is_printed_once(sandbox: Sandbox, model: FakeModelServer, daemon) -> None:
    model.add(Fault(status=401, body='{"error": {"message": "the key was refused"}}'))
    result = run_harness(["-p", "hi"], env=sandbox.env, cwd=sandbox.workspace)
    assert result.returncode == 1
    assert (result.stdout + result.stderr).count("the key was refused") == 1, result
    assert "error: " in result.stderr
