"""Running one hook command: `/bin/sh -c`, the event on standard input, bounded.

The command runs in the session's workspace in a session and process group of
its own, with the environment it is given (the tool allow-list, never the
daemon's keys) and the marker of a `Command` of the daemon's command keeper
(`tools/shell/containment.py`), so whatever it leaves running is ended with it.
Standard input is an unlinked temporary file holding the event, so a hook that
never reads it cannot block the daemon; standard output and standard error go
through pipes of their own, each capped to its head and tail. After `timeout`
seconds the group gets SIGTERM, then SIGKILL; a cancelled turn kills it at once
(the supervision is tool commands' own, `tools/shell/process.py`).
"""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.shell.containment import CommandKeeper, command_keeper
from coding_harness.daemon.tools.shell.process import (
    OutputCapture,
    release,
    signal_group,
    start_pump,
    supervise,
)

SHELL = "/bin/sh"
OUTPUT_CAP = 20000


@dataclass(frozen=True, kw_only=True, slots=True)
class HookProcess:
    """What one hook command did."""

    exit_code: int | None  # None: it was killed, or never started
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    start_error: str = ""  # why it could not start, when it could not


async def run_hook_command(
    command: str,
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    limit: float,
    cap: int = OUTPUT_CAP,
    keeper: CommandKeeper | None = None,
) -> HookProcess:
    """Run `command` with `stdin`; stop it and its group after `limit` seconds."""
    keeper = keeper or command_keeper()
    marker = keeper.begin()
    try:
        name, token = marker.environment_entry()
        child_env = {**env, name: token}
        try:
            proc, pipes = await _spawn(command, stdin, cwd, child_env, keeper)
        except OSError as exc:
            return HookProcess(exit_code=None, start_error=str(exc.strerror or exc))
        keeper.started(marker, proc.pid)
        return await _collect(proc, pipes, limit, cap)
    finally:
        keeper.end(marker)


async def _spawn(
    command: str, stdin: bytes, cwd: Path, env: dict[str, str], keeper: CommandKeeper
) -> tuple[asyncio.subprocess.Process, tuple[int, int]]:
    """The started shell, and the read ends of its stdout and stderr pipes."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    try:
        with tempfile.TemporaryFile() as source:
            source.write(stdin)
            source.seek(0)
            proc = await asyncio.create_subprocess_exec(
                SHELL,
                "-c",
                command,
                cwd=cwd,
                stdin=source,
                stdout=out_write,
                stderr=err_write,
                start_new_session=True,
                env=env,
                preexec_fn=keeper.child_setup(),
            )
    except BaseException:
        os.close(out_read)
        os.close(err_read)
        raise
    finally:
        os.close(out_write)
        os.close(err_write)
    return proc, (out_read, err_read)


async def _collect(
    proc: asyncio.subprocess.Process, pipes: tuple[int, int], limit: float, cap: int
) -> HookProcess:
    captures = (OutputCapture(cap), OutputCapture(cap))
    readers: list[tuple[asyncio.ReadTransport, asyncio.Task[None]]] = []
    try:
        for index, capture in enumerate(captures):
            try:
                readers.append(await start_pump(pipes[index], capture))
            except BaseException:
                for fd in pipes[index + 1 :]:  # not yet handed to a reader
                    os.close(fd)
                raise
        pumps = asyncio.gather(*(task for _, task in readers), return_exceptions=True)
        timed_out = await supervise(proc, pumps, limit)
    finally:
        for transport, task in readers:
            task.cancel()
            transport.close()
        signal_group(proc, signal.SIGKILL)
        release(proc)
    code = proc.returncode
    return HookProcess(
        exit_code=None if timed_out or code is None or code < 0 else code,
        stdout=captures[0].text(),
        stderr=captures[1].text(),
        timed_out=timed_out,
    )
