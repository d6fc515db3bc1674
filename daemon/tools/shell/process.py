"""Running one external program for a tool: bounded in time, output and reach.

The child gets its own session and process group, no standard input and an
environment built from an allow-list, never from the daemon's whole
environment, plus the marker of its command (`containment.py`). On a timeout
or a cancellation the whole group is killed, so a recipe that left
`sleep 1000 &` behind cannot keep the turn waiting; what the program started
and left running is killed when it ends, too, including what left the group
(`setsid`, a double fork): the command keeper ends those. Output goes through
a pipe this module owns (not asyncio's), so a grandchild that keeps the pipe
open cannot delay noticing that the program itself has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.tools.shell.containment import Command, CommandKeeper, command_keeper

_CHUNK = 65536
_TERM_GRACE = 0.3
# After SIGKILL the process is certain to end; this long is allowed for it to be
# reaped on a busy machine (it returns as soon as it is), so no process object is
# dropped while it still runs.
_REAP_LIMIT = 5.0
_DRAIN_GRACE = 0.3
_CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


@dataclass(kw_only=True, slots=True, frozen=True)
class ProcessResult:
    exit_code: int | None  # None when the program was killed
    output: str
    timed_out: bool


# What a tool command may see of the daemon's environment: an allow-list, so a
# variable nobody thought of (DATABASE_URL, MY_CREDENTIALS) stays out. An outer
# make's MAKEFLAGS and friends are not on it, so they cannot steer our `make`.
PASSED_VARIABLES = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "TMPDIR", "SHELL",
        "TZ", "COLORTERM", "NO_COLOR",
        # Toolchains: where they live and how they build.
        "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "CONDA_PREFIX", "UV_CACHE_DIR",
        "GOPATH", "GOROOT", "GOCACHE", "GOMODCACHE", "GOFLAGS", "CARGO_HOME",
        "RUSTUP_HOME", "RUSTFLAGS", "JAVA_HOME", "MAVEN_HOME", "GRADLE_HOME",
        "NODE_PATH", "NVM_DIR", "CC", "CXX", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
        "PKG_CONFIG_PATH", "LD_LIBRARY_PATH",
        "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
    }
)  # fmt: skip
PASSED_PREFIXES = ("LC_",)


def tool_environment(
    drop: Iterable[str] = (),
    passed: Iterable[str] = (),
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment of a tool command: the allow-list plus `passed` (the user's
    `agent.env_pass`), from `base` (default: the daemon's own), without any name in
    `drop` (every secret variable the session knows of, whatever it is called)."""
    source = os.environ if base is None else base
    wanted = PASSED_VARIABLES | frozenset(passed)
    dropped = frozenset(drop)
    return {
        name: value
        for name, value in source.items()
        if (name in wanted or name.startswith(PASSED_PREFIXES)) and name not in dropped
    }


