"""`harness acp`: serve the Agent Client Protocol on standard input and output.

Standard output carries ACP messages and nothing else: the process's file
descriptor 1 is pointed at standard error before anything runs, and the
messages go to a private duplicate of the original, so a stray print or a
library's warning can never corrupt the stream. Logs go to standard error.
The process ends when the editor closes its input; the daemon's sessions, and
any turn still running in them, go on.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from coding_harness.client.acp.bridge import Bridge
from coding_harness.client.acp.handlers import NOTIFICATIONS, REQUESTS
from coding_harness.client.acp.peer import Peer
from coding_harness.protocol import exit_codes

USAGE = "usage: harness acp   (an ACP agent on stdin/stdout, started by an editor)"
STREAM_LIMIT = 64 * 1024 * 1024
EXIT_GRACE = 5.0  # seconds the answers still being worked out get once the input ends


def main(argv: list[str]) -> int:
    if argv:
        print(USAGE, file=sys.stderr)
        return exit_codes.OK if argv[0] in ("-h", "--help") else exit_codes.BAD_ARGUMENTS
    wanted = os.environ.get("CODING_HARNESS_ACP_DEBUG", "")
    level = {"": logging.WARNING, "info": logging.INFO}.get(wanted, logging.DEBUG)
    logging.basicConfig(stream=sys.stderr, level=level, format="harness acp: %(message)s")
    sys.stdout.flush()
    messages_fd = os.dup(1)
    os.dup2(2, 1)  # anything else written to fd 1 lands on standard error
    sys.stdout = sys.stderr
    try:
        asyncio.run(serve(messages_fd))
    except KeyboardInterrupt:
        return exit_codes.INTERRUPTED
    return exit_codes.OK


async def serve(messages_fd: int) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=STREAM_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(messages_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    bridge = Bridge(REQUESTS, NOTIFICATIONS)
    editor = Peer(reader, writer, bridge.from_editor, name="editor")
    bridge.editor = editor
    try:
        await editor.run()
        await editor.finish_handling(EXIT_GRACE)
    finally:
        await editor.close()
        if bridge.daemon is not None:
            await bridge.daemon.close()
