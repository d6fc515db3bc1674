"""Running the installed `harness` and `harnessd` commands as a user meets them.

`run_command` runs the console script next to this Python with standard input
at /dev/null (or the given bytes), no colors, and file permissions that mean
what they say: run as root (as in a container), a process ignores them, so
the child drops the two capabilities that override them (CAP_DAC_OVERRIDE,
CAP_DAC_READ_SEARCH) from its bounding set before it runs the command. Every
process it starts, a daemon the client launches included, inherits that.
"""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
PR_CAPBSET_DROP = 24
CAP_DAC_OVERRIDE = 1
CAP_DAC_READ_SEARCH = 2


# Looked up here, not in the child: loading a library after fork can deadlock.
_prctl = ctypes.CDLL(None, use_errno=True).prctl


def obey_file_permissions() -> None:
    """Runs in the child before exec: as root, give up the power to ignore permissions."""
    if os.geteuid() != 0:
        return
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if _prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def command_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "NO_COLOR": "1"}


def run_command(
    name: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    input: bytes | None = None,
    timeout: float = 30,
) -> subprocess.CompletedProcess[str]:
    """Run `harness` or `harnessd` to the end; text output (undecodable bytes escaped)."""
    result = subprocess.run(
        [str(BIN / name), *args],
        env=command_env(env),
        cwd=cwd,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        timeout=timeout,
        preexec_fn=obey_file_permissions,
    )
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode("utf-8", "backslashreplace"),
        result.stderr.decode("utf-8", "backslashreplace"),
    )


def start_command(
    name: str, args: list[str], *, env: dict[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """Start `harness` or `harnessd` in the background, output captured; the caller ends it."""
    return subprocess.Popen(
        [str(BIN / name), *args],
        env=command_env(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=obey_file_permissions,
    )
