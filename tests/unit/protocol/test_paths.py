"""Where the socket and state live, and the one-line refusals for paths that cannot be used."""

from __future__ import annotations

import os
import pwd
import socket
from pathlib import Path

import pytest

from coding_harness.protocol import paths


def account_home() -> Path:
    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def test_a_relative_xdg_state_home_is_ignored_as_the_spec_asks(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "XDG_STATE_HOME": "relative/state"}
    assert paths.state_dir(env) == tmp_path / ".local" / "state" / "coding-harness"
    env["XDG_STATE_HOME"] = str(tmp_path / "abs")
    assert paths.state_dir(env) == tmp_path / "abs" / "coding-harness"


@pytest.mark.parametrize("home", ["", "relative/home"])
def test_an_empty_or_relative_home_falls_back_to_the_account_home(home: str) -> None:
    assert paths.home_dir({"HOME": home}) == account_home()
    assert paths.state_dir({"HOME": home}).is_absolute()
    assert paths.home_dir({}) == account_home()


def test_a_relative_runtime_dir_is_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.chdir(tmp_path)
    no_login = tmp_path / "no-run-user"
    assert paths.socket_path({"XDG_RUNTIME_DIR": "runtime"}, no_login).parent.name.startswith(
        "coding-harness-"
    )
    assert paths.socket_path({"XDG_RUNTIME_DIR": str(runtime)}).parent == runtime / paths.APP


def test_without_xdg_runtime_dir_the_login_runtime_folder_is_used(tmp_path: Path) -> None:
    """A client started with a trimmed environment (the ACP SDK passes HOME, LOGNAME,
    PATH, SHELL, TERM, USER) finds the socket a full environment names (issue 31)."""
    run_user = tmp_path / "run-user"
    login = run_user / str(os.getuid())
    login.mkdir(parents=True, mode=0o700)
    full = {"HOME": str(tmp_path), "XDG_RUNTIME_DIR": str(login)}
    trimmed = {"HOME": str(tmp_path), "PATH": "/usr/bin"}
    assert paths.socket_path(trimmed, run_user) == paths.socket_path(full, run_user)
    assert paths.socket_path(trimmed, run_user) == login / paths.APP / paths.SOCKET_NAME


def test_a_login_runtime_folder_others_can_enter_is_not_used(tmp_path: Path) -> None:
    run_user = tmp_path / "run-user"
    login = run_user / str(os.getuid())
    login.mkdir(parents=True)
    login.chmod(0o755)
    socket_dir = paths.socket_path({"HOME": str(tmp_path)}, run_user).parent
    assert socket_dir == Path(f"/tmp/{paths.APP}-{os.getuid()}")


def test_a_folder_that_cannot_be_created_is_an_unsafe_path_naming_the_fix(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(paths.UnsafePathError, match=r"cannot create the folder .*mkdir -m 700"):
        paths.ensure_private_dir(blocker / "run")


def test_the_state_folder_names_what_is_in_the_way(tmp_path: Path) -> None:
    blocker = tmp_path / "state"
    blocker.write_text("")
    with pytest.raises(paths.UnsafePathError, match=r"\(not a folder\).*XDG_STATE_HOME"):
        paths.ensure_state_dir(blocker)
    with pytest.raises(paths.UnsafePathError, match=r"\(Not a directory\).*XDG_STATE_HOME"):
        paths.ensure_state_dir(blocker / "coding-harness")
    paths.ensure_state_dir(tmp_path / "fresh" / "coding-harness")
    assert (tmp_path / "fresh" / "coding-harness").is_dir()


def test_state_error_names_the_file_when_it_is_not_the_folder(tmp_path: Path) -> None:
    inner = PermissionError(13, "Permission denied", str(tmp_path / "daemon.log"))
    assert f"({tmp_path / 'daemon.log'}: Permission denied)" in str(
        paths.state_error(tmp_path, inner)
    )
    outer = PermissionError(13, "Permission denied", str(tmp_path))
    assert "(Permission denied)" in str(paths.state_error(tmp_path, outer))


def test_only_a_socket_or_nothing_may_sit_at_the_socket_path(tmp_path: Path) -> None:
    path = tmp_path / "harnessd.sock"
    paths.check_socket_file(path)  # absent: fine
    path.mkdir()
    with pytest.raises(paths.UnsafePathError, match="is a folder, not a socket"):
        paths.check_socket_file(path)
    path.rmdir()
    path.write_text("notes")
    with pytest.raises(paths.UnsafePathError, match="is a file, not a socket"):
        paths.check_socket_file(path)
    path.unlink()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.bind(str(path))
        paths.check_socket_file(path)  # a (stale) socket is the server's to replace
