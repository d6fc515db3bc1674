"""`harness doctor`'s sandbox line: which sandbox commands run in here, and why.

The daemon decides per turn (daemon/tools/shell/sandbox.py); this looks the
same way, from the client: `agent.sandbox` as the config files set it, whether
`bwrap` is on PATH, and whether it can make a sandbox here (it may lack user
namespaces), by running it once with the same kinds of namespaces. Where it
can, a second line lists what commands see of the home folder: the built-in
toolchain folders found here and the global file's `agent.sandbox_home`
(protocol/sandbox_home.py; a project file's is ignored, as the daemon does).
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coding_harness.client.commands.doctor_config import Finding, info, ok, problem
from coding_harness.protocol.config_files import GLOBAL_CONFIG_NAME, parse_json
from coding_harness.protocol.sandbox_home import CONFIG_KEY, SHOWN_IN_HOME, entry_path

INSTALL = "install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)"
TRIAL = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid"]
TRIAL += ["--unshare-net", "--die-with-parent", "--new-session", "--", "true"]


def check_sandbox(merged: Mapping[str, Any], home: Path | None = None) -> list[Finding]:
    agent = merged.get("agent")
    mode = agent.get("sandbox", "auto") if isinstance(agent, Mapping) else "auto"
    if mode == "off":
        return [info('sandbox: off (agent.sandbox is "off"): commands run unsandboxed')]
    why = _unavailable()
    if why is None:
        network = isinstance(agent, Mapping) and agent.get("sandbox_network") is True
        reach = "with" if network else "without"
        line = ok(f"sandbox: bubblewrap; run_shell and make check run inside it, {reach} network")
        return [line] if home is None else [line, _home_shown(home)]
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


def _home_shown(home: Path) -> Finding:
    """What commands see of the home folder: the toolchain folders here, and the
    global file's additions (the daemon ignores a project file's)."""
    builtin = [f"~/{entry}" for entry in SHOWN_IN_HOME if (home / entry).is_dir()]
    added = [e for e in _global_entries(home) if entry_path(e, str(home)) is not None]
    shown = ", ".join([*builtin, *added])
    seen = f"see only {shown} (read-only)" if shown else "see none of it"
    return info(
        f"sandbox: of your home folder commands {seen}; "
        f"add folders with agent.{CONFIG_KEY} in ~/{GLOBAL_CONFIG_NAME}"
    )


def _global_entries(home: Path) -> list[str]:
    try:
        data = parse_json((home / GLOBAL_CONFIG_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    agent = data.get("agent") if isinstance(data, dict) else None
    entries = agent.get(CONFIG_KEY) if isinstance(agent, dict) else None
    if not isinstance(entries, list):
        return []
    return [entry for entry in entries if isinstance(entry, str)]
