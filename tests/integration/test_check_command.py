"""The check after an edit without a Makefile, end to end: `harness -p` against the daemon.

A project with tests but no `make check` has its own check found and run; one with
nothing to run says "not verified" (and its JSON result carries `check: null`);
`agent.check_command` in a project file counts only once the project is trusted.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.conftest import BUGGY, Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.oneshot import PROMPT, harness

WRONG = "def add(a, b):\n    return a * b\n"
TEST_FILE = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def script_wrong_fix(model: FakeModelServer) -> None:
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=WRONG)]),
        Reply(content="Fixed."),
    )


def pytest_project(workspace: Path) -> None:
    (workspace / "calc.py").write_text(BUGGY)
    (workspace / "test_calc.py").write_text(TEST_FILE)


def test_a_wrong_fix_fails_the_projects_own_tests_without_a_makefile(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    pytest_project(sandbox.workspace)
    script_wrong_fix(model)
    result = harness(sandbox, "-y", "--output-format", "json", "-p", PROMPT)
    assert result.returncode == 2, result.stderr
    assert "check: python3 -m pytest -q (found: pytest files)" in result.stderr
    assert "python3 -m pytest -q failed (exit 1" in result.stderr  # then its time
    report = json.loads(result.stdout)
    assert report["check"] == {"command": "python3 -m pytest -q", "passed": False}
    told = [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]
    assert "python3 -m pytest -q FAILED (exit 1)" in told[0]


def test_an_edit_nobody_can_check_says_not_verified_once(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    other = "def sub(a, b):\n    return a - b\n"
    model.add(
        Reply(tool_calls=[tool_call("propose_edit", path="calc.py", old=BUGGY, new=WRONG)]),
        Reply(tool_calls=[tool_call("write_file", path="sub.py", content=other)]),
        Reply(content="Done."),
    )
    result = harness(sandbox, "-y", "-q", "--output-format", "json", "-p", PROMPT)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("not verified: no check command") == 1  # even with -q
    report = json.loads(result.stdout)
    assert report["check"] is None and report["files_changed"] == ["calc.py", "sub.py"]


def test_a_projects_check_command_counts_once_the_project_is_trusted(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    marker = sandbox.root / "check-ran"
    config = {"agent": {"check_command": f"touch {marker} && exit 4"}}
    (sandbox.workspace / ".local_coding_harness.json").write_text(json.dumps(config))
    script_wrong_fix(model)
    untrusted = harness(sandbox, "-y", "-p", PROMPT)
    assert untrusted.returncode == 0, untrusted.stderr
    assert "not verified: no check command" in untrusted.stderr
    assert not marker.exists()

    assert harness(sandbox, "trust", "-y").returncode == 0
    (sandbox.workspace / "calc.py").write_text(BUGGY)
    script_wrong_fix(model)
    trusted = harness(sandbox, "-y", "-p", PROMPT)
    assert trusted.returncode == 2, trusted.stderr
    assert marker.exists()
    assert f"check: touch {marker} && exit 4 (configured)" in trusted.stderr
