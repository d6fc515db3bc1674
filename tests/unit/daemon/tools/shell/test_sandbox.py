"""The sandbox's command line and policy, without running bwrap (the integration
tests in tests/integration/test_sandbox.py run it against a hostile recipe)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell import sandbox as sandbox_module
from coding_harness.daemon.tools.shell.sandbox import (
    Availability,
    Sandbox,
    bwrap_arguments,
    hidden_paths,
    sandbox_for,
)
from tests.support.tool_context import make_ctx


def test_mounts_come_in_order_and_the_workspace_is_writable_last(tmp_path: Path) -> None:
    secret_dir = tmp_path / ".ssh"
    secret_dir.mkdir()
    secret_file = tmp_path / ".netrc"
    secret_file.write_text("machine x password y")
    workspace = tmp_path / "proj"
    workspace.mkdir()
    args = bwrap_arguments(workspace, [str(secret_dir), str(secret_file), "/nope"], False)
    assert args[:4] == ["--ro-bind", "/", "/", "--dev"]
    assert args.index("--tmpfs") < args.index(str(secret_dir))
    assert args[args.index(str(secret_dir)) - 1] == "--tmpfs"
    assert args[args.index(str(secret_file)) - 1] == "/dev/null"
    assert "/nope" not in args  # what does not exist is not mounted over
    real = str(workspace.resolve())
    assert args.index("--bind") > args.index(str(secret_file))
    assert args[args.index("--bind") : args.index("--bind") + 3] == ["--bind", real, real]
    for flag in ("--unshare-pid", "--unshare-net", "--die-with-parent", "--new-session"):
        assert flag in args
    assert args[-1] == "--"
    assert "--unshare-net" not in bwrap_arguments(workspace, [], network=True)


def test_the_daemons_folders_and_the_home_secrets_are_hidden(tmp_path: Path) -> None:
    hidden = hidden_paths(tmp_path)
    assert str(tmp_path / ".ssh") in hidden
    assert str(tmp_path / ".aws") in hidden
    assert any(path.endswith("coding-harness") for path in hidden)  # the state folder


def test_off_never_probes(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(sandbox_module, "probe", lambda: pytest.fail("probed"))
    assert not sandbox_for("off", False, tmp_path).active


def test_required_without_a_sandbox_refuses_and_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = Availability(program=None, reason="bubblewrap (bwrap) is not installed")
    monkeypatch.setattr(sandbox_module, "probe", lambda: missing)
    required = sandbox_for("required", False, tmp_path)
    assert required.refusal is not None
    assert "bwrap) is not installed" in required.refusal
    assert "apt-get install bubblewrap" in required.refusal
    assert sandbox_for("auto", False, tmp_path).refusal is None


def test_a_context_runs_commands_through_its_sandbox(tmp_path: Path) -> None:
    ctx, _ = make_ctx(tmp_path)
    assert ctx.command_argv(["make", "check"]) == ["make", "check"]
    active = Sandbox(mode="auto", program="/usr/bin/bwrap")
    wrapped = _with(ctx, active).command_argv(["make", "check"])
    assert wrapped[0] == "/usr/bin/bwrap" and wrapped[-2:] == ["make", "check"]
    refusing = Sandbox(mode="required", reason="no bwrap")
    with pytest.raises(ToolRefusal, match="required"):
        _with(ctx, refusing).command_argv(["make", "check"])


def _with(ctx: ToolContext, sandbox: Sandbox) -> ToolContext:
    return replace(ctx, sandbox=sandbox)


def test_the_hidden_folders_follow_a_change_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Kept between turns, but found again when a variable they come from changes."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "one"))
    first = hidden_paths(tmp_path)
    assert hidden_paths(tmp_path) is first  # the next turn asks again: kept
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "two"))
    again = hidden_paths(tmp_path)
    assert str(tmp_path / "two" / "coding-harness") in again
    assert str(tmp_path / "one" / "coding-harness") not in again
