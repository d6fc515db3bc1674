"""The last word on a failure: one line and an exit code, never a traceback.

Each command handles the failures it expects where it knows the most; what
still escapes a command reaches `run_guarded`, which says it in one line on
standard error, naming the fix where one is known, and returns the contract's
exit code: 4 when the daemon cannot be reached, 5 for bad input (text that is
not UTF-8 or nested too deeply to parse, a request the daemon refuses as
invalid), 130 for Ctrl-C, 1 for anything else; a file in the state folder
is named with the state folder's fix. `--debug` adds the traceback. A
reader that goes away (`harness daemon logs | head`) ends the command
quietly, as it would a shell tool.

It also makes the standard streams safe to use: a closed one is replaced by
/dev/null, and a stdout whose encoding cannot spell every character (a
latin-1 locale, PYTHONIOENCODING=ascii) writes `\\xe9` escapes instead of
failing halfway through a reply.
"""

from __future__ import annotations

import os
import sys

from coding_harness.protocol import exit_codes

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from coding_harness.protocol.errors import RpcError

# Exit status of a command whose reader went away: what a shell reports for SIGPIPE.
BROKEN_PIPE = 128 + 13


def prepare_streams() -> None:
    """Closed streams become /dev/null; stdout escapes what its encoding cannot spell."""
    # Each replacement lives as long as the process, as the stream it stands for would.
    if sys.stdin is None:
        sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115, PTH123
    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115, PTH123
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115, PTH123
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    if encoding not in ("utf8", "") and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="backslashreplace")


def run_guarded(body: Callable[[], int], *, debug: bool = False) -> int:
    """`body()`'s exit code, or the code and one line for a failure that escaped it."""
    try:
        return body()
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    except BrokenPipeError:
        _quiet_stdout()
        return BROKEN_PIPE
    except Exception as exc:
        said = _explain(exc)
        if said is None:
            raise  # a bug: its traceback is what a report needs
        return _say(*said, debug)


def _explain(exc: Exception) -> tuple[str, int] | None:
    """The line and exit code for a failure of the environment or the input; None for a bug.

    The protocol modules are imported here, not at the top, so `harness
    --version` and `--help` do not pay for them.
    """
    from coding_harness.protocol import errors
    from coding_harness.protocol.client import DaemonUnreachable

    if isinstance(exc, DaemonUnreachable):
        return f"cannot reach the daemon: {exc}", exit_codes.DAEMON_UNREACHABLE
    if isinstance(exc, errors.RpcError):
        return exc.message, rpc_exit_code(exc)
    if isinstance(exc, RecursionError):
        text = "a file or an answer is nested too deeply to read (a config file?)"
        return f"{text}; --debug shows where", exit_codes.BAD_ARGUMENTS
    if isinstance(exc, UnicodeError):
        text = (
            f"some text is not valid UTF-8 ({exc}); check the arguments, the folder's name "
            "and the environment variables the command reads"
        )
        return text, exit_codes.BAD_ARGUMENTS
    if isinstance(exc, OSError):
        return _os_problem(exc), exit_codes.MODEL_ERROR
    return None


def rpc_exit_code(exc: RpcError) -> int:
    """The exit code for a request the daemon refused: 5 bad input, 4 unavailable, else 1."""
    from coding_harness.protocol import errors

    if isinstance(exc, errors.InvalidParams | errors.InvalidRequest | errors.SessionNotFound):
        return exit_codes.BAD_ARGUMENTS
    unavailable = errors.ServerBusy | errors.ShuttingDown | errors.UnsupportedProtocol
    if isinstance(exc, unavailable | errors.HubUnavailable):
        return exit_codes.DAEMON_UNREACHABLE
    return exit_codes.MODEL_ERROR


def _os_problem(exc: OSError) -> str:
    reason = exc.strerror or str(exc)
    if exc.filename is None:
        return reason
    from pathlib import Path

    from coding_harness.protocol import paths

    state = paths.state_dir()
    if Path(os.fsdecode(exc.filename)).is_relative_to(state):
        return str(paths.state_error(state, exc))
    return f"cannot use {exc.filename} ({reason}); check that it exists and is yours"


def _say(text: str, code: int, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc(file=sys.stderr)
    from coding_harness.client.render.sanitize import visible  # the message may quote a daemon

    print(f"harness: {visible(text)}", file=sys.stderr)
    return code


def _quiet_stdout() -> None:
    """The reader is gone: point stdout at /dev/null so the exit flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
