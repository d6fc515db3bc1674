"""`harness daemon logs [-n N] [-f]`: the end of the daemon's log, or follow it.

The log is `daemon.log` in the state folder (or the path the discovery
record names), rotated by size by the daemon into `daemon.log.1` .. `.3`.
`-n N` prints the last N lines, reaching into the rotated files when the
current one is short; `-f` keeps printing what is appended, reopening the
file when the daemon rotates it, until Ctrl-C. A log that exists but cannot
be read (its permissions, a folder in its place) is one line and exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import BinaryIO, NoReturn, cast

from coding_harness.client.render.sanitize import VisibleBytesWriter
from coding_harness.protocol import discovery, exit_codes, paths

DEFAULT_LINES = 50
BACKUPS = 3
FOLLOW_POLL = 0.2
USAGE = "usage: harness daemon logs [-n N] [-f]"
BLOCK = 65536


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def main(argv: list[str]) -> int:
    parser = _Parser(prog="harness daemon logs", add_help=False)
    parser.add_argument("-n", "--lines", type=int, default=DEFAULT_LINES)
    parser.add_argument("-f", "--follow", action="store_true")
    try:
        args = parser.parse_args(argv)
    except ValueError as exc:
        print(f"harness daemon logs: {exc}\n{USAGE}", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    if args.lines < 0:
        print("harness daemon logs: -n must be 0 or more", file=sys.stderr)
        return exit_codes.BAD_ARGUMENTS
    path = log_path()
    if not path.exists() and not args.follow:
        print(f"no daemon log yet at {path}", file=sys.stderr)
        return exit_codes.OK
    problem = unreadable(path)
    if problem:
        print(f"harness daemon logs: {problem}", file=sys.stderr)
        return exit_codes.MODEL_ERROR
    # One measured end for both: the tail stops there and the follow starts there.
    end = _identity(path)[1] or 0
    out = cast(BinaryIO, VisibleBytesWriter(sys.stdout.buffer))  # log lines quote workspaces
    out.writelines(tail(path, args.lines, end=end))
    out.flush()
    if args.follow:
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a follow ends
            follow(path, out, offset=end)
    return exit_codes.OK


def log_path() -> Path:
    """The running daemon's log (from its record), else the default one."""
    try:
        record = discovery.read_record(discovery.record_path())
    except discovery.RecordError:
        record = None
    if record is not None and record.get("log_file"):
        return Path(str(record["log_file"]))
    return paths.state_dir() / "daemon.log"


def unreadable(path: Path) -> str | None:
    """Why the log at `path` cannot be read, or None (also when it does not exist yet)."""
    try:
        with path.open("rb"):
            return None
    except FileNotFoundError:
        return None
    except OSError as exc:
        return (
            f"cannot read {path} ({exc.strerror or exc}); it should be a file you can read: "
            "fix it, or remove it and run `harness daemon restart`"
        )


def tail(path: Path, count: int, *, end: int | None = None) -> list[bytes]:
    """The last `count` lines of the log (up to byte `end`) and, if short, of older files."""
    lines = _last_lines(path, count, end)
    for older in (Path(f"{path}.{n}") for n in range(1, BACKUPS + 1)):
        if len(lines) >= count:
            break
        lines = _last_lines(older, count - len(lines)) + lines
    return lines


def _last_lines(path: Path, count: int, end: int | None = None) -> list[bytes]:
    if count <= 0:
        return []
    try:
        with path.open("rb") as file:
            size = file.seek(0, os.SEEK_END)
            end = size if end is None else min(end, size)
            start = end
            data = b""
            while start > 0 and data.count(b"\n") <= count:
                start = max(0, start - BLOCK)
                file.seek(start)
                data = file.read(end - start)
    except OSError:
        return []
    lines = data.splitlines(keepends=True)
    if start > 0:
        lines = lines[1:]  # the first one may be cut
    if lines and not lines[-1].endswith(b"\n"):
        lines[-1] += b"\n"
    return lines[-count:]


def follow(path: Path, out: BinaryIO, *, offset: int = 0, poll: float = FOLLOW_POLL) -> None:
    """Copy what `path` holds past `offset` to `out`, then what is appended; survive rotation."""
    file, inode = _open_at(path, offset)
    try:
        while True:
            chunk = file.read() if file else b""
            if chunk:
                out.write(chunk)
                out.flush()
                continue
            time.sleep(poll)
            current, size = _identity(path)
            if current is not None and current != inode:
                if file:
                    out.write(file.read())
                    file.close()
                file, inode = _open_at(path, 0)
            elif file and size is not None and size < file.tell():
                file.seek(0)  # truncated in place
    finally:
        if file:
            file.close()


def _open_at(path: Path, offset: int) -> tuple[BinaryIO | None, int | None]:
    try:
        file = path.open("rb")
    except OSError:  # absent, or replaced by something unreadable: wait for a new one
        return None, None
    file.seek(offset)
    return file, os.fstat(file.fileno()).st_ino


def _identity(path: Path) -> tuple[int | None, int | None]:
    """(inode, size) of the file now at `path`, or (None, None)."""
    try:
        info = path.stat()
    except OSError:
        return None, None
    return info.st_ino, info.st_size
