"""`harness doctor`: check the set-up and print each problem with its fix.

Checks, in order: the socket folder (a private folder of this user, a path
that fits a Unix socket), the config files and providers (`doctor_config`),
the MCP servers they name (`doctor_mcp`: each command found, each url http(s)),
the sandbox commands run in (`doctor_sandbox`),
the user service (installed, for this Python, enabled), and the daemon
itself when its discovery record says one runs (answering, same pid and
socket as recorded, not older than this client), then what model servers and key
variables that daemon finds here (`doctor_discovery`) and the default model's
context window (`doctor_window`). Exit 0 when all is well,
1 when anything needs fixing; notes ("info") never fail the run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from coding_harness.client.commands.doctor_config import (
    Finding,
    check_configs,
    check_endpoints,
    check_keys,
    default_provider,
    info,
    ok,
    problem,
    usable_profiles,
)
from coding_harness.client.commands.doctor_discovery import check_discovery
from coding_harness.client.commands.doctor_mcp import check_mcp
from coding_harness.client.commands.doctor_sandbox import check_sandbox
from coding_harness.client.commands.doctor_window import check_window
from coding_harness.client.render.sanitize import visible
from coding_harness.client.service import service_units
from coding_harness.client.session import version_skew
from coding_harness.protocol import discovery, errors, exit_codes, methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

LABELS = {"ok": "ok", "problem": "PROBLEM", "info": "info"}
TOOL_TIMEOUT = 10.0


def main(argv: list[str]) -> int:
    if argv:
        print("usage: harness doctor", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    env = dict(os.environ)
    try:
        cwd = Path.cwd()
    except FileNotFoundError:
        print("harness doctor: the current folder no longer exists; cd to an existing one")
        return exit_codes.BAD_ARGUMENTS
    findings = run_checks(env, home=Path(env.get("HOME") or Path.home()), cwd=cwd)
    for finding in findings:  # texts quote config files and the daemon: made safe
        print(f"{LABELS[finding.level]:<8} {visible(finding.text)}")
        if finding.fix:
            print(f"{'':<8} fix: {visible(finding.fix)}")
    problems = sum(1 for finding in findings if finding.level == "problem")
    print("all is well" if not problems else f"{problems} problem{'s' * (problems != 1)} to fix")
    return exit_codes.OK if not problems else exit_codes.MODEL_ERROR


def run_checks(env: dict[str, str], *, home: Path, cwd: Path) -> list[Finding]:
    config_findings, merged = check_configs(home, cwd, env)
    profiles = usable_profiles(merged)
    daemon_findings = check_daemon(env)
    configured = any(not profile.get("builtin") for profile in profiles.values())
    discovered, chosen = check_discovery(env, configured=configured)
    # Without a config file a discovered profile replaces the built-in one: not checked.
    builtin_replaced = chosen is not None and all(p.get("builtin") for p in profiles.values())
    return [
        *check_socket(env),
        *config_findings,
        *check_mcp(home, cwd, env),
        *check_sandbox(merged, home),
        *check_keys(profiles, default_provider(merged, profiles), env),
        *([] if builtin_replaced else check_endpoints(profiles, env)),
        *check_service(env),
        *daemon_findings,
        *discovered,
        *check_window(env, cwd),
    ]


def check_socket(env: dict[str, str]) -> list[Finding]:
    path = paths.socket_path(env)
    found: list[Finding] = []
    if len(os.fsencode(path)) > paths.MAX_SOCKET_PATH_BYTES:
        found.append(
            problem(
                f"socket path {path} is longer than {paths.MAX_SOCKET_PATH_BYTES} bytes",
                "set CODING_HARNESS_SOCKET to a shorter path",
            )
        )
    runtime = env.get("XDG_RUNTIME_DIR")
    if runtime and not env.get("CODING_HARNESS_SOCKET") and not path.is_relative_to(runtime):
        found.append(info(f"XDG_RUNTIME_DIR={runtime} is not a private folder; using {path}"))
    return [*found, *_folder_findings(path.parent), *_socket_file_findings(path)]


def _folder_findings(folder: Path) -> list[Finding]:
    try:
        info_ = folder.lstat()
    except FileNotFoundError:
        return [info(f"socket folder {folder} does not exist yet; the daemon makes it 0700")]
    if stat.S_ISLNK(info_.st_mode):
        return [problem(f"socket folder {folder} is a symbolic link", f"remove it: rm {folder}")]
    if not stat.S_ISDIR(info_.st_mode):
        return [problem(f"socket folder {folder} is not a folder", f"remove it: rm {folder}")]
    if info_.st_uid != os.getuid():
        return [
            problem(
                f"socket folder {folder} belongs to uid {info_.st_uid}, not to you",
                f"have it removed (sudo rm -r {folder}); the daemon makes its own",
            )
        ]
    mode = stat.S_IMODE(info_.st_mode)
    if mode & 0o077:
        return [problem(f"socket folder {folder} has mode {mode:o}", f"chmod 700 {folder}")]
    return [ok(f"socket folder {folder} is yours and private (700)")]


def _socket_file_findings(path: Path) -> list[Finding]:
    try:
        paths.check_socket_file(path)
        mode = stat.S_IMODE(path.lstat().st_mode)
    except paths.UnsafePathError as exc:
        what, _, fix = str(exc).partition("; ")
        return [problem(what, fix)]
    except OSError:
        return []
    if mode & 0o077:
        return [problem(f"socket {path} has mode {mode:o}", f"chmod 600 {path}")]
    return [ok(f"socket {path} is private (600)")]


def check_service(env: dict[str, str], platform: str = sys.platform) -> list[Finding]:
    if platform.startswith("linux"):
        return _systemd_findings(env)
    if platform == "darwin":
        return _launchd_findings(env)
    return []


def _systemd_findings(env: dict[str, str]) -> list[Finding]:
    folder = service_units.unit_dir(env)
    service = folder / service_units.SERVICE_NAME
    socket_unit = folder / service_units.SOCKET_NAME
    present = [path.exists() for path in (service, socket_unit)]
    if not any(present):
        return [info("no systemd user unit (optional): `harness daemon install` adds one")]
    if not all(present):
        return [problem(f"only one of the units is in {folder}", "run: harness daemon install")]
    found = _interpreter_findings(_exec_start_python(service), str(service))
    systemctl = shutil.which("systemctl", path=env.get("PATH", os.defpath))
    if systemctl is None:
        enabled = (folder / "sockets.target.wants" / service_units.SOCKET_NAME).exists()
    else:
        state = _output([systemctl, "--user", "is-enabled", service_units.SOCKET_NAME])
        enabled = state == "enabled"
    if enabled:
        found.append(ok(f"{service_units.SOCKET_NAME} is installed and enabled"))
    else:
        fix = f"systemctl --user enable --now {service_units.SOCKET_NAME}"
        found.append(problem(f"{service_units.SOCKET_NAME} is installed but not enabled", fix))
    return found


def _launchd_findings(env: dict[str, str]) -> list[Finding]:
    plist = service_units.launch_agents_dir(env) / service_units.PLIST_NAME
    if not plist.exists():
        return [info("no LaunchAgent (optional): `harness daemon install` adds one")]
    found = _interpreter_findings(_plist_python(plist), str(plist))
    launchctl = shutil.which("launchctl", path=env.get("PATH", os.defpath))
    if launchctl is not None and _output([launchctl, "list", service_units.LABEL]) is None:
        found.append(problem(f"{plist} is not loaded", f"launchctl load -w {plist}"))
    else:
        found.append(ok(f"{plist} is installed"))
    return found


def _exec_start_python(service: Path) -> str | None:
    """The program the unit runs; None when the unit is unreadable or names none."""
    try:
        lines = service.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("ExecStart="):
            try:
                words = shlex.split(line.removeprefix("ExecStart=").replace("%%", "%"))
            except ValueError:  # unbalanced quotes in a hand-edited unit
                return None
            return words[0] if words else None
    return None


def _plist_python(plist: Path) -> str | None:
    import plistlib

    try:
        arguments = plistlib.loads(plist.read_bytes()).get("ProgramArguments") or [None]
    except (OSError, ValueError, plistlib.InvalidFileException):
        return None
    return str(arguments[0]) if arguments[0] else None


def _interpreter_findings(python: str | None, where: str) -> list[Finding]:
    if python == sys.executable:
        return []
    return [
        problem(
            f"{where} runs {python or 'no command'}, not this harness's Python ({sys.executable})",
            "run: harness daemon install",
        )
    ]


def _output(command: list[str]) -> str | None:
    """The command's stripped output when it succeeds, else None."""
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=TOOL_TIMEOUT, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def check_daemon(env: Mapping[str, str]) -> list[Finding]:
    socket_path = paths.socket_path(dict(env))
    try:
        record = discovery.read_record(discovery.record_path(dict(env)))
    except discovery.RecordError as exc:
        return [problem("the discovery record is unreadable", str(exc))]
    if record is None or not discovery.pid_alive(int(record["pid"])):
        return [info("no daemon is running; the first harness command starts one")]
    try:
        with connect(socket_path, timeout=2.0) as conn:
            hello = conn.initialize("harness-doctor", __version__, approvals=False)
            status = conn.request(methods.DAEMON_STATUS, timeout=5.0)
    except DaemonUnreachable as exc:
        return [
            problem(
                f"the daemon (pid {record['pid']}) does not answer: {exc}",
                "run: harness daemon restart",
            )
        ]
    except errors.RpcError as exc:
        return [
            problem(
                f"the daemon (pid {record['pid']}) refused: {exc.message}",
                "close clients you do not need, or run: harness daemon restart",
            )
        ]
    mismatches = discovery.problems(record, socket_path=socket_path, answering_pid=status["pid"])
    found = [problem(text, "run: harness daemon restart") for text in mismatches]
    skew = version_skew.notice(hello)
    if skew:
        found.append(problem(skew, "run: harness daemon restart"))
    found.extend(hub_findings(status.get("hub")))
    if any(f.level == "problem" for f in found):
        return found
    answering = f"daemon pid {status['pid']} ({status['version']}) answers on {socket_path}"
    return [ok(answering), *found]


def hub_findings(hub: object) -> list[Finding]:
    """The team hub as `daemon.status` reports it: nothing without one (docs/team.md)."""
    if not isinstance(hub, dict):
        return []
    who = f"runner {hub.get('runner')} (person {hub.get('person')})"
    if hub.get("joined") and not hub.get("problem"):
        return [ok(f"hub {hub.get('hub')}: joined as {who}")]
    return [
        problem(
            f"hub {hub.get('hub')}: not reached: {hub.get('problem')}",
            'check "hub" in ~/.coding_harness.json and that the database answers',
        )
    ]
