"""A REPL line ending in `&`: the task runs in a session of its own, in the background.

As in Claude Code, `fix the flaky test &` hands the task off and gives the
prompt back at once: a new session in the REPL's folder, with its provider,
model and permission mode, gets the task (`@PATH` attachments read as for any
task) as a background turn (`options.background`, so its end is notified), and
the REPL says its short id and how to follow it. The REPL's own session and its
conversation are left as they were. A line that is only `&`, or ends in `&&`
(a shell habit), is an ordinary task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coding_harness.client.render.sanitize import field
from coding_harness.client.render.style import Style
from coding_harness.client.repl.mentions import attach_mentions
from coding_harness.client.session.setup import key_env
from coding_harness.protocol import errors, methods
from coding_harness.protocol.client import DaemonUnreachable


def wanted(line: str) -> bool:
    text = line.strip()
    return text.endswith("&") and not text.endswith("&&") and bool(text[:-1].strip())


def fire(conn: Any, session: dict[str, Any], line: str, style: Style) -> str | None:
    """Start the line's task in a new session; its short id (None after saying why not)."""
    cwd = str(session.get("cwd") or Path.cwd())
    task = attach_mentions(line.strip()[:-1].strip(), Path(cwd), style.line)
    env = key_env(list(session.get("key_env") or []))
    mode = session.get("mode") or (session.get("options") or {}).get("mode")
    params: dict[str, Any] = {
        "cwd": cwd,
        "provider": session.get("provider"),
        "model": session.get("model"),
        "env": env,
    }
    if mode:
        params["options"] = {"mode": mode}
    try:
        created = conn.request(methods.SESSION_CREATE, params)
        sid = str(created["session"])
        submit = {"session": sid, "text": task, "options": {"background": True}, "env": env}
        conn.request(methods.SESSION_SUBMIT, submit)
    except (errors.RpcError, DaemonUnreachable) as exc:
        style.line(f"not started in the background: {exc}", "red")
        return None
    short = sid.rsplit("-", 1)[-1]
    style.line(
        f"running in the background as session {field(short)}: `harness logs {short} -f` "
        f"follows it, `harness attach {short}` takes part, `harness wait {short}` waits",
        "dim",
    )
    return short