class OutputCapture:
    """Keeps the head and the tail of a byte stream and counts its characters."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._keep = cap * 4  # bytes enough for `cap` characters of any width
        self._head = bytearray()
        self._tail = bytearray()
        self._dropped = False
        self._chars = 0

    def feed(self, data: bytes) -> None:
        self._chars += len(data.translate(None, _CONTINUATION_BYTES))
        room = self._keep - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        self._tail += data
        if len(self._tail) > self._keep:
            del self._tail[: len(self._tail) - self._keep]
            self._dropped = True

    def text(self) -> str:
        if not self._dropped:
            return shorten(bytes(self._head + self._tail).decode("utf-8", "replace"), self.cap)
        half = self.cap // 2
        head = self._head.decode("utf-8", "replace")[:half]
        tail = self._tail.decode("utf-8", "replace")[-(self.cap - half) :]
        return _join(head, tail, self._chars - len(head) - len(tail))


def shorten(text: str, cap: int) -> str:
    """`text` itself, or its head and tail with a note of how much was left out."""
    if len(text) <= cap:
        return text
    half = cap // 2
    return _join(text[:half], text[len(text) - (cap - half) :], len(text) - cap)


def _join(head: str, tail: str, omitted: int) -> str:
    return f"{head}\n... {max(omitted, 0)} characters omitted ...\n{tail}"


# `timeout` is a parameter on purpose: on expiry the whole process group is killed
# and reaped, which a caller's asyncio.timeout() around this call would not do.
async def run_process(
    argv: list[str],
    cwd: Path,
    timeout: float,  # noqa: ASYNC109
    output_cap: int = 20000,
    env: Mapping[str, str] | None = None,
    keeper: CommandKeeper | None = None,
) -> ProcessResult:
    """Run `argv` in `cwd` with no shell; stop it and its group after `timeout` s.

    `env` is the child's whole environment (default: `tool_environment()`);
    `keeper` tracks what the command starts (default: this process's).
    """
    keeper = keeper or command_keeper()
    command = keeper.begin()
    try:
        return await _run_command(argv, cwd, timeout, output_cap, env, keeper, command)
    finally:
        keeper.end(command)


async def _run_command(
    argv: list[str],
    cwd: Path,
    timeout: float,  # noqa: ASYNC109
    output_cap: int,
    env: Mapping[str, str] | None,
    keeper: CommandKeeper,
    command: Command,
) -> ProcessResult:
    child_env = dict(tool_environment() if env is None else env)
    name, token = command.environment_entry()
    child_env[name] = token
    read_fd, write_fd = os.pipe()
    try:
        proc = await _spawn(argv, cwd, write_fd, child_env, keeper)
    except OSError as exc:
        os.close(read_fd)
        output = f"cannot run {argv[0]}: {exc.strerror or exc}\n"
        return ProcessResult(exit_code=127, output=output, timed_out=False)
    finally:
        os.close(write_fd)
    keeper.started(command, proc.pid)
    capture = OutputCapture(output_cap)
    try:
        transport, pump = await start_pump(read_fd, capture)
    except BaseException:
        signal_group(proc, signal.SIGKILL)
        raise
    try:
        timed_out = await supervise(proc, pump, timeout)
    finally:
        pump.cancel()
        transport.close()
        release(proc)
    code = proc.returncode
    exit_code = None if timed_out or code is None or code < 0 else code
    return ProcessResult(exit_code=exit_code, output=capture.text(), timed_out=timed_out)


async def _spawn(
    argv: list[str], cwd: Path, write_fd: int, env: dict[str, str], keeper: CommandKeeper
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=write_fd,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
        env=env,
        preexec_fn=keeper.child_setup(),
    )


async def start_pump(
    read_fd: int, capture: OutputCapture
) -> tuple[asyncio.ReadTransport, asyncio.Task[None]]:
    """A task feeding `capture` from the pipe `read_fd`, which it owns (closed on
    failure), and the pipe's transport (the caller closes it)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK, loop=loop)
    pipe = os.fdopen(read_fd, "rb", buffering=0)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader, loop=loop), pipe
        )
    except BaseException:
        pipe.close()
        raise
    return transport, asyncio.create_task(_pump(reader, capture))


async def _pump(reader: asyncio.StreamReader, capture: OutputCapture) -> None:
    while chunk := await reader.read(_CHUNK):
        capture.feed(chunk)


async def supervise(
    proc: asyncio.subprocess.Process, drained: Awaitable[object], limit: float
) -> bool:
    """Wait for the program, then for its output (`drained`: the pumps reading it);
    returns True when it had to be stopped for time. Its whole group is killed after,
    or at once when the caller is cancelled."""
    exited = asyncio.create_task(proc.wait())
    drained = asyncio.ensure_future(drained)
    try:
        finished = await settle(exited, limit)
        if finished:
            await settle(drained, _DRAIN_GRACE)
            signal_group(proc, signal.SIGKILL)  # nothing it started may outlive it
        else:
            await _stop_group(proc, exited)
        await settle(drained, _DRAIN_GRACE)
        return not finished
    except asyncio.CancelledError:
        signal_group(proc, signal.SIGKILL)
        await settle(exited, _REAP_LIMIT)
        raise
    finally:
        exited.cancel()


async def _stop_group(proc: asyncio.subprocess.Process, exited: Awaitable[int]) -> None:
    """SIGTERM to the whole group, a short grace, then SIGKILL to what is left."""
    signal_group(proc, signal.SIGTERM)
    await settle(exited, _TERM_GRACE)
    signal_group(proc, signal.SIGKILL)
    await settle(exited, _REAP_LIMIT)


def release(proc: asyncio.subprocess.Process) -> None:
    """Close an exited program's transport now. asyncio closes it one loop iteration
    after the exit is seen, which a loop that stops at once (a one-off `asyncio.run`)
    never runs, leaving a ResourceWarning for whatever runs at the next collection."""
    transport = getattr(proc, "_transport", None)
    if proc.returncode is not None and transport is not None:
        transport.close()


def signal_group(proc: asyncio.subprocess.Process, signum: int) -> None:
    with contextlib.suppress(OSError):  # the group is gone already
        os.killpg(proc.pid, signum)


async def settle(aw: Awaitable[object], seconds: float) -> bool:
    """Wait up to `seconds` for a task without cancelling it; True when done."""
    task = asyncio.ensure_future(aw)
    done, _ = await asyncio.wait({task}, timeout=max(seconds, 0))
    return bool(done)
