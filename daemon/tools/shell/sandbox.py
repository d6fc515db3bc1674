"""The sandbox run_shell and `make check` run in: what a command can reach once it runs.

The whitelist decides which program starts; it cannot decide what a Makefile
recipe does once `make` runs it, and the model can edit the Makefile. Where the
machine has bubblewrap (`bwrap`, Linux), each such command runs inside one:

- the whole file system read-only, the workspace read-write, a private `/tmp`;
- the home folder empty except for the toolchain folders builds need and the
  ones `agent.sandbox_home` adds (global file only), read-only; `/root` empty;
  credential names masked wherever they would show, the workspace included; the
  daemon's state folder and its socket's folder masked; the workspace's `.git`
  read-only (sandbox_mounts.py and sandbox_workspace.py say how);
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
A session whose workspace is the home folder, or holds it (`/`), is told once
what that means (`wide_workspace_notice`). macOS's sandbox-exec is not used (not
built yet: there, "auto" runs commands unsandboxed with the notice and "required"
refuses them).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.shell.process import tool_environment
from coding_harness.daemon.tools.shell.sandbox_mounts import View, bwrap_arguments
from coding_harness.protocol import paths

PROBE_SECONDS = 10.0
INSTALL_HINT = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
# What `probe` asks of bwrap: each kind of mount and namespace a command's sandbox uses.
TRIAL = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
TRIAL += ["--tmpfs", "/tmp/masked", "--remount-ro", "/tmp/masked", "--unshare-pid"]
TRIAL += ["--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net"]
TRIAL += ["--die-with-parent", "--new-session", "--cap-drop", "ALL", "--"]


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
    view: View | None = None  # what it shows and hides besides the workspace
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
        view = self.view or View(home=str(paths.home_dir()))
        arguments = bwrap_arguments(os.path.realpath(workspace), view, self.network)
        return [self.program, *arguments, *argv]


def hidden_paths(home: Path) -> tuple[str, ...]:
    """The daemon's own folders (state, socket, systemd credentials), which no
    command may see, wherever they are."""
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
    found = [str(paths.state_dir()), str(paths.socket_path().parent)]
    credentials = os.environ.get("CREDENTIALS_DIRECTORY")
    if credentials:
        found.append(credentials)
    return tuple(dict.fromkeys(found))


def sandbox_for(
    mode: str, network: bool, home: Path, shown_in_home: tuple[str, ...] = ()
) -> Sandbox:
    """The sandbox of a turn under `agent.sandbox` = `mode`; `shown_in_home`: the
    folders `agent.sandbox_home` adds."""
    if mode == "off":
        return Sandbox(mode=mode, reason='agent.sandbox is "off"')
    found = probe()
    if not found.usable:
        return Sandbox(mode=mode, reason=found.reason)
    view = View(home=str(home), shown=shown_in_home, hidden=hidden_paths(home))
    return Sandbox(mode=mode, program=found.program, network=network, view=view)


def wide_workspace_notice(cwd: Path, home: Path, sandboxed: bool) -> str | None:
    """What the session is told when its workspace is the home folder or a folder
    around it, or None for any other workspace."""
    workspace, home_real = os.path.realpath(cwd), os.path.realpath(home)
    if workspace == "/":
        what = "/, the whole file system"
    elif workspace == home_real:
        what = f"your home folder ({workspace})"
    elif home_real.startswith(workspace.rstrip("/") + "/"):
        what = f"{workspace}, which holds your home folder"
    else:
        return None
    kept = (
        "commands still cannot read your dotfiles or credentials (~/.ssh and the like), "
        "and .git is read-only to them"
        if sandboxed
        else "commands run unsandboxed and can read and change anything you can"
    )
    return (
        f"the workspace is {what}: the agent may change any file in it that is not "
        f"hidden; {kept}; to keep it to one project, start harness in that project's folder"
    )


@functools.cache
def probe() -> Availability:
    """Whether bwrap is here and works (it may lack user namespaces); found once."""
    program = shutil.which("bwrap")
    if program is None:
        return Availability(program=None, reason="bubblewrap (bwrap) is not installed")
    trial = [program, *TRIAL, "true"]
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
