"""run_shell's argument rules end to end: the real client, a real daemon, a real make.

A hostile model asks for commands that used to run a program of its choosing
(`make check CC=id`, a make variable holding `python3 -c ...`, `uv run`,
`uv pip install`); marker files show what ran. A fake `uv`, first on the
daemon's PATH, leaves a marker whenever it is run.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

from tests.integration.conftest import Sandbox
from tests.support.fake_model_server import FakeModelServer, Reply, tool_call
from tests.support.processes import run_harness

MAKEFILE = (
    "PYTHON = python3\ncheck:\n\t@$(PYTHON) -c 'print(\"checked\")'\nshow:\n\t@$(CC) --version\n"
)
PAYLOAD = "open('pwned', 'w').close()"
UV_RUN = "uv run python -c 'print(1)'"


def harness(sandbox: Sandbox, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    return run_harness(list(args), env=sandbox.env, cwd=sandbox.workspace, input=input)


def shell_calls(model: FakeModelServer, *commands: str) -> None:
    """The model asks for each command in turn, then ends with a short reply."""
    model.add(*(Reply(tool_calls=[tool_call("run_shell", command=c)]) for c in commands))
    model.add(Reply(content="done"))


def tool_results(model: FakeModelServer) -> list[str]:
    return [m["content"] for m in model.requests[-1]["messages"] if m["role"] == "tool"]


def fake_uv(sandbox: Sandbox) -> Path:
    """Put a `uv` that creates a marker first on PATH; returns the marker's path."""
    marker = sandbox.root / "uv-ran"
    bin_dir = sandbox.root / "bin"
    bin_dir.mkdir()
    (bin_dir / "uv").write_text(f"#!/bin/sh\necho \"$*\" >> '{marker}'\necho uv ran\n")
    (bin_dir / "uv").chmod(0o755)
    sandbox.env["PATH"] = f"{bin_dir}:{sandbox.env['PATH']}"
    return marker


def test_make_variables_from_the_model_are_refused_and_nothing_runs(
    sandbox: Sandbox, model: FakeModelServer
) -> None:
    (sandbox.workspace / "Makefile").write_text(MAKEFILE)
    injected = shlex.join(["make", "check", f"PYTHON=python3 -c {shlex.quote(PAYLOAD)}"])
    shell_calls(model, injected, "make show CC=id", "make -e check", "make check")
    result = harness(sandbox, "-y", "-p", "run the checks")  # -y approves edits, not these
    assert result.returncode == 0, result.stderr
    assert not (sandbox.workspace / "pwned").exists()
    *refused, plain = tool_results(model)
    assert len(refused) == 3
    assert all(r.startswith("refused: ") for r in refused), refused
    assert "uid=" not in "".join(refused)
    assert plain == "checked\n(exit 0)"  # the makefile itself runs as it is written


def test_uv_run_is_asked_and_a_no_runs_nothing(sandbox: Sandbox, model: FakeModelServer) -> None:
    marker = fake_uv(sandbox)
    shell_calls(model, UV_RUN)
    result = harness(sandbox, "--output-format", "stream-json", "-p", "run it", input="n\n")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert f"run the command `{UV_RUN}` in the workspace" in result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()][:-1]
    [asked] = [e["data"] for e in events if e["kind"] == "approval.requested"]
    assert (asked["kind"], asked["diff"]) == ("command", "")
    assert tool_results(model) == [f"the user declined to run `{UV_RUN}`; it did not run."]


def test_uv_run_runs_once_approved(sandbox: Sandbox, model: FakeModelServer) -> None:
    marker = fake_uv(sandbox)
    shell_calls(model, UV_RUN)
    result = harness(sandbox, "-p", "run it", input="y\n")
    assert result.returncode == 0, result.stderr
    assert "Run this command?" in result.stderr and "Apply this change?" not in result.stderr
    assert marker.read_text() == "run python -c print(1)\n"
    assert tool_results(model) == ["uv ran\n(exit 0)"]


def test_other_uv_forms_are_refused_even_with_yes(sandbox: Sandbox, model: FakeModelServer) -> None:
    marker = fake_uv(sandbox)
    shell_calls(model, "uv pip install requests", "uv tool run ruff", "uv run --with x pytest")
    result = harness(sandbox, "-y", "-p", "set it up")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
    assert all(r.startswith("refused: ") for r in tool_results(model))
