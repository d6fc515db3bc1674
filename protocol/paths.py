"""Where the socket and the state live, as the contract fixes them.

Both the daemon and every client resolve the same paths through this module.
The socket folder must be a real folder owned by this user with mode 0700:
`ensure_private_dir` creates it so, and refuses one that someone else made.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

APP = "coding-harness"
SOCKET_NAME = "harnessd.sock"
# sun_path holds 108 bytes on Linux (104 on macOS), the final NUL included.
MAX_SOCKET_PATH_BYTES = 107


class UnsafePathError(Exception):
    """A socket or state folder that is not private to this user."""


def socket_path(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    explicit = env.get("CODING_HARNESS_SOCKET")
    if explicit:
        return Path(explicit)
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and _usable_runtime_dir(Path(runtime)):
        return Path(runtime) / APP / SOCKET_NAME
    return Path(f"/tmp/{APP}-{os.getuid()}") / SOCKET_NAME


def state_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    base = env.get("XDG_STATE_HOME") or str(
        Path(env.get("HOME", "~")).expanduser() / ".local" / "state"
    )
    return Path(base) / APP


def _usable_runtime_dir(path: Path) -> bool:
    try:
        info = path.stat()
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0


def ensure_private_dir(path: Path) -> None:
    """Create `path` as 0700, or accept it only if it already is ours and private."""
    try:
        path.mkdir(mode=0o700, parents=False)
    except FileNotFoundError:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
    except FileExistsError:
        pass
    info = path.lstat()
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
    if info.st_mode & 0o077:
        raise UnsafePathError(
            f"{path} has mode {stat.S_IMODE(info.st_mode):o}, not 700; run: chmod 700 {path}"
        )


def check_socket_path_length(path: Path) -> None:
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        raise UnsafePathError(
            f"socket path {path} is longer than the {MAX_SOCKET_PATH_BYTES}-byte limit of Unix "
            "sockets; set CODING_HARNESS_SOCKET to a shorter path"
        )
