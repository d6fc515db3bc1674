"""Fakes and fixtures shared by the tool tests (no tests of its own).

The fakes are real implementations of the seams' Protocols: a sink that
records events and an approver that answers from a script.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

import psutil

from coding_harness.daemon.agent.seams import ApprovalDecision, ApprovalRequest, JSONObject
from coding_harness.daemon.tools.context import ToolContext
from coding_harness.daemon.tools.workspace import Workspace

T = TypeVar("T")


class RecordingSink:
    """An EventSink that keeps every event it is given."""

    def __init__(self) -> None:
        self.events: list[tuple[str, JSONObject]] = []

    def emit(self, kind: str, data: JSONObject) -> None:
        self.events.append((kind, data))

    def of_kind(self, kind: str) -> list[JSONObject]:
        return [data for seen, data in self.events if seen == kind]


class ScriptedApprover:
    """An Approver that answers from a list; asking beyond the script is a test failure."""

    def __init__(
        self,
        *answers: tuple[Literal["yes", "no", "skip"], str],
        before_answer: Callable[[ApprovalRequest], object] | None = None,
    ) -> None:
        self.answers = list(answers)
        self.requests: list[ApprovalRequest] = []
        self.before_answer = before_answer

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        self.requests.append(request)
        assert self.answers, f"unexpected approval request: {request.summary}"
        if self.before_answer is not None:  # e.g. someone edits the file meanwhile
            self.before_answer(request)
        decision, reason = self.answers.pop(0)
        return ApprovalDecision(decision=decision, reason=reason, client="test")


def make_ctx(
    root: Path, approver: ScriptedApprover | None = None, **flags: Any
) -> tuple[ToolContext, RecordingSink]:
    sink = RecordingSink()
    ctx = ToolContext(
        workspace=Workspace(root),
        approver=approver or ScriptedApprover(),
        events=sink,
        **flags,
    )
    return ctx, sink


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def process_gone(pid: int, within: float = 2.0) -> bool:
    """True when the process ends within `within` s (an unreaped zombie counts as ended).

    A killed process closes its files a moment before its state changes, so poll.
    """
    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)


def read_pid(path: Path) -> int:
    return int(path.read_text().strip())


def _has_content(path: Path) -> bool:
    return path.exists() and bool(path.read_text().strip())


async def wait_for_file(path: Path, seconds: float = 5.0) -> None:
    """Poll until the file has content."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await asyncio.to_thread(_has_content, path):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


SECRET = "TOP-SECRET-VALUE"


def build_project(tmp_path: Path) -> Path:
    """A workspace `proj` with hidden files and symlinks, next to things it must not reach.

    Every file the tools must never show contains `SECRET`.
    """
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("def main():\n    return 42\n")
    (root / "README.md").write_text("# Demo\n")
    (root / ".env").write_text(f"API_KEY={SECRET}\n")
    (root / "sub" / ".git").mkdir(parents=True)
    (root / "sub" / ".git" / "config").write_text(f"token = {SECRET}\n")
    (root / "sub" / "ok.txt").write_text("fine\n")
    (root / "backup~").write_text(f"{SECRET}\n")
    (root / "#lock#").write_text(f"{SECRET}\n")
    (root / "notes.txt").symlink_to(".env")
    (root / "link_passwd").symlink_to("/etc/passwd")
    outside_dir = tmp_path / "outside_dir"
    outside_dir.mkdir()
    (outside_dir / "secret.txt").write_text(f"{SECRET}\n")
    (root / "outlink").symlink_to(outside_dir, target_is_directory=True)
    (tmp_path / "outside.txt").write_text(f"{SECRET}\n")
    (tmp_path / "proj-evil").mkdir()
    (tmp_path / "proj-evil" / "secret.txt").write_text(f"{SECRET}\n")
    return root


# (path as the model types it, a fragment the refusal must contain)
ESCAPES: list[tuple[str, str]] = [
    ("../outside.txt", "outside the workspace"),
    ("/etc/passwd", "outside the workspace"),
    ("sub/../../outside.txt", "outside the workspace"),
    ("src/a\x00b", "NUL byte"),
    ("a/" * 2100 + "x", "longer than 4096 bytes"),
    ("link_passwd", "outside the workspace"),
    ("outlink/secret.txt", "outside the workspace"),
    ("outlink", "outside the workspace"),
    ("../proj-evil", "outside the workspace"),
    ("../proj-evil/secret.txt", "outside the workspace"),
    (".env", "hidden"),
    ("sub/.git/config", "hidden"),
    ("x/../.env", "hidden"),
    ("notes.txt", "hidden"),
    ("backup~", "hidden"),
    ("#lock#", "hidden"),
]


def umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def shell(root: Path, command: str, **flags: Any) -> str:
    """run_shell's answer in `root`: its output, or the refusal the model would get."""
    from coding_harness.daemon.tools.errors import ToolRefusal
    from coding_harness.daemon.tools.shell.run_shell import run_shell

    ctx, _ = make_ctx(root, **flags)
    try:
        return run(run_shell(ctx, command))
    except ToolRefusal as refusal:  # the registry turns these into results
        return str(refusal)
