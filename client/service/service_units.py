"""The systemd user units and the launchd agent, rendered as text.

One source for both the files shipped in the repository (`systemd/`,
`launchd/`: rendered for a generic `/usr/bin/env python3`, kept in step by a
test) and the ones `harness daemon install` writes (rendered for this
installation's interpreter and state folder). Where the files go is decided
here too: `$XDG_CONFIG_HOME/systemd/user` (default `~/.config/systemd/user`)
and `~/Library/LaunchAgents`. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from coding_harness.protocol import exit_codes

SERVICE_NAME = "harnessd.service"
SOCKET_NAME = "harnessd.socket"
LABEL = "org.coding-harness.harnessd"
PLIST_NAME = f"{LABEL}.plist"
LISTEN_STREAM = "%t/coding-harness/harnessd.sock"
DAEMON_MODULE = ("-m", "coding_harness.daemon")
# The shipped reference files name no particular installation.
REFERENCE_PYTHON = ("/usr/bin/env", "python3")
REFERENCE_LOG_DIR = Path("/Users/USER/.local/state/coding-harness")
# Variables passed on so the service finds the same state folder as the shell.
PASSED_ENVIRONMENT = ("XDG_STATE_HOME",)


def unit_dir(env: Mapping[str, str]) -> Path:
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return Path(config) / "systemd" / "user"


def launch_agents_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME", "~")).expanduser() / "Library" / "LaunchAgents"


def systemd_socket_path(env: Mapping[str, str]) -> Path | None:
    """Where harnessd.socket listens (%t is $XDG_RUNTIME_DIR), or None without one."""
    runtime = env.get("XDG_RUNTIME_DIR")
    return Path(runtime) / "coding-harness" / "harnessd.sock" if runtime else None


def service_environment(env: Mapping[str, str]) -> dict[str, str]:
    return {name: env[name] for name in PASSED_ENVIRONMENT if env.get(name)}


def systemd_word(text: str) -> str:
    """`text` as one word of a systemd command line or assignment."""
    escaped = text.replace("%", "%%")
    if not any(c.isspace() or c in "\"'\\;$" for c in escaped) and escaped:
        return escaped
    escaped = escaped.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$")
    return f'"{escaped}"'


def render_service(python: Sequence[str], environment: Mapping[str, str] | None = None) -> str:
    command = " ".join(systemd_word(word) for word in (*python, *DAEMON_MODULE))
    env_lines = "".join(
        f"Environment={systemd_word(f'{key}={value}')}\n"
        for key, value in (environment or {}).items()
    )
    return f"""\
# The coding-harness daemon as a systemd user service, started on first use by
# harnessd.socket. `harness daemon install` writes this file for its own Python.
[Unit]
Description=coding-harness daemon (harnessd)
Requires={SOCKET_NAME}
After={SOCKET_NAME}
# Five failed starts within two minutes stop the retries;
# `systemctl --user reset-failed harnessd` allows them again.
StartLimitIntervalSec=120
StartLimitBurst=5

[Service]
Type=notify
NotifyAccess=main
ExecStart={command}
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=2
RestartPreventExitStatus={exit_codes.DAEMON_CONFIG_PROBLEM}
# A stop lets running turns finish for up to 10 s, then cancels them.
TimeoutStopSec=30
KillMode=control-group
UMask=0077
{env_lines}
[Install]
Also={SOCKET_NAME}
"""


def render_socket() -> str:
    return f"""\
# systemd listens on the daemon's socket and starts {SERVICE_NAME} on the
# first connection. The daemon never removes this socket; systemd does on stop.
[Unit]
Description=coding-harness daemon socket

[Socket]
ListenStream={LISTEN_STREAM}
SocketMode=0600
DirectoryMode=0700
RemoveOnStop=yes
Accept=no

[Install]
WantedBy=sockets.target
"""


def render_plist(
    python: Sequence[str], log_dir: Path, environment: Mapping[str, str] | None = None
) -> bytes:
    """The LaunchAgent: started at login, started again only after a failure."""
    import plistlib  # only when a plist is wanted: it pulls in an XML parser

    agent: dict[str, object] = {
        "Label": LABEL,
        "ProgramArguments": [*python, *DAEMON_MODULE],
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "Umask": 0o077,
        "StandardOutPath": str(log_dir / "launchd.out.log"),
        "StandardErrorPath": str(log_dir / "launchd.err.log"),
    }
    if environment:
        agent["EnvironmentVariables"] = dict(environment)
    return plistlib.dumps(agent, sort_keys=False)


def reference_files() -> dict[str, bytes]:
    """The files shipped in the repository, by path relative to its root."""
    return {
        f"systemd/{SERVICE_NAME}": render_service(REFERENCE_PYTHON).encode(),
        f"systemd/{SOCKET_NAME}": render_socket().encode(),
        f"launchd/{PLIST_NAME}": render_plist(REFERENCE_PYTHON, REFERENCE_LOG_DIR),
    }


def write_reference_files(root: Path) -> None:
    """Regenerate the shipped files under `root` (the repository)."""
    for relative, data in reference_files().items():
        (root / relative).write_bytes(data)
