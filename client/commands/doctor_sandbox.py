"""`harness doctor`'s sandbox line: which sandbox commands run in here, and why.

The daemon decides per turn (daemon/tools/shell/sandbox.py); this looks the
same way, from the client: `agent.sandbox` as the config files set it, whether
`bwrap` is on PATH, and whether it can make a sandbox here (it may lack user
namespaces), by running it once with the same kinds of namespaces.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

from coding_harness.client.commands.doctor_config import Finding, info, ok, problem

INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
TRIAL = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
TRIAL += ["--unshare-net", "--die-with-parent", "--new-session", "--", "true"]


def check_sandbox(merged: Mapping[str, Any]) -> list[Finding]:
    agent = merged.get("agent")
    mode = agent.get("sandbox", "auto") if isinstance(agent, Mapping) else "auto"
    if mode == "off":
        return [info('sandbox: off (agent.sandbox is "off"): commands run unsandboxed')]
    why = _unavailable()
    if why is None:
        network = isinstance(agent, Mapping) and agent.get("sandbox_network") is True
        reach = "with" if network else "without"
        return [ok(f"sandbox: bubblewrap; run_shell and make check run inside it, {reach} network")]
    if mode == "required":
        return [problem(f"sandbox: required, but {why}: every command is refused", INSTALL)]
    # "auto" works as designed without one: a note, not a problem to fix.
    return [info(f"sandbox: none ({why}): commands run unsandboxed; to use one, {INSTALL}")]


def _unavailable() -> str | None:
    """Why bwrap cannot sandbox here, or None when it can."""
    program = shutil.which("bwrap")
    if program is None:
        return "bwrap is not installed"
    try:
        done = subprocess.run(
            [program, *TRIAL], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run ({exc})"
    if done.returncode != 0:
        return "bwrap cannot make a sandbox here: " + (" ".join(done.stderr.split())[:160])
    return None
