"""Telling the user, outside the terminal, that an approval is waiting, or that a
background turn finished or failed.

`notify_waiting` sends one `WaitingApproval` the ways the `notify` settings
allow: a desktop notification (`notify-send`, or `osascript` on macOS) naming
the folder, the session's title and the file, and the user's `notify.command`,
run by `/bin/sh` with the request as JSON on standard input (so it can be
forwarded to a phone or a chat). `notify_ended` sends a `TurnEnded` the same
two ways, at once, when a turn submitted to run in the background ends
(`announce_ended` starts it from the session's event); the JSON's `event`
says which it is: `approval` or `turn.finished`. Each program runs in a
process group of its own, with the tool allow-list of the environment (never
the daemon's secrets), at most `SEND_LIMIT` seconds, after which the group is
killed (and with the daemon: parent-death signal). Each is known to the
command keeper as the daemon's own child, so it is never swept as a tool
command's leftover. What it printed goes to the daemon log; a failure is
logged, never raised. The terminal bell is not here: each client times the
wait itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from coding_harness.daemon.config.notify_settings import NotifySettings
from coding_harness.daemon.sessions.activity import FinishedTurn
from coding_harness.daemon.tools.shell.containment import command_keeper
from coding_harness.daemon.tools.shell.process import release, shorten, tool_environment

log = logging.getLogger(__name__)

SEND_LIMIT = 10.0
LOGGED_CHARS = 2000
# What a desktop notifier needs to find the user's display session.
DESKTOP_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR")
_APPLESCRIPT = (
    "on run argv",
    "display notification (item 1 of argv) with title (item 2 of argv)",
    "end run",
)


@dataclass(frozen=True, kw_only=True, slots=True)
class WaitingApproval:
    session: str
    request: str
    kind: str
    path: str
    summary: str
    folder: Path
    waited_seconds: float
    # Seconds left before `agent.approval_timeout` answers "no"; None: it waits.
    times_out_in: float | None
    session_title: str = ""

    @property
    def answer(self) -> str:
        return f"harness approve {self.session}"

    def payload(self) -> dict[str, object]:
        """What `notify.command` reads on standard input."""
        return {
            "event": "approval",
            "session": self.session,
            "title": self.session_title,
            "approval": self.request,
            "kind": self.kind,
            "path": self.path,
            "summary": self.summary,
            "folder": str(self.folder),
            "waited_seconds": round(self.waited_seconds, 1),
            "times_out_in_seconds": self.times_out_in,
            "answer": self.answer,
            "message": self.message(),
        }

    def title(self) -> str:
        return f"harness: approval waiting in {self.folder.name or self.folder}"

    def message(self) -> str:
        what = f"{self.path}: {self.summary}" if self.path else self.summary
        if self.session_title:
            what = f"{self.session_title}: {what}"
        if self.times_out_in is None:
            limit = "it waits until answered"
        else:
            limit = f'unanswered, it counts as "no" in {self.times_out_in:.0f} s'
        return f"{what}. Answer with `{self.answer}`; {limit}."


@dataclass(frozen=True, kw_only=True, slots=True)
class TurnEnded:
    """A background turn that finished (exit code 0) or failed."""

    session: str
    session_title: str
    turn: str
    exit_code: int
    reply: str
    folder: Path

    @property
    def state(self) -> str:
        return "done" if self.exit_code == 0 else "failed"

    def payload(self) -> dict[str, object]:
        return {
            "event": "turn.finished",
            "session": self.session,
            "title": self.session_title,
            "turn": self.turn,
            "state": self.state,
            "exit_code": self.exit_code,
            "reply": self.reply,
            "folder": str(self.folder),
            "logs": f"harness logs {self.session}",
            "message": self.message(),
        }

    def title(self) -> str:
        said = "done" if self.exit_code == 0 else f"failed (exit {self.exit_code})"
        return f"harness: {said}: {self.session_title or self.folder.name or self.folder}"

    def message(self) -> str:
        reply = " ".join(self.reply.split())
        return f"{self.folder}: {reply or '(no reply)'} See `harness logs {self.session}`."


Notice = WaitingApproval | TurnEnded
# The session's `notify` settings, read when a notice goes.
Settings = Callable[[], NotifySettings]


_SENDING: set[asyncio.Task[None]] = set()


def announce_ended(
    session: str, folder: Path, title: str, ended: FinishedTurn, settings: Settings
) -> None:
    """Send the notifications of a background turn's end, in the background."""
    notice = TurnEnded(session=session, session_title=title, turn=ended.turn,
                       exit_code=ended.exit_code, reply=ended.reply, folder=folder)  # fmt: skip
    try:
        task = asyncio.get_running_loop().create_task(notify_ended(notice, settings))
    except RuntimeError:  # no loop: nobody to tell (never in the daemon)
        return
    _SENDING.add(task)
    task.add_done_callback(_SENDING.discard)


