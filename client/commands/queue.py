"""The hub's shared task queue from the command line (docs/team.md).

`harness -p TASK --queue [--repo URL --ref REF]` (`submit`, called by the
one-shot) puts the task in the hub through the local daemon and prints its id
on standard output (`id=$(harness -p ... --queue)`), and on standard error
where it runs and how to follow it. `harness queue [list] [--json] [-n N]`
shows the newest tasks; `harness queue show ID` one task and its patch;
`harness queue cancel ID` cancels a queued task at once and asks a running
task's runner to stop it. No hub configured: one line naming the `hub` key,
exit 5; the hub away: its line, exit 4; the daemon away: exit 4.
"""

from __future__ import annotations

import sys

from coding_harness.protocol import errors, exit_codes, methods, paths
from coding_harness.protocol.client import Connection, DaemonUnreachable
from coding_harness.protocol.version import __version__

# typing is for the type checker only: importing it costs a one-shot run ~3 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket
    from collections.abc import Callable
    from typing import Any

    from coding_harness.client.args import OneShotOptions

CLIENT = "harness queue"


def _say(text: str) -> None:
    print(f"harness: {text}", file=sys.stderr)


def _exit_code(exc: errors.RpcError) -> int:
    """No hub: 5 (set one up); the hub away: 4 (as the daemon away is); bad input: 5."""
    data = exc.data if isinstance(exc.data, dict) else {}
    if data.get("hub") == "unreachable":
        return exit_codes.DAEMON_UNREACHABLE
    if isinstance(exc, errors.InvalidParams | errors.InvalidRequest):
        return exit_codes.BAD_ARGUMENTS
    return exit_codes.MODEL_ERROR


def _with_daemon(work: Callable[[Connection], int], early: socket | None = None) -> int:
    try:
        if early is not None:
            conn = Connection(early, paths.socket_path())
        else:
            from coding_harness.client.session.launcher import connect_or_start

            conn = connect_or_start(paths.socket_path())
        with conn:
            conn.initialize(CLIENT, __version__, approvals=False)
            return work(conn)
    except DaemonUnreachable as exc:
        _say(f"cannot reach the daemon: {exc}")
        return exit_codes.DAEMON_UNREACHABLE
    except errors.RpcError as exc:
        _say(exc.message)
        return _exit_code(exc)
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED


def submit(options: OneShotOptions, prompt: str, early: socket | None = None) -> int:
    """`harness -p TASK --queue`: queue it in the hub; print its id."""
    import os

    params: dict[str, Any] = {"text": prompt, "cwd": options.cwd or os.getcwd()}  # noqa: PTH109
    if options.repo:
        params["repo"] = options.repo
    if options.ref:
        params["ref"] = options.ref

    def work(conn: Connection) -> int:
        queued = conn.request(methods.QUEUE_SUBMIT, params)
        if options.output_format != "text":
            import json

            print(json.dumps(queued), flush=True)
            return exit_codes.OK
        print(queued["task"], flush=True)
        where = f"{queued['repo']}@{queued['ref']}"
        runners = queued.get("accepted_by") or []
        taken = (
            f"runners that take it: {', '.join(runners)}"
            if runners
            else "no runner with free slots accepts this repository now: it waits for one"
        )
        _say(
            f"queued as task {queued['task']} in hub {queued['hub']} ({where}); {taken}\n"
            f"  see it:     harness queue\n"
            f"  cancel it:  harness queue cancel {queued['task']}"
        )
        return exit_codes.OK

    return _with_daemon(work, early)


def main(argv: list[str]) -> int:
    import argparse

    cmd = argparse.ArgumentParser(
        prog="harness queue",
        description="The hub's shared task queue: list tasks, show one, cancel one.",
    )
    cmd.add_argument("action", nargs="?", default="list", choices=("list", "show", "cancel"))
    cmd.add_argument("task", nargs="?", metavar="ID", help="the task's id (show, cancel)")
    cmd.add_argument("--json", action="store_true", help="the hub's answer as JSON")
    cmd.add_argument("-n", "--limit", type=int, default=50, help="list at most N tasks")
    try:
        args = cmd.parse_args(argv)
    except SystemExit as exc:
        return exit_codes.OK if exc.code == 0 else exit_codes.BAD_ARGUMENTS
    if args.action != "list" and not (args.task or "").isdigit():
        _say(f"queue {args.action} needs a task's id: harness queue {args.action} ID")
        return exit_codes.BAD_ARGUMENTS
    if args.action == "cancel":
        return _with_daemon(lambda conn: _cancel(conn, int(args.task), args.json))
    if args.action == "show":
        return _with_daemon(lambda conn: _show(conn, int(args.task), args.json))
    return _with_daemon(lambda conn: _list(conn, max(1, args.limit), args.json))


def _cancel(conn: Connection, task: int, as_json: bool) -> int:
    answer = conn.request(methods.QUEUE_CANCEL, {"task": task})
    if as_json:
        import json

        print(json.dumps(answer))
    elif answer["state"] == "cancelled":
        print(f"task {task}: cancelled")
    else:
        print(f"task {task}: its runner was asked to stop it (harness queue shows when it did)")
    return exit_codes.OK


def _list(conn: Connection, limit: int, as_json: bool) -> int:
    answer = conn.request(methods.QUEUE_LIST, {"limit": limit})
    if as_json:
        import json

        print(json.dumps(answer))
        return exit_codes.OK
    from coding_harness.client.commands.queue_table import table

    tasks = answer["tasks"]
    if not tasks:
        print(f"no tasks in hub {answer['hub']}; queue one: harness -p TASK --queue")
        return exit_codes.OK
    for line in table(tasks, float(answer["now"])):
        print(line)
    return exit_codes.OK


def _show(conn: Connection, task: int, as_json: bool) -> int:
    answer = conn.request(methods.QUEUE_LIST, {"task": task})
    row = answer["tasks"][0]
    if as_json:
        import json

        print(json.dumps(row))
        return exit_codes.OK
    from coding_harness.client.commands.queue_table import details

    for line in details(row, float(answer["now"])):
        print(line, file=sys.stderr)
    patch = row.get("patch") or ""
    sys.stdout.write(patch)
    if not patch:
        _say("no patch: the task changed nothing (or has not finished)")
    return exit_codes.OK
