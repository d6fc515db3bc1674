"""The bridge's one connection to the daemon: reach it (starting it), introduce itself.

The daemon is started the way every `harness` command starts it (the launcher,
run in a thread since it polls), then the bridge opens its own asyncio
connection and sends `initialize` with the capabilities it will use: approvals
(the editor answers them), `read_text_file` when the editor offered to read
its buffers, and `write_text_file` when it also offered to write them. A daemon
that cannot be reached is a `DaemonUnreachable` whose text
says why and what to do.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from coding_harness.client.acp.approvals import asks_for_others
from coding_harness.client.acp.peer import Dispatch, Peer, PeerClosed, RpcFailure
from coding_harness.client.session.config_defaults import key_names
from coding_harness.client.session.setup import key_env
from coding_harness.protocol import methods, paths
from coding_harness.protocol.client import DaemonUnreachable
from coding_harness.protocol.version import PROTOCOL_VERSION, __version__

STREAM_LIMIT = 32 * 1024 * 1024
ATTEMPTS = 3
RETRY_PAUSE = 0.3


def _start_daemon() -> None:
    """Block until a daemon answers on the socket, starting one if none does."""
    from coding_harness.client.session.launcher import connect_or_start

    connect_or_start(paths.socket_path()).close()


async def open_daemon(
    dispatch: Dispatch, *, editor: str, read_files: bool, write_files: bool = False
) -> Peer:
    """An initialized connection to the daemon; its reader runs in the background.

    A daemon that is going away as we connect (it was just killed and another is
    starting) can accept the launcher's probe and refuse the next connection: that
    is tried again a few times before it counts."""
    for attempt in range(ATTEMPTS):
        try:
            return await _open_once(
                dispatch, editor=editor, read_files=read_files, write_files=write_files
            )
        except _Refused as exc:
            if attempt == ATTEMPTS - 1:
                raise DaemonUnreachable(_fix(exc.__cause__ or exc)) from exc
            await asyncio.sleep(RETRY_PAUSE)
    raise AssertionError("unreachable")


class _Refused(Exception):
    """The socket refused or dropped us right after the daemon answered the launcher."""


async def _open_once(
    dispatch: Dispatch, *, editor: str, read_files: bool, write_files: bool = False
) -> Peer:
    try:
        await asyncio.to_thread(_start_daemon)
    except (DaemonUnreachable, OSError) as exc:
        raise DaemonUnreachable(_fix(exc)) from exc
    try:
        reader, writer = await asyncio.open_unix_connection(
            str(paths.socket_path()), limit=STREAM_LIMIT
        )
    except OSError as exc:
        raise _Refused(str(exc)) from exc
    peer = Peer(reader, writer, dispatch, name="daemon").start()
    capabilities = {
        "approvals": True if asks_for_others(os.environ) else "own",
        "stream": True,
        "notices": True,
        "read_text_file": read_files,
        "write_text_file": read_files and write_files,
    }
    client = {"name": f"harness-acp ({editor})", "version": __version__, "pid": os.getpid()}
    try:
        await peer.request(
            methods.INITIALIZE,
            {"protocol": PROTOCOL_VERSION, "client": client, "capabilities": capabilities},
            timeout=30,
        )
    except PeerClosed as exc:
        await peer.close()
        raise _Refused(str(exc)) from exc
    except (RpcFailure, TimeoutError) as exc:
        await peer.close()
        raise DaemonUnreachable(f"the daemon refused the bridge: {exc}") from exc
    return peer


def _fix(exc: BaseException) -> str:
    return (
        f"cannot reach the coding-harness daemon: {exc}; "
        "run `harness daemon start` or `harness doctor` in a terminal"
    )


def session_keys(cwd: str) -> dict[str, str]:
    """The API keys the user's profiles name, from the environment the editor gave us."""
    return key_env(key_names(paths.home_dir(), Path(cwd)))


def submit_keys(names: Any) -> dict[str, str]:
    return (
        key_env([name for name in names if isinstance(name, str)])
        if isinstance(names, list)
        else {}
    )
