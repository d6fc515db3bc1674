"""The real `harness` REPL in a real terminal: a tmux server of its own, one pane.

A test types with `send-keys` and reads the pane (its scrollback included)
with `capture-pane`; `exit_status` is what the pane's shell printed when the
REPL left. Callers skip where tmux is not installed.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.integration.conftest import Sandbox

WAIT = 15.0
EXITED = re.compile(r"\[exited (\d+)\]")
TMUX_CONF = "set -g history-limit 50000\nset -g remain-on-exit on\n"


class Terminal:
    """One tmux server of its own (its socket in the sandbox) running the REPL in a pane."""

    def __init__(self, sandbox: Sandbox, cwd: Path, name: str, *args: str) -> None:
        self.socket = sandbox.root / f"tmux-{name}.sock"
        conf = sandbox.root / "tmux.conf"
        conf.write_text(TMUX_CONF)
        env = {k: v for k, v in sandbox.env.items() if not k.startswith("TMUX")}
        env["TERM"] = "xterm-256color"
        self.env = env
        command = [sys.executable, "-m", "coding_harness.client", *args]
        shell = f'{shlex.join(command)}; echo "[exited $?]"'
        self._tmux(
            "-f",
            str(conf),
            "new-session",
            "-d",
            "-s",
            "repl",
            "-x",
            "160",
            "-y",
            "50",
            "-c",
            str(cwd),
            shell,
        )

    def _tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
        return done.stdout

    def type(self, text: str, enter: bool = True) -> None:
        self._tmux("send-keys", "-t", "repl", "-l", text)
        if enter:
            self._tmux("send-keys", "-t", "repl", "Enter")

    def keys(self, *names: str) -> None:
        self._tmux("send-keys", "-t", "repl", *names)

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "repl")

    def wait_for(self, text: str, count: int = 1) -> None:
        self.wait_until(lambda: self.text().count(text) >= count, repr(text))

    def wait_until(self, check: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; the screen:\n{self.text()}")
            time.sleep(0.05)

    def exit_status(self) -> int:
        """The REPL's exit status, which the pane's shell prints once it has left."""
        self.wait_until(lambda: EXITED.search(self.text()) is not None, "the REPL to leave")
        found = EXITED.search(self.text())
        assert found is not None
        return int(found.group(1))

    def close(self) -> None:
        subprocess.run(
            ["tmux", "-S", str(self.socket), "kill-server"],
            env=self.env,
            capture_output=True,
            timeout=10,
            check=False,
        )
