"""`harness web --service` / `--remove-service`: the web bridge as a per-user service.

Linux: writes harness-web.service into the daemon's unit folder
(`$XDG_CONFIG_HOME/systemd/user`) for this installation's interpreter, then
`systemctl --user daemon-reload` and `systemctl --user enable --now
harness-web.service`. macOS: writes `~/Library/LaunchAgents/org.coding-harness.web.plist`
and runs `launchctl load -w`. Without systemctl / launchctl on PATH the file is
still written and the commands are printed (as `harness daemon install` does).
The unit keeps its token (`--keep-token`); the token is made here if there is
none yet, so the URL is printed now and again on every `harness web --service`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from coding_harness.client.service.service_install import _found, _run, _write
from coding_harness.client.service.service_units import (
    launch_agents_dir,
    service_environment,
    unit_dir,
)
from coding_harness.client.service.web_unit import (
    WEB_LABEL,
    WEB_PLIST_NAME,
    WEB_SERVICE_NAME,
    render_web_plist,
    render_web_service,
    web_command,
)
from coding_harness.protocol import exit_codes, paths

TOKEN_FILE = "web-token"
SYSTEMCTL_ENABLE = [
    ["systemctl", "--user", "daemon-reload"],
    ["systemctl", "--user", "enable", "--now", WEB_SERVICE_NAME],
    # a unit already running keeps its old command line until restarted
    ["systemctl", "--user", "try-restart", WEB_SERVICE_NAME],
]
SYSTEMCTL_DISABLE = [
    ["systemctl", "--user", "disable", "--now", WEB_SERVICE_NAME],
    ["systemctl", "--user", "daemon-reload"],
]


def install(
    host: str,
    port: int,
    allow_hosts: Sequence[str],
    url_host: str,
    *,
    env: Mapping[str, str] | None = None,
    platform: str = sys.platform,
) -> int:
    """Write and start the unit; print the URL it serves (`url_host`: the name in it)."""
    env = dict(os.environ if env is None else env)
    if port == 0:
        print(
            "harness web --service: a service needs a fixed port (its URL must stay the "
            "same); name one with --port N, or leave the default 8765",
            file=sys.stderr,
        )
        return exit_codes.BAD_ARGUMENTS
    command = web_command([sys.executable], host, port, allow_hosts)
    if platform.startswith("linux"):
        code = _install_systemd(command, env)
    elif platform == "darwin":
        code = _install_launchd(command, env)
    else:
        print(f"harness web --service: no service manager known for {platform}; run `harness web`")
        return exit_codes.MODEL_ERROR
    if code == exit_codes.OK:
        _print_url(url_host, port, env)
    return code


def uninstall(*, env: Mapping[str, str] | None = None, platform: str = sys.platform) -> int:
    env = dict(os.environ if env is None else env)
    if platform.startswith("linux"):
        unit = unit_dir(env) / WEB_SERVICE_NAME
        if not unit.exists():
            print(f"nothing to remove: no {unit}")
            return exit_codes.OK
        _run(SYSTEMCTL_DISABLE[:1], env, required=False)
        for path in (unit, unit_dir(env) / "default.target.wants" / WEB_SERVICE_NAME):
            if path.exists() or path.is_symlink():
                path.unlink()
                print(f"removed {path}")
        _run(SYSTEMCTL_DISABLE[1:], env, required=False, quiet=True)
        return exit_codes.OK
    if platform == "darwin":
        plist = launch_agents_dir(env) / WEB_PLIST_NAME
        if not plist.exists():
            print(f"nothing to remove: no {plist}")
            return exit_codes.OK
        _run([["launchctl", "unload", "-w", str(plist)]], env, required=False)
        plist.unlink()
        print(f"removed {plist}")
        return exit_codes.OK
    print(f"harness web --remove-service: nothing is installed on {platform}")
    return exit_codes.OK


def _install_systemd(command: list[str], env: dict[str, str]) -> int:
    unit = unit_dir(env) / WEB_SERVICE_NAME
    _write(unit, render_web_service(command, service_environment(env)).encode())
    print(f"wrote {unit}")
    code = _run(SYSTEMCTL_ENABLE, env)
    if code == exit_codes.OK and _found("systemctl", env):
        print(f"enabled {WEB_SERVICE_NAME}: systemd starts it at login and after a failure")
    return code


def _install_launchd(command: list[str], env: dict[str, str]) -> int:
    plist = launch_agents_dir(env) / WEB_PLIST_NAME
    log_dir = paths.state_dir(env)
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    _write(plist, render_web_plist(command, log_dir, service_environment(env)))
    print(f"wrote {plist}")
    _run([["launchctl", "unload", str(plist)]], env, required=False, quiet=True)
    code = _run([["launchctl", "load", "-w", str(plist)]], env)
    if code == exit_codes.OK and _found("launchctl", env):
        print(f"loaded {WEB_LABEL}: launchd starts it at login and after a failure")
    return code


def _print_url(url_host: str, port: int, env: Mapping[str, str]) -> None:
    """The URL the unit serves: its token is the kept one (made now if there is none)."""
    from coding_harness.client.web.access import kept_token

    token_path = paths.state_dir(env) / TOKEN_FILE
    token = kept_token(token_path)
    print(f"open: http://{url_host}:{port}/?token={token}")
    print(
        f"the token is kept in {token_path} (0600) across restarts; "
        "`harness web --service` again prints this URL"
    )
