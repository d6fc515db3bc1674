"""Where the socket and the state live, as the contract fixes them.

Both the daemon and every client resolve the same paths through this module.
The socket folder must be a real folder owned by this user with mode 0700:
`ensure_private_dir` creates it so, and refuses one that someone else made.
Without `XDG_RUNTIME_DIR` (an editor may start a client with a trimmed
environment), the socket is still looked for in `/run/user/UID` when that is the
user's private folder, so every client reaches the one daemon of the user.
A relative `XDG_STATE_HOME` or `XDG_RUNTIME_DIR` is ignored, as the XDG
specification asks (processes started in other folders would disagree), and
so is an empty or relative `HOME` (the account's home from the password
database is used). Every refusal is an `UnsafePathError` whose message names
the path and the fix.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

APP = "coding-harness"
SOCKET_NAME = "harnessd.sock"
# sun_path holds 108 bytes on Linux (104 on macOS), the final NUL included.
MAX_SOCKET_PATH_BYTES = 107
# A login session's runtime folder (systemd-logind makes /run/user/UID, 0700, the user's):
# what XDG_RUNTIME_DIR names, looked at when a client's environment lacks the variable.
RUN_USER = Path("/run/user")
STATE_FIX = "it must be a folder you own and can write; fix it, or set XDG_STATE_HOME to another"


class UnsafePathError(Exception):
    """A socket or state path that cannot be used safely, or at all."""


def socket_path(env: Mapping[str, str] | None = None, run_user: Path = RUN_USER) -> Path:
    """The daemon's socket: $CODING_HARNESS_SOCKET, else in the user's runtime folder
    ($XDG_RUNTIME_DIR, else `/run/user/UID` when it is the user's own: a client started
    with a trimmed environment finds the same daemon), else under /tmp."""
    env = os.environ if env is None else env
    explicit = env.get("CODING_HARNESS_SOCKET")
    if explicit:
        return Path(explicit)
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and Path(runtime).is_absolute() and _usable_runtime_dir(Path(runtime)):
        return Path(runtime) / APP / SOCKET_NAME
    login_runtime = run_user / str(os.getuid())
    if _usable_runtime_dir(login_runtime):
        return login_runtime / APP / SOCKET_NAME
    return Path(f"/tmp/{APP}-{os.getuid()}") / SOCKET_NAME


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = Path(env.get("XDG_STATE_HOME") or "")
    if not base.is_absolute():
        base = home_dir(env) / ".local" / "state"
    return base / APP


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """$HOME when it is an absolute path, else the account's home folder."""
    home = Path((os.environ if env is None else env).get("HOME") or "")
    if home.is_absolute():
        return home
    import pwd  # only for an unusual environment

    return Path(pwd.getpwuid(os.getuid()).pw_dir)


def _usable_runtime_dir(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


def ensure_private_dir(path: Path) -> None:
    """Create `path` as 0700, or accept it only if it already is ours and private."""
    try:
        _make_dir(path)
        info = path.lstat()
    except OSError as exc:
        raise UnsafePathError(
            f"cannot create the folder {path} ({_reason(exc)}); create it yourself "
            f"(mkdir -m 700 {path}) or set CODING_HARNESS_SOCKET to a path in a folder you own"
        ) from None
    if stat.S_ISLNK(info.st_mode):
        raise UnsafePathError(
            f"{path} is a symbolic link; remove it so the daemon can create a private folder"
        )
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafePathError(f"{path} is not a folder; remove it")
    if info.st_uid != os.getuid():
        raise UnsafePathError(
            f"{path} belongs to uid {info.st_uid}, not to you ({os.getuid()}); remove it"
        )
    if info.st_mode & 0o077 or not os.access(path, os.W_OK | os.X_OK):
        raise UnsafePathError(
            f"{path} has mode {stat.S_IMODE(info.st_mode):o}, not 700; run: chmod 700 {path}"
        )


def _make_dir(path: Path) -> None:
    try:
        path.mkdir(mode=0o700, parents=False)
    except FileNotFoundError:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
    except FileExistsError:
        pass


def ensure_state_dir(path: Path) -> None:
    """Create the state folder (0700) if needed, or say what stops it and how to fix it."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise state_error(path, exc) from None


def state_error(folder: Path, exc: OSError) -> UnsafePathError:
    """The refusal for a state file or folder that cannot be written."""
    where = None if exc.filename is None else str(exc.filename)
    reason = "not a folder" if isinstance(exc, FileExistsError) else _reason(exc)
    detail = reason if where in (None, str(folder)) else f"{where}: {reason}"
    return UnsafePathError(f"cannot write to the state folder {folder} ({detail}); {STATE_FIX}")


def check_socket_file(path: Path) -> None:
    """Refuse a socket path that holds something else: binding would delete or fail on it."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return  # absent (or unreachable, which binding reports)
    if stat.S_ISSOCK(mode) or stat.S_ISLNK(mode):
        return
    kind = "a folder" if stat.S_ISDIR(mode) else "a file"
    raise UnsafePathError(
        f"{path} is {kind}, not a socket; move it away, or set CODING_HARNESS_SOCKET "
        "to another path"
    )


def check_socket_path_length(path: Path) -> None:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise UnsafePathError(
            f"socket path {path} is longer than the {MAX_SOCKET_PATH_BYTES}-byte limit of Unix "
            "sockets; set CODING_HARNESS_SOCKET to a shorter path"
        )


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)
