"""Big MCP messages are parsed outside the daemon: the transports' side of `condense.py`.

A message of a few megabytes (a tool list near the 4 MiB cap, a long tool
result) takes most of a second to parse and validate, all of it holding the
interpreter lock, so a worker thread would stall every session as much. A
message past `CONDENSE_ABOVE` bytes is instead written to a short-lived child
(`python -I -m coding_harness.daemon.mcp.condense`, no secret in its
environment, killed past `CONDENSE_TIMEOUT`), and what the daemon parses is
the child's answer, read no further than `MAX_CONDENSED` bytes.

Each connection has a `Condenser`: the transport tells it the requests it
sends (`sent`), so that the child knows which answer is a tool list; its random
`token` marks the listings the child made (`listing`), which a server cannot
forge. `largest_parsed` is the biggest message the daemon parsed itself.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import subprocess
import sys
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import anyio

from coding_harness.daemon.mcp.condense import LISTING_KEY
from coding_harness.daemon.mcp.limits import size_text

log = logging.getLogger(__name__)

# Bytes of one message the daemon parses in place: about 40 ms of the event loop.
CONDENSE_ABOVE = 256 * 1024
# What the child may answer: a listing within the caps is about a megabyte at most.
MAX_CONDENSED = 2 * 1024 * 1024
CONDENSE_TIMEOUT = 30.0
MODULE = "coding_harness.daemon.mcp.condense"
IN_FLIGHT_KEPT = 1000  # request ids remembered; an older one unanswered is forgotten
_ENV_KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")


class CondenseFailed(RuntimeError):
    """The child failed, ran too long or answered too much: the message is not delivered."""


class Condenser:
    """One connection's side of the condensing child."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self.token = secrets.token_hex(16)
        self.largest_parsed = 0  # bytes
        self._methods: OrderedDict[str | int, str] = OrderedDict()

    def sent(self, ident: Any, method: str) -> None:
        """A request went to the server: its answer is expected under `ident`."""
        if isinstance(ident, str | int):
            self._methods[ident] = method
            while len(self._methods) > IN_FLIGHT_KEPT:
                self._methods.popitem(last=False)

    def answered(self, ident: Any) -> None:
        if isinstance(ident, str | int):
            self._methods.pop(ident, None)

    def parsed_here(self, size: int) -> None:
        self.largest_parsed = max(self.largest_parsed, size)

    def listing(self, meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The child's record of a tool list page (notes, left out), if this one is its."""
        found = (meta or {}).get(LISTING_KEY)
        if isinstance(found, dict) and found.get("token") == self.token:
            return found
        return None

    async def condense(self, raw: bytes, methods: Mapping[Any, str] | None = None) -> bytes:
        """The message to parse instead of `raw` (empty: nothing to deliver)."""
        pending = self._methods if methods is None else methods
        header = {"token": self.token, "methods": [[k, v] for k, v in pending.items()]}
        began = time.monotonic()
        said, message = await _run_child(json.dumps(header).encode() + b"\n" + raw)
        log.info(
            "MCP server %s: %s; condensed in a child process from %s to %s in %.2f s",
            self.name,
            said,
            size_text(len(raw)),
            size_text(len(message)),
            time.monotonic() - began,
        )
        return message


async def _run_child(data: bytes) -> tuple[str, bytes]:
    env = {name: os.environ[name] for name in _ENV_KEPT if name in os.environ}
    process = await anyio.open_process(
        [sys.executable, "-I", "-m", MODULE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd="/",
    )
    try:
        with anyio.fail_after(CONDENSE_TIMEOUT):
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(_feed, process, data)
                output = await _read_capped(process)
            await process.wait()
    except TimeoutError:
        raise CondenseFailed(f"the condensing child ran past {CONDENSE_TIMEOUT:g} s") from None
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    if len(output) > MAX_CONDENSED:
        raise CondenseFailed(f"the condensing child answered more than {size_text(MAX_CONDENSED)}")
    said, _, message = output.partition(b"\n")
    if process.returncode != 0 or not output.endswith(b"\n"):
        raise CondenseFailed(f"the condensing child failed (exit status {process.returncode})")
    return said.decode(errors="replace"), message.strip()


async def _feed(process: Any, data: bytes) -> None:
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        async with process.stdin:
            await process.stdin.send(data)


async def _read_capped(process: Any) -> bytes:
    """The child's output, up to one byte past `MAX_CONDENSED` (then it is killed)."""
    output = bytearray()
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError):
        while len(output) <= MAX_CONDENSED:
            output += await process.stdout.receive(65536)
    if len(output) > MAX_CONDENSED:
        process.kill()
    return bytes(output[: MAX_CONDENSED + 1])