async def notify_ended(notice: TurnEnded, settings: Settings) -> None:
    try:
        chosen = settings()
    except Exception:  # the config cannot be read now: nothing is sent
        log.exception("the notify settings of %s could not be read", notice.session)
        return
    log.info("turn %s of session %s %s: notifying", notice.turn, notice.session, notice.state)
    await send_notice(notice, chosen)


async def notify_waiting(waiting: WaitingApproval, settings: NotifySettings) -> None:
    await send_notice(waiting, settings)


async def send_notice(notice: Notice, settings: NotifySettings) -> None:
    """Send the desktop notification and run the command, side by side."""
    sends = []
    desktop = desktop_argv(notice, settings.desktop)
    if desktop is not None:
        sends.append(run_limited(desktop, None, notice.folder, "desktop notification"))
    if settings.command:
        data = json.dumps(notice.payload()).encode() + b"\n"
        argv = ["/bin/sh", "-c", settings.command]
        sends.append(run_limited(argv, data, notice.folder, "notify.command"))
    await asyncio.gather(*sends)


def desktop_argv(waiting: Notice, mode: str) -> list[str] | None:
    """The notifier to run for `mode` ("auto", "on", "off"), or None."""
    if mode == "off":
        return None
    if sys.platform == "darwin" and shutil.which("osascript"):
        script = [part for line in _APPLESCRIPT for part in ("-e", line)]
        return ["osascript", *script, waiting.message(), waiting.title()]
    notifier = shutil.which("notify-send")
    if notifier is None:
        if mode == "on":
            log.warning("notify.desktop is on, but neither notify-send nor osascript is on PATH")
        return None
    if mode == "auto" and not any(os.environ.get(name) for name in DESKTOP_VARIABLES[:3]):
        return None  # no display session to show it in
    return [notifier, "--app-name=harness", waiting.title(), waiting.message()]


async def run_limited(argv: list[str], stdin: bytes | None, cwd: Path, what: str) -> None:
    """Run `argv` for at most SEND_LIMIT s, its output to the log; never raises."""
    env = tool_environment(passed=DESKTOP_VARIABLES)
    keeper = command_keeper()
    try:
        with keeper.starting_own() as child:  # ours: never swept as a tool's leftover
            name, marker = child.environment_entry()
            proc = await asyncio.create_subprocess_exec(
                *argv,
                cwd=cwd,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env={**env, name: marker},
                preexec_fn=keeper.child_setup(),
            )
            keeper.own(proc.pid)
    except OSError as exc:
        log.warning("%s: cannot run %s: %s", what, argv[0], exc.strerror or exc)
        return
    try:
        output, _ = await asyncio.wait_for(proc.communicate(stdin), SEND_LIMIT)
    except TimeoutError:
        await _kill(proc)
        log.warning("%s: still running after %g s, so it was killed", what, SEND_LIMIT)
        return
    except BaseException:
        await _kill(proc)
        raise
    text = shorten(output.decode("utf-8", "replace").strip(), LOGGED_CHARS)
    if proc.returncode == 0:
        log.info("%s: sent%s", what, f"; it printed: {text}" if text else "")
    else:
        log.warning("%s: exit status %s; it printed: %s", what, proc.returncode, text or "nothing")


async def _kill(proc: asyncio.subprocess.Process) -> None:
    """Kill the program's whole process group and reap it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(proc.wait(), SEND_LIMIT)
    release(proc)
