"""The sandbox's command line and policy, without running bwrap (the integration
tests in tests/integration/test_sandbox.py run it against a hostile recipe)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.errors import ToolRefusal
from coding_harness.daemon.tools.shell import sandbox as sandbox_module
from coding_harness.daemon.tools.shell import sandbox_workspace
from coding_harness.daemon.tools.shell.sandbox import (
    Availability,
    Sandbox,
    hidden_paths,
    sandbox_for,
    wide_workspace_notice,
)
from coding_harness.daemon.tools.shell.sandbox_mounts import View, bwrap_arguments
from tests.support.tool_context import make_ctx

Mounts = list[tuple[str, str]]


def mounts(args: list[str]) -> Mounts:
    """(option, where) for each mount, in the order bwrap makes them."""
    found, i = [], 0
    while i < len(args):
        option = args[i]
        if option in ("--ro-bind", "--bind"):
            found.append((option, args[i + 2]))
            i += 3
        elif option in ("--tmpfs", "--remount-ro", "--dev", "--proc", "--chdir"):
            found.append((option, args[i + 1]))
            i += 2
        else:
            i += 1
    return found


def where(found: Mounts, path: Path | str) -> list[str]:
    return [option for option, at in found if at == str(path)]


def files(root: Path, *names: str) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            path.mkdir(exist_ok=True)
        else:
            path.write_text("secret")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder with toolchains, credentials and dotfiles, and a PATH without
    any folder of it (tests add their own)."""
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for variable in ("VIRTUAL_ENV", "CARGO_HOME", "GOPATH", "RUSTUP_HOME"):
        monkeypatch.delenv(variable, raising=False)
    home = tmp_path / "home"
    files(
        home,
        ".cargo/bin/",
        ".cargo/registry/",
        ".cargo/credentials.toml",
        ".bashrc",
        ".bash_history",
        ".pgpass",
        ".vault-token",
        ".cache/huggingface/token",
        ".cache/pip/",
        ".config/gh/hosts.yml",
        ".local/bin/",
        ".local/lib/",
        ".local/share/keyrings/login.keyring",
        ".local/state/coding-harness/trusted_projects.json",
        ".ssh/id_rsa",
        "tools/bin/",
        "proj/Makefile",
    )
    return home


def test_the_home_folder_is_empty_but_for_the_toolchain_folders(home: Path) -> None:
    found = mounts(bwrap_arguments(str(home / "proj"), View(home=str(home)), False))
    assert where(found, home) == ["--tmpfs"]
    for shown in (".cargo/bin", ".cargo/registry", ".cache/pip", ".local/bin", ".local/lib"):
        assert where(found, home / shown) == ["--ro-bind"], shown
    shown_anywhere = {at for _, at in found}
    for secret in (".cargo/credentials.toml", ".config", ".local/share/keyrings", ".bashrc"):
        assert not any(at.startswith(str(home / secret)) for at in shown_anywhere), secret
    assert str(home / ".cache/huggingface") not in shown_anywhere  # hidden by the cover
    # The workspace, writable, on top of the cover; mounts made parents first.
    assert found.index(("--bind", str(home / "proj"))) > found.index(("--tmpfs", str(home)))


def test_the_users_folders_are_shown_and_credentials_inside_them_masked(home: Path) -> None:
    view = View(home=str(home), shown=("~/tools", "~/.cargo", "~", "relative"))
    found = mounts(bwrap_arguments(str(home / "proj"), view, False))
    assert where(found, home / "tools") == ["--ro-bind"]
    assert where(found, home / ".cargo") == ["--ro-bind"]
    cargo = found.index(("--ro-bind", str(home / ".cargo")))
    assert found.index(("--ro-bind", str(home / ".cargo/credentials.toml"))) > cargo
    assert where(found, home) == ["--tmpfs"]  # "~" would show everything: ignored


