"""The sandbox run_shell and `make check` run in: what a command can reach once it runs.

The whitelist decides which program starts; it cannot decide what a Makefile
recipe does once `make` runs it, and the model can edit the Makefile. Where the
machine has bubblewrap (`bwrap`, Linux), each such command runs inside one:

- the whole file system read-only, the workspace read-write, a private `/tmp`;
- the user's secrets out of sight: `~/.ssh`, `~/.gnupg`, `~/.aws`, `~/.config`
  and the like, the daemon's state folder and its socket's folder, each covered
  by an empty folder (or `/dev/null` for a file);
- no network (a network namespace of its own, loopback only) unless
  `agent.sandbox_network` says otherwise;
- a PID namespace of its own with its own `/proc`: no process inside can see or
  signal the daemon, or read its memory or environment;
- no capabilities, a new session (no typing into the terminal), and the whole
  tree ends when the command's bwrap does.

`agent.sandbox` picks the policy: "auto" uses it where it works and runs
commands unsandboxed otherwise (the session is told once), "required" refuses
to run a command without it, "off" never uses it. Whether bwrap works is found
once per daemon by running it (`probe`, which the daemon calls in a worker
thread at start, so no turn waits for it on the event loop): it needs
unprivileged user namespaces, which some kernels and containers turn off.
macOS's sandbox-exec is not used (not built yet: there, "auto" runs commands
unsandboxed with the notice and "required" refuses them).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.protocol import paths

# Under the home folder: where keys, tokens and other people's credentials live.
HIDDEN_IN_HOME = (
    ".ssh", ".gnupg", ".aws", ".config", ".azure", ".kube", ".docker", ".password-store",
    ".netrc", ".git-credentials", ".pypirc", ".npmrc", ".coding_harness.json",
    ".local/share/keyrings",
)  # fmt: skip
PROBE_SECONDS = 10.0
INSTALL_HINT = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"


@dataclass(frozen=True, kw_only=True, slots=True)
class Availability:
    """Whether the sandbox can be used here, and if not, why (one line)."""

    program: str | None
    reason: str = ""

    @property
    def usable(self) -> bool:
        return self.program is not None


@dataclass(frozen=True, kw_only=True, slots=True)
class Sandbox:
    """How one turn's commands run: inside bwrap (`program`), or not, and why."""

    mode: str  # "auto", "required" or "off"
    program: str | None = None
    network: bool = False
    hidden: tuple[str, ...] = ()
    reason: str = ""  # why there is no program, for the notice or the refusal

    @property
    def active(self) -> bool:
        return self.program is not None

    @property
    def refusal(self) -> str | None:
        """Why a command may not run at all ("required", and no sandbox here)."""
        if self.mode != "required" or self.active:
            return None
        return (
            f'refused: agent.sandbox is "required" and commands cannot be sandboxed here '
            f'({self.reason}); {INSTALL_HINT}, or set agent.sandbox to "auto"'
        )

    def wrap(self, argv: list[str], workspace: Path) -> list[str]:
        """`argv` as the sandbox runs it in `workspace` (unchanged when inactive)."""
        if self.program is None:
            return argv
        return [self.program, *bwrap_arguments(workspace, self.hidden, self.network), *argv]


def bwrap_arguments(workspace: Path, hidden: Iterable[str], network: bool) -> list[str]:
    """bwrap's options, in the order the mounts must be made (later ones on top)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for kept in _programs_under_tmp():  # the private /tmp must not hide the toolchain
        args += ["--ro-bind", kept, kept]
    for path in hidden:
        if Path(path).is_dir():
            args += ["--tmpfs", path]
        elif os.path.lexists(path):
            args += ["--ro-bind", "/dev/null", path]
    real = str(workspace.resolve())
    args += ["--bind", real, real, "--chdir", real]
    args += ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if not network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]
    return args


def _programs_under_tmp() -> list[str]:
    """The daemon's interpreter and the PATH folders that live under /tmp (a clone
    checked out there, a test's sandbox): seen read-only through the private /tmp."""
    candidates = [sys.prefix, *os.environ.get("PATH", "").split(os.pathsep)]
    kept = []
    for folder in candidates:
        real = os.path.realpath(folder) if folder else ""
        if real.startswith("/tmp/") and Path(real).is_dir() and real not in kept:
            kept.append(real)
    return kept


def hidden_paths(home: Path) -> tuple[str, ...]:
    """What a command must not see: the secrets under `home`, and the daemon's own
    folders (state, socket, systemd credentials)."""
    return _hidden_paths(home, tuple(os.environ.get(name) for name in _PATH_VARIABLES))


# What `_hidden_paths` reads from the environment (through `paths`), so a change to
# any of them finds the folders again.
_PATH_VARIABLES = (
    "HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "CODING_HARNESS_SOCKET",
    "CREDENTIALS_DIRECTORY",
)


@functools.lru_cache(maxsize=8)
def _hidden_paths(home: Path, variables: tuple[str | None, ...]) -> tuple[str, ...]:
    """Once per home and environment: every turn asks for them."""
    found = [str(home / name) for name in HIDDEN_IN_HOME]
    found += [str(paths.state_dir()), str(paths.socket_path().parent)]
    credentials = os.environ.get("CREDENTIALS_DIRECTORY")
    if credentials:
        found.append(credentials)
    return tuple(dict.fromkeys(found))


def sandbox_for(mode: str, network: bool, home: Path) -> Sandbox:
    """The sandbox of a turn under `agent.sandbox` = `mode`."""
    if mode == "off":
        return Sandbox(mode=mode, reason='agent.sandbox is "off"')
    found = probe()
    if not found.usable:
        return Sandbox(mode=mode, reason=found.reason)
    return Sandbox(mode=mode, program=found.program, network=network, hidden=hidden_paths(home))


@functools.cache
def probe() -> Availability:
    """Whether bwrap is here and works (it may lack user namespaces); found once."""
    program = shutil.which("bwrap")
    if program is None:
        return Availability(program=None, reason="bubblewrap (bwrap) is not installed")
    trial = [program, *bwrap_arguments(Path("/"), (), network=False), "true"]
    try:
        done = subprocess.run(
            trial,
            capture_output=True,
            text=True,
            timeout=PROBE_SECONDS,
            check=False,
            env=tool_environment(),  # never the daemon's keys, even for `true`
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Availability(program=None, reason=f"bwrap did not run ({exc})")
    if done.returncode != 0:
        said = " ".join(done.stderr.split())[:200] or f"exit {done.returncode}"
        return Availability(program=None, reason=f"bwrap cannot make a sandbox here: {said}")
    return Availability(program=program)
