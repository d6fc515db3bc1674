"""`@PATH` in a task: the file is attached to it, as Claude Code and aider users expect.

A word that starts with `@` and names a regular file (relative to the session's
folder, or absolute, or under `~`) has the file's text added after the task,
inside a `<file path="...">` frame; the `@PATH` stays in the task where it was
typed, so the model reads what it refers to. The file is read with the user's
own rights (it is the user who attached it). A word that names no file is left
as it was typed (an e-mail address, a decorator); a file too large or not text
is not attached, and the user is told in one line. Tab completes the path
(`completer.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

# A mention: `@` at the start of a word; trailing punctuation is not part of the path.
MENTION = re.compile(r"(?<!\S)@(\S+)")
TRAILING = ",.;:!?)]}'\""
ATTACH_LIMIT_BYTES = 256 * 1024


def mentioned_paths(text: str, cwd: Path) -> list[tuple[str, Path]]:
    """(as typed, path) for each `@PATH` in `text` that names a regular file, once each."""
    found: dict[Path, str] = {}
    for match in MENTION.finditer(text):
        typed = match.group(1)
        for candidate in (typed, typed.rstrip(TRAILING)):
            path = _path(candidate, cwd)
            if path is not None and path.is_file():
                found.setdefault(path, candidate)
                break
    return [(typed, path) for path, typed in found.items()]


def _path(typed: str, cwd: Path) -> Path | None:
    if not typed:
        return None
    try:
        path = Path(typed).expanduser()
    except RuntimeError:  # `~nobody`
        return None
    return path if path.is_absolute() else cwd / path


def attach_mentions(text: str, cwd: Path, say: Callable[[str], None]) -> str:
    """`text` with the files its `@PATH`s name appended; `say` tells the user what was
    attached, or why a file was not."""
    frames: list[str] = []
    for typed, path in mentioned_paths(text, cwd):
        try:
            size = path.stat().st_size
            if size > ATTACH_LIMIT_BYTES:
                say(f"@{typed} not attached: {size:,} bytes, over {ATTACH_LIMIT_BYTES >> 10} KiB")
                continue
            body = path.read_bytes().decode("utf-8")
        except UnicodeDecodeError:
            say(f"@{typed} not attached: it is not UTF-8 text")
            continue
        except OSError as exc:
            say(f"@{typed} not attached: {exc.strerror or exc}")
            continue
        frames.append(f'<file path="{typed}">\n{body.rstrip()}\n</file>')
        lines = body.count("\n") + (0 if body.endswith("\n") or not body else 1)
        say(f"attached {typed} ({lines} lines)")
    if not frames:
        return text
    return text + "\n\n" + "\n\n".join(frames)