def test_path_folders_and_the_interpreter_under_home_stay_visible(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{home / 'tools/bin'}:{home}:{home / 'proj/.venv/bin'}:/usr/bin")
    found = mounts(bwrap_arguments(str(home / "proj"), View(home=str(home)), False))
    assert where(found, home / "tools/bin") == ["--ro-bind"]
    assert where(found, home) == ["--tmpfs"]  # a PATH of the home folder itself shows nothing
    assert where(found, home / "proj/.venv/bin") == []  # the workspace shows it, writable


def test_root_is_covered_when_it_is_not_home(home: Path) -> None:
    found = mounts(bwrap_arguments(str(home / "proj"), View(home=str(home)), False))
    if Path("/root").is_dir():
        assert where(found, "/root") == ["--tmpfs"]
    assert where(found, "/tmp") == ["--tmpfs"]


def test_git_is_read_only_and_so_is_the_hooks_folder_it_names(home: Path) -> None:
    workspace = home / "proj"
    files(workspace, ".git/hooks/", ".husky/", "sub/.git/hooks/")
    (workspace / ".git/config").write_text("[core]\n\thooksPath = .husky\n")
    found = mounts(bwrap_arguments(str(workspace), View(home=str(home)), False))
    writable = found.index(("--bind", str(workspace)))
    for kept in (".git", ".husky", "sub/.git"):
        assert where(found, workspace / kept) == ["--ro-bind"], kept
        assert found.index(("--ro-bind", str(workspace / kept))) > writable


def test_a_worktrees_gitdir_under_home_is_shown_read_only(home: Path) -> None:
    main_git = home / "main/.git"
    files(main_git, "worktrees/wt/", "config", "hooks/")
    (main_git / "worktrees/wt/commondir").write_text("../..\n")
    workspace = home / "wt"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {main_git / 'worktrees/wt'}\n")
    found = mounts(bwrap_arguments(str(workspace), View(home=str(home)), False))
    assert where(found, workspace / ".git") == ["--ro-bind"]
    assert where(found, main_git) == ["--ro-bind"]  # its gitdir is inside: seen through it


def test_a_workspace_that_is_home_masks_its_dotfiles_and_credentials(home: Path) -> None:
    files(home, ".git/hooks/")
    state = home / ".local/state/coding-harness"
    view = View(home=str(home), hidden=(str(state),))
    args = bwrap_arguments(str(home), view, False)
    found = mounts(args)
    assert where(found, home) == ["--bind", "--chdir"]  # the workspace, not covered
    for masked in (".ssh", ".config", ".cache", ".local", ".cargo"):
        assert where(found, home / masked) == ["--tmpfs", "--remount-ro"], masked
    for masked in (".bashrc", ".bash_history", ".pgpass", ".vault-token"):
        assert args[args.index(str(home / masked)) - 1] == "/dev/null", masked
    assert where(found, home / ".git") == ["--ro-bind"]
    # Toolchains shown again inside their masked folders, before those turn read-only.
    assert where(found, home / ".cargo/bin") == ["--ro-bind"]
    assert found.index(("--ro-bind", str(home / ".cargo/bin"))) < found.index(
        ("--remount-ro", str(home / ".cargo"))
    )
    assert not any(at.startswith(str(state)) for _, at in found)  # already hidden


def test_credential_names_in_the_workspace_are_masked_within_the_walk(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = tmp_path / "repo"
    files(workspace, ".ssh/id_rsa", ".netrc", "a/b/.aws/credentials", "a/b/c/d/.pgpass")
    files(workspace, ".config/tool.toml", ".cargo/config.toml", ".cargo/credentials.toml")
    (workspace / "a/.docker").symlink_to(workspace / "a/b")  # leads elsewhere: not masked
    found = mounts(bwrap_arguments(str(workspace), View(home=str(home)), False))
    assert where(found, workspace / ".ssh") == ["--tmpfs", "--remount-ro"]
    assert where(found, workspace / "a/b/.aws") == ["--tmpfs", "--remount-ro"]
    for masked in (".netrc", ".cargo/credentials.toml"):
        assert where(found, workspace / masked) == ["--ro-bind"], masked
    for kept in (".config", ".cargo", "a/.docker", "a/b/c/d/.pgpass"):  # a build's, or too deep
        assert where(found, workspace / kept) == [], kept
    monkeypatch.setattr(sandbox_workspace, "WALK_DEPTH", 5)
    deeper = mounts(bwrap_arguments(str(workspace), View(home=str(home)), False))
    assert where(deeper, workspace / "a/b/c/d/.pgpass") == ["--ro-bind"]


def test_the_network_is_cut_unless_allowed(home: Path) -> None:
    assert "--unshare-net" in bwrap_arguments(str(home / "proj"), View(home=str(home)), False)
    assert "--unshare-net" not in bwrap_arguments(str(home / "proj"), View(home=str(home)), True)


def test_a_wide_workspace_is_told_once_what_it_means(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    assert wide_workspace_notice(home / "..", home, True) is not None
    told = wide_workspace_notice(home, home, True)
    assert told is not None and "your home folder" in told and ".git is read-only" in told
    assert "/, the whole file system" in (wide_workspace_notice(Path("/"), home, False) or "")
    assert wide_workspace_notice(home / "proj", home, True) is None


def test_the_daemons_folders_are_hidden(tmp_path: Path) -> None:
    assert any(path.endswith("coding-harness") for path in hidden_paths(tmp_path))


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
    active = Sandbox(mode="auto", program="/usr/bin/bwrap", view=View(home=str(tmp_path)))
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


@pytest.fixture
def outside_tmp() -> Iterator[Path]:
    """A folder neither /tmp's cover nor the home folder's hides."""
    folder = Path(tempfile.mkdtemp(prefix="harness-test-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_workspace_inside_the_state_folder_leaves_the_rest_of_it_hidden(
    home: Path, outside_tmp: Path
) -> None:
    """A session's git worktree lives in the state folder (`--worktree`): the state
    folder is masked around it, entry by entry, wherever it lies."""
    state = outside_tmp / "state/coding-harness"
    files(state, "sessions.db", "daemon.log", "debug/s.jsonl", "worktrees/other/x", "worktrees/w/")
    workspace = state / "worktrees/w"
    args = bwrap_arguments(str(workspace), View(home=str(home), hidden=(str(state),)), False)
    found = mounts(args)
    assert where(found, workspace) == ["--bind", "--chdir"]
    for masked in ("sessions.db", "daemon.log"):
        assert args[args.index(str(state / masked)) - 1] == "/dev/null", masked
    assert where(found, state / "debug") == ["--tmpfs", "--remount-ro"]
    assert where(found, state / "worktrees/other") == ["--tmpfs", "--remount-ro"]
    assert where(found, state) == [] and where(found, state / "worktrees") == []
