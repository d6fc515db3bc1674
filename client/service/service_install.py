"""`harness daemon install` / `uninstall`: the daemon as a per-user service.

Linux: writes harnessd.service and harnessd.socket into
`$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`) for this
installation's interpreter, then `systemctl --user daemon-reload` and
`systemctl --user enable --now harnessd.socket`: systemd listens from then on
and the first client connection starts the daemon. macOS: writes
`~/Library/LaunchAgents/org.coding-harness.harnessd.plist` and runs
`launchctl load -w` (started at login, restarted after a failure). Without
systemctl / launchctl on PATH the files are still written and the commands
are printed. A daemon already running outside the service manager is stopped
first (its running turns get their drain time), so one daemon serves the
socket. `uninstall` disables and stops the service and removes the files.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from coding_harness.client.service.service_units import (
    LABEL,
    PLIST_NAME,
    SERVICE_NAME,
    SOCKET_NAME,
    launch_agents_dir,
    render_plist,
    render_service,
    render_socket,
    service_environment,
    systemd_socket_path,
    unit_dir,
)
from coding_harness.protocol import discovery, exit_codes, paths

COMMAND_TIMEOUT = 60.0
SYSTEMCTL_ENABLE = [
    ["systemctl", "--user", "daemon-reload"],
    ["systemctl", "--user", "enable", "--now", SOCKET_NAME],
]
SYSTEMCTL_DISABLE = [
    ["systemctl", "--user", "disable", "--now", SOCKET_NAME, SERVICE_NAME],
    ["systemctl", "--user", "daemon-reload"],
]


def install(*, env: Mapping[str, str] | None = None, platform: str = sys.platform) -> int:
    env = dict(os.environ if env is None else env)
    if platform.startswith("linux"):
        return _install_systemd(env)
    if platform == "darwin":
        return _install_launchd(env)
    print(f"harness daemon install: no service manager known for {platform}; run `harnessd`")
    return exit_codes.MODEL_ERROR


def uninstall(*, env: Mapping[str, str] | None = None, platform: str = sys.platform) -> int:
    env = dict(os.environ if env is None else env)
    if platform.startswith("linux"):
        return _uninstall_systemd(env)
    if platform == "darwin":
        return _uninstall_launchd(env)
    print(f"harness daemon uninstall: nothing is installed on {platform}")
    return exit_codes.OK


# -- systemd ---------------------------------------------------------------
def _install_systemd(env: dict[str, str]) -> int:
    folder = unit_dir(env)
    service = render_service([sys.executable], service_environment(env))
    _write(folder / SERVICE_NAME, service.encode())
    _write(folder / SOCKET_NAME, render_socket().encode())
    print(f"wrote {folder / SERVICE_NAME} and {folder / SOCKET_NAME}")
    _check_socket_path(env)
    _hand_over(env, keep_activated=True)
    code = _run(SYSTEMCTL_ENABLE, env)
    if code == exit_codes.OK and _found("systemctl", env):
        print(f"enabled {SOCKET_NAME}: systemd starts the daemon on the first connection")
    return code


def _uninstall_systemd(env: dict[str, str]) -> int:
    folder = unit_dir(env)
    files = [folder / SERVICE_NAME, folder / SOCKET_NAME]
    if not any(path.exists() for path in files):
        print(f"nothing to uninstall: no {SERVICE_NAME} or {SOCKET_NAME} in {folder}")
        return exit_codes.OK
    # A failed disable (no user manager running) is reported; the files go anyway.
    _run(SYSTEMCTL_DISABLE[:1], env, required=False)
    for path in [*files, folder / "sockets.target.wants" / SOCKET_NAME]:
        if path.exists() or path.is_symlink():
            path.unlink()
            print(f"removed {path}")
    _run(SYSTEMCTL_DISABLE[1:], env, required=False, quiet=True)
    return exit_codes.OK


def _check_socket_path(env: dict[str, str]) -> None:
    """Warn when this shell's clients would look for the daemon somewhere else."""
    listens = systemd_socket_path(env)
    used = paths.socket_path(env)
    if listens is None:
        print(
            "note: XDG_RUNTIME_DIR is not set in this shell, so clients here look for "
            f"{used}, not for harnessd.socket's %t/coding-harness/harnessd.sock"
        )
    elif used != listens:
        print(
            f"note: clients in this shell use {used}, but harnessd.socket listens on "
            f"{listens}; unset CODING_HARNESS_SOCKET so they meet"
        )


# -- launchd ---------------------------------------------------------------
def _install_launchd(env: dict[str, str]) -> int:
    plist = launch_agents_dir(env) / PLIST_NAME
    log_dir = paths.state_dir(env)
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)  # launchd opens the logs first
    _write(plist, render_plist([sys.executable], log_dir, service_environment(env)))
    print(f"wrote {plist}")
    _hand_over(env, keep_activated=False)
    _run([["launchctl", "unload", str(plist)]], env, required=False, quiet=True)
    code = _run([["launchctl", "load", "-w", str(plist)]], env)
    if code == exit_codes.OK and _found("launchctl", env):
        print(f"loaded {LABEL}: launchd starts the daemon at login and after a failure")
    return code


def _uninstall_launchd(env: dict[str, str]) -> int:
    plist = launch_agents_dir(env) / PLIST_NAME
    if not plist.exists():
        print(f"nothing to uninstall: no {plist}")
        return exit_codes.OK
    _run([["launchctl", "unload", "-w", str(plist)]], env, required=False)
    plist.unlink()
    print(f"removed {plist}")
    return exit_codes.OK


# -- shared ------------------------------------------------------------------
def _hand_over(env: dict[str, str], *, keep_activated: bool) -> None:
    """Stop a daemon the service manager did not start, so only one serves."""
    try:
        record = discovery.read_record(discovery.record_path(env))
    except discovery.RecordError:
        return
    if record is None or not discovery.pid_alive(int(record["pid"])):
        return
    if keep_activated and record.get("socket_activated"):
        return
    print(f"stopping the daemon started outside the service manager (pid {record['pid']})")
    from coding_harness.client.service.daemon_stop import stop

    stop()


def _found(tool: str, env: Mapping[str, str]) -> str | None:
    return shutil.which(tool, path=env.get("PATH", os.defpath))


def _run(
    commands: Sequence[list[str]],
    env: Mapping[str, str],
    *,
    required: bool = True,
    quiet: bool = False,
) -> int:
    """Run each command in order; without the tool, print them for the user."""
    tool = _found(commands[0][0], env)
    if tool is None:
        if not quiet:
            print(f"{commands[0][0]} is not on PATH; where it is, run:")
            for command in commands:
                print(f"    {shlex.join(command)}")
        return exit_codes.OK
    for command in commands:
        result = subprocess.run(
            [tool, *command[1:]],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT,
            check=False,
        )
        if result.returncode != 0 and not quiet:
            reason = (result.stderr.strip().splitlines() or ["no output"])[-1]
            print(f"harness: `{shlex.join(command)}` failed: {reason}", file=sys.stderr)
            if required:
                print("fix what it names, then run that command again", file=sys.stderr)
                return exit_codes.MODEL_ERROR
    return exit_codes.OK


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        temp.chmod(0o644)
        temp.replace(path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
