"""Picking a session to go back to: `harness -c`, `harness --resume [ID]` and the
REPL's `/resume`.

`-c` takes this folder's most recently used session (none: one line, exit 5);
`--resume ID` that session; bare `--resume` lists them and, at a terminal, asks
which (off one it lists them and exits 0). Either then opens the REPL on it, or,
with a task (`-p`), runs the task there.

The sessions are listed this folder's first, then the others, newest first in
each, numbered in that order: a number, the short id (the part of the id after
the timestamp), how long ago it was used, its state, its cost, its title (the
first task) and, for another folder's, that folder. A session is named by its
number in that list, its full id, its short id, or a prefix of either that
fits one session (`resolve`; the daemon accepts the same names).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from coding_harness.client.render.durations import age
from coding_harness.client.render.sanitize import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from coding_harness.client.args import OneShotOptions

NUMBER_DIGITS = 3  # a number longer than this is read as an id's prefix


class NoSuchSession(Exception):
    """A name that fits no session, or several; the message is one line for the user."""


def short_id(full: str) -> str:
    return full.rsplit("-", 1)[-1]


def ordered(sessions: list[dict[str, Any]], cwd: str) -> list[dict[str, Any]]:
    """This folder's sessions, then the others, the most recently used first in each."""
    newest = sorted(sessions, key=lambda s: -float(s.get("last_activity") or 0))
    return [s for s in newest if s.get("cwd") == cwd] + [s for s in newest if s.get("cwd") != cwd]


def latest_here(sessions: list[dict[str, Any]], cwd: str) -> str | None:
    """The most recently used session of the folder `cwd` (None: it has none)."""
    mine = [s for s in ordered(sessions, cwd) if s.get("cwd") == cwd]
    return str(mine[0]["session"]) if mine else None


def resolve(sessions: list[dict[str, Any]], wanted: str, cwd: str) -> str:
    """The full id `wanted` names (see the module's docstring), or NoSuchSession."""
    listed = ordered(sessions, cwd)
    if wanted.isdigit() and len(wanted) <= NUMBER_DIGITS and 0 < int(wanted) <= len(listed):
        return str(listed[int(wanted) - 1]["session"])
    ids = [str(s["session"]) for s in listed]
    if wanted in ids:
        return wanted
    fits = [i for i in ids if i.startswith(wanted) or short_id(i).startswith(wanted)]
    if len(fits) == 1:
        return fits[0]
    shown = one_line(wanted, 40)
    if fits:
        raise NoSuchSession(f"{shown!r} fits {len(fits)} sessions; give more of the id")
    raise NoSuchSession(f"no session {shown!r}; `harness --resume` lists them")


def choice_lines(sessions: list[dict[str, Any]], cwd: str, current: str | None = None) -> list[str]:
    """One line per session, numbered (`current` marked with *)."""
    now = time.time()
    lines = []
    for number, s in enumerate(ordered(sessions, cwd), 1):
        cost = s.get("cost_usd")
        money = "-" if cost is None else f"${float(cost):.4f}"
        title = one_line(str(s.get("title") or "(no task yet)"), 60)
        where = "" if s.get("cwd") == cwd else f"  [{one_line(str(s.get('cwd')), 60)}]"
        mark = "*" if s.get("session") == current else " "
        ago = age(max(now - float(s.get("last_activity") or now), 0)) + " ago"
        lines.append(
            f"{mark}{number:>3}. {one_line(short_id(str(s['session'])), 12):<8} {ago:>8}  "
            f"{one_line(str(s.get('state')), 8):<8} {money:>9}  {title}{where}"
        )
    return lines


def print_choices(sessions: list[dict[str, Any]], cwd: str, current: str | None = None) -> None:
    if not sessions:
        print("no sessions yet")
        return
    for line in choice_lines(sessions, cwd, current):
        print(line)


def pick(sessions: list[dict[str, Any]], cwd: str) -> str | None:
    """`harness --resume` with no id: list the sessions and ask which (at a terminal);
    the full id, or None when there is none to pick or nothing was picked."""
    print_choices(sessions, cwd)
    if not sessions:
        return None
    if not sys.stdin.isatty():
        print("harness --resume ID (a number above, or an id) opens one", file=sys.stderr)
        return None
    try:
        answer = input("resume which? (number or id; Enter: the first) ").strip()
    except (EOFError, KeyboardInterrupt):
        print(file=sys.stderr)
        return None
    return resolve(sessions, answer or "1", cwd)


def here(cwd: str | None = None) -> str:
    return str(Path(cwd or Path.cwd()).expanduser().resolve())


def list_sessions() -> list[dict[str, Any]]:
    """`session.list`, from the daemon (started when none runs)."""
    from coding_harness.client.session.launcher import connect_or_start
    from coding_harness.protocol import methods, paths
    from coding_harness.protocol.version import __version__

    with connect_or_start(paths.socket_path()) as conn:
        conn.initialize("harness-resume", __version__, approvals=False)
        sessions: list[dict[str, Any]] = conn.request(methods.SESSION_LIST)["sessions"]
    return sessions


def resume_session(options: OneShotOptions) -> int | None:
    """`-c` and `--resume [ID]`: set `options.session` to the session meant and return
    None to go on (the REPL, or the task given); or an exit code to stop with."""
    from coding_harness.protocol import exit_codes
    from coding_harness.protocol.client import DaemonUnreachable

    if options.session:
        print(
            "harness: --session, -c and --resume each name the session; pass one", file=sys.stderr
        )
        return exit_codes.BAD_ARGUMENTS
    if options.resume:  # an id, short id or prefix: the daemon resolves it
        options.session = options.resume
        return None
    cwd = here(options.cwd)
    try:
        sessions = list_sessions()
        chosen = latest_here(sessions, cwd) if options.continued else pick(sessions, cwd)
    except DaemonUnreachable as exc:
        print(f"harness: cannot reach the daemon: {exc}", file=sys.stderr)
        return exit_codes.DAEMON_UNREACHABLE
    except NoSuchSession as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if chosen is None and options.continued:
        print(f"harness: no session in {cwd} to continue; `harness` starts one", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if chosen is None:
        return exit_codes.OK
    options.session = chosen
    return None
