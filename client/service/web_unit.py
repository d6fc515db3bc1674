"""`harness web` as a systemd user service and a launchd agent, rendered as text.

The unit runs `harness web --keep-token --no-qr` with the address, port and
allowed names given to `harness web --service`, so the URL (token included)
stays the same across restarts of the unit and of the machine. It sits beside
the daemon's units (same folders: service_units.py) and wants harnessd.socket;
the bridge starts the daemon itself where there is none, as every `harness`
command does. Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from coding_harness.client.service.service_units import SOCKET_NAME, systemd_word
from coding_harness.protocol import exit_codes

WEB_SERVICE_NAME = "harness-web.service"
WEB_LABEL = "org.coding-harness.web"
WEB_PLIST_NAME = f"{WEB_LABEL}.plist"
CLIENT_MODULE = ("-m", "coding_harness.client", "web")


def web_command(
    python: Sequence[str], host: str, port: int, allow_hosts: Sequence[str]
) -> list[str]:
    """The unit's command line: always --keep-token (the URL survives restarts), no QR."""
    allowed = [word for name in allow_hosts for word in ("--allow-host", name)]
    return [
        *python,
        *CLIENT_MODULE,
        "--host",
        host,
        "--port",
        str(port),
        *allowed,
        "--keep-token",
        "--no-qr",
    ]


def render_web_service(command: Sequence[str], environment: Mapping[str, str] | None = None) -> str:
    line = " ".join(systemd_word(word) for word in command)
    env_lines = "".join(
        f"Environment={systemd_word(f'{key}={value}')}\n"
        for key, value in (environment or {}).items()
    )
    return f"""\
# `harness web` (the sessions in a browser) as a systemd user service, written by
# `harness web --service`. Its URL, token included, is kept across restarts:
# `harness web --service` again prints it, as does `journalctl --user -u harness-web`.
[Unit]
Description=coding-harness web bridge (harness web)
Wants={SOCKET_NAME}
After={SOCKET_NAME} network.target
StartLimitIntervalSec=120
StartLimitBurst=5

[Service]
Type=exec
ExecStart={line}
Restart=on-failure
RestartSec=2
# A bad argument or a port taken is not cured by starting again.
RestartPreventExitStatus={exit_codes.BAD_ARGUMENTS}
UMask=0077
{env_lines}
[Install]
WantedBy=default.target
"""


def render_web_plist(
    command: Sequence[str], log_dir: Path, environment: Mapping[str, str] | None = None
) -> bytes:
    """The LaunchAgent: started at login, started again only after a failure."""
    import plistlib

    agent: dict[str, object] = {
        "Label": WEB_LABEL,
        "ProgramArguments": list(command),
        "RunAtLoad": True,
        "KeepAlive": {"SuccessfulExit": False},
        "ProcessType": "Background",
        "Umask": 0o077,
        "StandardOutPath": str(log_dir / "web.out.log"),
        "StandardErrorPath": str(log_dir / "web.err.log"),
    }
    if environment:
        agent["EnvironmentVariables"] = dict(environment)
    return plistlib.dumps(agent, sort_keys=False)
