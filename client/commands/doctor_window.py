"""`harness doctor`: the default model's context window, as the running daemon reads it
from the model's server (`provider.window`); never starts a daemon.

A window too small for a useful turn is a problem whose fix is the server's own
setting (`OLLAMA_CONTEXT_LENGTH`, `llama-server -c`); otherwise one note.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from coding_harness.client.commands.doctor_config import Finding, info, problem
from coding_harness.protocol import errors, methods, paths
from coding_harness.protocol.client import DaemonUnreachable, connect
from coding_harness.protocol.version import __version__

WINDOW_TIMEOUT = 8.0


def check_window(env: Mapping[str, str], cwd: Path) -> list[Finding]:
    try:
        with connect(paths.socket_path(dict(env)), timeout=2.0) as conn:
            hello = conn.initialize("harness-doctor", __version__, approvals=False)
            sent = {name: env[name] for name in hello.get("key_env") or [] if env.get(name)}
            found = conn.request(
                methods.PROVIDER_WINDOW, {"cwd": str(cwd), "env": sent}, WINDOW_TIMEOUT
            )
    except (DaemonUnreachable, errors.RpcError):
        return []  # no daemon, or an older one: the daemon's own line says so
    line = (
        f"context window of {found['provider']} ({found['model']}): "
        f"{found['tokens']:,} tokens ({found['source']})"
    )
    if found.get("advice"):
        return [problem(line, str(found["advice"]).split("; ", 1)[-1])]
    return [info(line + ("; small-window budget" if found.get("small") else ""))]
