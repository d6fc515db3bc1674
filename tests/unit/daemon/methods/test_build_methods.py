"""The method table over one MethodParts, and the methods' place below the app.

The handlers reach the daemon only through `MethodParts`: no module under
daemon/methods/ imports daemon/app.py, not even for the type checker, so the
composition root depends on the methods and never the reverse.
"""

from __future__ import annotations

import ast
from pathlib import Path

from coding_harness.daemon import methods
from coding_harness.daemon.methods import build_methods
from coding_harness.protocol import methods as m
from tests.unit.daemon.methods.conftest import Rig

SERVED = [
    m.INITIALIZE,
    m.DAEMON_STATUS,
    m.DAEMON_RELOAD,
    m.DAEMON_SHUTDOWN,
    m.STATS_GET,
    m.SESSION_CREATE,
    m.SESSION_LIST,
    m.SESSION_ATTACH,
    m.SESSION_DETACH,
    m.SESSION_SUBMIT,
    m.SESSION_CANCEL,
    m.SESSION_HISTORY,
    m.SESSION_RESET,
    m.SESSION_CLOSE,
    m.SESSION_REMOVE,
    m.SESSION_PRUNE,
    m.SESSION_APPEND,
    m.SESSION_CONFIGURE,
    m.SESSION_CONTEXT,
    m.SESSION_MAP,
    m.SESSION_COMPACT,
    m.PLAN_GET,
    m.WORKTREE_LIST,
    m.WORKTREE_DIFF,
    m.WORKTREE_MERGE,
    m.WORKTREE_REMOVE,
    m.QUEUE_SUBMIT,
    m.QUEUE_LIST,
    m.QUEUE_CANCEL,
    m.SKILLS_LIST,
    m.APPROVAL_RESPOND,
    m.PROVIDER_LIST,
    m.PROVIDER_USE,
    m.MODEL_USE,
    m.MODEL_LIST,
    m.PROVIDER_DISCOVER,
    m.PROVIDER_WINDOW,
    m.MEMORY_GET,
    m.MEMORY_SET,
    m.SESSION_UNDO,
    m.SESSION_CHECKPOINTS,
    m.MCP_LIST,
    m.MCP_RESTART,
    m.HUB_SESSIONS,
]
APP = "coding_harness.daemon.app"


def test_every_method_is_served_and_only_the_long_waits_are_detached(rig: Rig) -> None:
    table = build_methods(rig.parts)
    assert table.names() == sorted(SERVED)
    # A compaction (a model call), an MCP restart (a server start), a model listing (a
    # model server's answer), the window's look-up and the team hub's database may take long.
    assert table.detached == {
        m.SESSION_COMPACT,
        m.MCP_RESTART,
        m.MODEL_LIST,
        m.PROVIDER_WINDOW,
        m.HUB_SESSIONS,
        m.QUEUE_SUBMIT,
        m.QUEUE_LIST,
        m.QUEUE_CANCEL,
    }


def _imports(path: Path) -> set[str]:
    """Every module a file imports, at any depth (TYPE_CHECKING blocks and functions too)."""
    package = "coding_harness.daemon.methods"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the methods package (or above it)
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def test_no_method_module_imports_the_app() -> None:
    folder = Path(methods.__file__).parent
    offenders = sorted(path.name for path in folder.rglob("*.py") if APP in _imports(path))
    assert offenders == []
