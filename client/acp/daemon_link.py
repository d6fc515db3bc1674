"""The bridge's one connection to the daemon: reach it (starting it), introduce itself.

The daemon is started the way every `harness` command starts it (the launcher,
run in a thread since it polls), then the bridge opens its own asyncio
connection and sends `initialize` with the capabilities it will use: approvals
(the editor answers them), and `read_text_file` when the editor offered to read
its buffers. A daemon that cannot be reached is a `DaemonUnreachable` whose text
says why and what to do.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from coding_harness.client.acp.peer import Dispatch, Peer, PeerClosed, RpcFailure
from coding_harness.client.session.config_defaults import key_names
from coding_harness.client.session.setup import key_env
from coding_harness.protocol import methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import PROTOCOL_VERSION, __version__

STREAM_LIMIT = 32 * 1024 * 1024


def _start_daemon() -> None:
    """Block until a daemon answers on the socket, starting one if none does."""
    from coding_harness.client.session.launcher import connect_or_start

    connect_or_start(paths.socket_path()).close()


async def open_daemon(dispatch: Dispatch, *, editor: str, read_files: bool) -> Peer:
    """An initialized connection to the daemon; its reader runs in the background."""
    try:
        await asyncio.to_thread(_start_daemon)
        reader, writer = await asyncio.open_unix_connection(
            str(paths.socket_path()), limit=STREAM_LIMIT
        )
    except (DaemonUnreachable, OSError) as exc:
        raise DaemonUnreachable(
            f"cannot reach the coding-harness daemon: {exc}; "
            "run `harness daemon start` or `harness doctor` in a terminal"
        ) from exc
    peer = Peer(reader, writer, dispatch, name="daemon").start()
    capabilities = {
        "approvals": True,
        "stream": True,
        "notices": True,
        "read_text_file": read_files,
    }
    client = {"name": f"harness-acp ({editor})", "version": __version__, "pid": os.getpid()}
    try:
        await peer.request(
            methods.INITIALIZE,
            {"protocol": PROTOCOL_VERSION, "client": client, "capabilities": capabilities},
            timeout=30,
        )
    except (RpcFailure, PeerClosed, TimeoutError) as exc:
        await peer.close()
        raise DaemonUnreachable(f"the daemon refused the bridge: {exc}") from exc
    return peer


def session_keys(cwd: str) -> dict[str, str]:
    """The API keys the user's profiles name, from the environment the editor gave us."""
    return key_env(key_names(paths.home_dir(), Path(cwd)))


def submit_keys(names: Any) -> dict[str, str]:
    return (
        key_env([name for name in names if isinstance(name, str)])
        if isinstance(names, list)
        else {}
    )
